/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * egress.h - the transmit frontend: load, pin, attach, and undo it.
 *
 * bpf/egress.bpf.c counts what the -i interfaces send, in maps of its own
 * (the "out" direction: its own sketches, windows and counters, rotated
 * like the XDP object's by a second fsd_rotation).  Everything is pinned
 * under PIN_DIR/egress/:
 *
 *   ctl cms hll hot stats reports barrier ifaces   the object's maps
 *   link                                            the tp_btf link
 *
 * so that, as for XDP (loader.h), counting goes on while no daemon runs
 * and the next daemon adopts the maps.  A tracing link cannot be moved to
 * another program, so an adopting daemon keeps the pinned link, with the
 * program its predecessor loaded on these very maps, and loads its own
 * only to reach them; without a pinned link it attaches its own.
 *
 * fs_ifaces holds the ifindexes of the -i interfaces attached now (the
 * daemon adds and removes them as interfaces come and go, ifwatch.h).
 */
#ifndef FLOWSKETCHD_EGRESS_H
#define FLOWSKETCHD_EGRESS_H

#include <limits.h>
#include <stdbool.h>
#include "flowsketch/hash.h"
#include "flowsketch/maps.h"
#include "options.h"
#include "rotation.h"

struct egress;

struct fsd_egress {
	struct egress *skel;
	char dir[PATH_MAX - 16];	/* PIN_DIR/egress */
	bool dir_made;			/* by us: removed with the pins */
	bool adopted;
	int link_fd;			/* -1 until attached */
	bool link_pinned;
	unsigned int pinned;		/* bit i: pin i is ours */
	struct fs_ctl *ctl;		/* fs_ctl[0], mmapped */
	unsigned int ncpus;
	__u32 recursion_misses;		/* of the program counting now */
};

/* Is an egress datapath pinned under pin_dir? */
bool fsd_egress_is_pinned(const char *pin_dir);
/* Load (adopt: on the pinned maps) and map fs_ctl.  0 or -errno. */
int fsd_egress_load(struct fsd_egress *e, const struct fsd_options *o,
		    const struct fs_hash_secret *secret, bool adopt);
/* Pin the maps (adopted ones are). 0 or -errno. */
int fsd_egress_pin(struct fsd_egress *e);
/* Attach (or keep the pinned link).  0 or -errno. */
int fsd_egress_attach(struct fsd_egress *e);
/* Count ifindex's frames or stop: 0 or -errno. */
int fsd_egress_iface(struct fsd_egress *e, int ifindex, bool on);
/* What the rotation needs. */
void fsd_egress_rotation_maps(const struct fsd_egress *e,
			      struct fsd_rotation_maps *m);
/* The counting program's run-time figures: recursion misses (a tracing
 * program the kernel skipped because it was already running on the CPU).
 * 0 or -errno. */
int fsd_egress_prog_stats(struct fsd_egress *e, __u64 *recursion_misses);
/* Detach, unpin, unload; keep: leave the link and pins. */
void fsd_egress_close(struct fsd_egress *e, bool keep);
/* flowsketchd --detach: the egress pins and their directory. */
int fsd_egress_remove_pins(const char *pin_dir);

#endif /* FLOWSKETCHD_EGRESS_H */
