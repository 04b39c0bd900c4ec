/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * loader.h - load the datapath, pin it, attach it; and undo all of it.
 *
 * Everything the daemon changes on the host is recorded here as it is
 * done (maps and program pinned, interfaces attached), and
 * fsd_loader_close() undoes exactly that, whether setup failed half-way
 * or the daemon is stopping: one cleanup path.
 *
 * XDP is attached through BPF links, not through netlink, and each link
 * is pinned (pin_dir/link_IFNAME) beside the maps: counting goes on while
 * no daemon runs (after a SIGKILL, a crash, or a stop with --keep), and
 * the next daemon on the same pin directory adopts it all.
 *
 * Adoption.  A datapath is pinned when pin_dir/params (the pinned .rodata:
 * sketch parameters and hash secret) exists.  fsd_loader_read_pinned()
 * reads it and the sizes of the maps the options size; a new daemon whose
 * options differ is refused before anything changes (or starts afresh
 * with --replace).  Adopting, the new object reuses every pinned map
 * (bpf_map__reuse_fd: same memory, same counts), loads its program with
 * the pinned secret, and moves each pinned link to it with one
 * bpf_link_update(): XDP never stops counting across the change.  A link
 * pinned for an interface the new daemon does not count is detached.
 *
 * Stopping: without --keep, every link is detached (BPF_LINK_DETACH,
 * synchronous) and every pin removed; with it, only the daemon's file
 * descriptors go, and the pins hold everything.
 *
 * --ingress tracepoint.  One link (pin_dir/tp_ingress) holds fs_ingress_tp
 * on tp_btf/netif_receive_skb for all interfaces, and an interface is
 * "attached" while fs_ifaces has it.  A tracing link cannot move to
 * another program, so an adopting daemon keeps the pinned link and with
 * it its predecessor's program, which runs on the same (reused) maps;
 * fs_ifaces is one of them, so the new daemon's interface list is the one
 * it reads.  A datapath pinned in the other mode is refused (or, with
 * --replace, its links are dropped once the new frontend counts).
 *
 * Interfaces come and go while the daemon runs (ifwatch.h decides when):
 * each configured name has one fsd_attachment for the daemon's life, which
 * says whether the program is on it now, on which ifindex, and how often it
 * was put back.  A link whose interface was deleted is defunct but still
 * holds its fd; fsd_loader_gone() closes it, so that nothing of the old
 * interface is kept and a recreated one can be attached afresh.
 */
#ifndef FLOWSKETCHD_LOADER_H
#define FLOWSKETCHD_LOADER_H

#include <stdbool.h>
#include "flowsketch/hash.h"
#include "flowsketch/maps.h"
#include "datapath/ifslots.h"
#include "datapath/object.h"
#include "base/options.h"

struct flowsketch;

enum fsd_iface_state {
	FSD_IFACE_ATTACHED,	/* link_fd holds XDP on ifindex */
	FSD_IFACE_GONE,		/* no interface has the name: nothing held */
	FSD_IFACE_FAILED,	/* ifindex has the name, attaching failed (err) */
};

struct fsd_attachment {
	const struct fsd_iface *iface;	/* the name the operator gave */
	int ifindex;			/* the name's interface now; 0 if gone */
	int link_fd;			/* -1 unless attached */
	bool link_pinned;		/* pin_dir/link_NAME is this link */
	enum fsd_iface_state state;
	__u32 ifslot;			/* its fs_ifcount slot (ifslots.h) */
	unsigned int reattached;	/* attaches after the first one */
	int err;			/* -errno of a failed attach */
};

struct fsd_loader {
	struct fsd_object obj;		/* maps, program, pins (object.h) */
	struct flowsketch *skel;	/* obj's skeleton */
	bool replacing;			/* --replace: old pins are expected */
	bool xdp_generic;
	bool ingress_tp;		/* --ingress tracepoint: no XDP link;
					   "attached" is an fs_ifaces entry */
	int tp_link_fd;			/* the tracepoint's link, or -1;
					   set only with ingress_tp */
	const char *pin_dir;
	/* ifaces[i] follows o->ifaces[i]; n_ifaces are set up. */
	struct fsd_attachment ifaces[FSD_MAX_IFACES];
	unsigned int n_ifaces;
	struct fsd_ifslots ifslots;	/* the per-interface counters */
};

/* The tracepoint ingress frontend's link, pinned under the pin directory
 * (not link_*: that prefix is XDP's, one per interface name). */
#define FSD_TP_LINK "tp_ingress"

enum fsd_pinned_ingress {
	FSD_PINNED_NONE,	/* no link pinned (yet) */
	FSD_PINNED_XDP,		/* link_IFACE pins */
	FSD_PINNED_TP,		/* the FSD_TP_LINK pin */
};

/* What a pinned datapath was loaded with (fsd_loader_read_pinned()). */
struct fsd_pinned {
	struct fs_sketch_params params;	/* secret included */
	unsigned int ringbuf_kib;
	unsigned int blocklist_max;
	enum fsd_pinned_ingress ingress;
	bool no_ifaces;			/* an earlier release's: no ifaces pin */
};

/* Is a datapath pinned under pin_dir? */
bool fsd_loader_is_pinned(const char *pin_dir);
/* Read it: 0, or -errno with a message (a pin of another build, ...). */
int fsd_loader_read_pinned(const char *pin_dir, struct fsd_pinned *out);
/* Can a daemon with options o adopt it?  0, or -ESTALE with one message
 * naming the first option that differs. */
int fsd_loader_check_pinned(const struct fsd_pinned *pin,
			    const struct fsd_options *o);

/* Open, size and load the skeleton (kfunc datapath when the module is
 * there, else, or if that fails, pure BPF); map fs_ctl.  adopt: reuse the
 * maps pinned under o->pin_dir.  0 or -errno. */
int fsd_loader_load(struct fsd_loader *l, const struct fsd_options *o,
		    const struct fs_hash_secret *secret, bool adopt);
/* Pin every map and the program under o->pin_dir (adopted maps are
 * pinned already).  0 or -errno. */
int fsd_loader_pin(struct fsd_loader *l, const char *pin_dir);
/* Attach to every interface of o.  0 or -errno. */
int fsd_loader_attach(struct fsd_loader *l, const struct fsd_options *o);
/* The interface a was attached to is no longer its name's (deleted,
 * renamed, moved to another netns): log "NAME (ifindex N) WHY", drop the
 * link, mark a gone. */
void fsd_loader_gone(struct fsd_loader *l, struct fsd_attachment *a,
		     const char *why);
/* An interface with a's name appeared at ifindex: attach XDP to it in the
 * configured mode.  0, or -errno with a marked failed (and logged). */
int fsd_loader_reattach(struct fsd_loader *l, struct fsd_attachment *a,
			int ifindex);
/* Does a's link still hold XDP on a->ifindex?  False once the kernel
 * detached it (the interface was deleted), or if it cannot tell. */
bool fsd_loader_link_alive(const struct fsd_loader *l,
			   const struct fsd_attachment *a);
/* Detach, unpin, unload: whatever was done; keep: leave links and pins
 * for the next daemon.  Safe on a zeroed loader. */
void fsd_loader_close(struct fsd_loader *l, bool keep);
/* flowsketchd --detach: detach every link pinned under pin_dir and remove
 * every pin (the caller holds the directory's lock).  The number of pins
 * removed, or -errno. */
int fsd_loader_remove_pins(const char *pin_dir);

#endif /* FLOWSKETCHD_LOADER_H */
