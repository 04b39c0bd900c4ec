/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tp_object.h - a tracepoint frontend's BPF object: load, pin, attach,
 * and undo it.
 *
 * The egress frontend (bpf/egress.bpf.c, what the -i interfaces send) and
 * the connection frontend (bpf/conn.bpf.c, who opens TCP connections)
 * each count in maps of their own: their own sketches, windows and
 * counters (maps.h), rotated like the XDP object's by a rotation of their
 * own (frontend.h).  Per-CPU state is only correct while one program
 * context writes it, and each of these runs in whatever context its
 * tracepoint fires in.  What differs between them is described by a
 * struct fsd_tp_kind (tp_kinds.c: the skeleton's open and set-up,
 * the hook, the maps pinned); the object's load and pins are object.h's,
 * the tracepoint link and the pin subdirectory are here.
 *
 * Like the XDP object (loader.h), each calls the kernel module's kfunc for
 * the sketch update when the module is loaded (the kfunc set is
 * registered for tracing programs too, kmod/kfunc.c), else, or if that
 * does not load, the same update in pure BPF: the same state either way.
 *
 * Everything is pinned under PIN_DIR/NAME/ (NAME the kind's name):
 *
 *   ctl KINDS hot stats reports barrier        the object's maps (KINDS:
 *                                              cms hll, sketch_kind.h)
 *   [ifaces ifslot ifcount]                    and, counting -i, its filter
 *                                              and per-interface counts
 *   link                                               the tp_btf link
 *
 * so that, as for XDP (loader.h), counting goes on while no daemon runs
 * and the next daemon adopts the maps.  A tracing link cannot be moved to
 * another program, so an adopting daemon keeps the pinned link, with the
 * program its predecessor loaded on these very maps, and loads its own
 * only to reach them; without a pinned link it attaches its own.
 */
#ifndef FLOWSKETCHD_TP_OBJECT_H
#define FLOWSKETCHD_TP_OBJECT_H

#include <stdbool.h>
#include "object.h"

/* What makes a tracepoint frontend one. */
struct fsd_tp_kind {
	const char *name;	/* "egress": pin and state subdirectory, status */
	const char *direction;	/* "what the interfaces send": the log */
	const char *hook;	/* "tp_btf/net_dev_start_xmit" */
	bool ifaces;		/* counts the -i interfaces (fs_ifaces) */
	/* Its skeleton and pins (fsd_tp_pins, all or the first
	 * FSD_TP_PINS_NO_IFACES); label "NAME ". */
	struct fsd_object_ops ops;
};

struct fsd_tp_object {
	const struct fsd_tp_kind *kind;
	struct fsd_object bpf;		/* its maps and program */
	bool dir_made;			/* by us: removed with the pins */
	int link_fd;			/* -1 until attached */
};

/* The pins of the table above, ctl first (pinned last). */
extern const struct fsd_pin fsd_tp_pins[];
#define FSD_TP_PINS_NO_IFACES (5 + FS_NDPMAPS)
#define FSD_TP_PINS_ALL (FSD_TP_PINS_NO_IFACES + 3)

/* For a kind's open: log that it failed with err (a negative errno), set
 * errno; NULL. */
void *fsd_tp_open_failed(const char *name, int err);

/* Is a datapath of kind k pinned under pin_dir? */
bool fsd_tp_is_pinned(const struct fsd_tp_kind *k, const char *pin_dir);
/* Load (adopt: on the pinned maps) and map fs_ctl.  0 or -errno. */
int fsd_tp_load(struct fsd_tp_object *t, const struct fsd_tp_kind *k,
		const struct fsd_options *o, const struct fs_hash_secret *secret,
		bool adopt);
/* Pin the maps (adopted ones are).  0 or -errno. */
int fsd_tp_pin(struct fsd_tp_object *t);
/* Attach (or keep the pinned link).  0 or -errno. */
int fsd_tp_attach(struct fsd_tp_object *t);
/* Detach, unpin, unload; keep: leave the link and pins. */
void fsd_tp_close(struct fsd_tp_object *t, bool keep);
/* flowsketchd --detach: kind k's pins and their directory.  1 if there
 * were any, 0, or -errno. */
int fsd_tp_remove_pins(const struct fsd_tp_kind *k, const char *pin_dir);

/* The kinds (tp_kinds.c). */
extern const struct fsd_tp_kind fsd_tp_egress;
extern const struct fsd_tp_kind fsd_tp_conn;

#endif /* FLOWSKETCHD_TP_OBJECT_H */
