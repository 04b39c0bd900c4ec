/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ifslots.h - which interface each per-interface counter is.
 *
 * An object that counts the -i interfaces (the XDP object, the egress
 * one) counts what each carried in fs_ifcount[slot], and names its slots
 * in fs_ifslot[0] (maps.h, "Per-interface counts").  A slot belongs to an
 * interface name for as long as a daemon counts that name: an adopting
 * daemon finds each name's slot in the pinned map whatever the order of
 * its -i options, and a name it no longer counts gives its slot up.  A
 * slot given to another name is zeroed first, after an RCU barrier, so
 * that no count of one interface is ever shown as another's and a
 * counter never goes backwards while its name is counted.
 */
#ifndef FLOWSKETCHD_IFSLOTS_H
#define FLOWSKETCHD_IFSLOTS_H

#include <linux/types.h>
#include "flowsketch/maps.h"
#include "options.h"

struct fsd_ifslots {
	struct fs_ifslots *t;		/* fs_ifslot[0], mmapped; NULL: closed */
	int count_fd;			/* fs_ifcount */
	int barrier_fd, barrier_inner_fd;
	unsigned int ncpus;
	__u32 slot[FSD_MAX_IFACES];	/* per -i, after fsd_ifslots_assign() */
};

/* Map fs_ifslot (slot_fd) and keep the other fds (not owned).  0 or -errno. */
int fsd_ifslots_open(struct fsd_ifslots *s, int slot_fd, int count_fd,
		     int barrier_fd, int barrier_inner_fd, unsigned int ncpus);
void fsd_ifslots_close(struct fsd_ifslots *s);

/*
 * Give each of the n interfaces its slot (s->slot[i]): the one the map
 * names it with, else a free one, zeroed; the slots of names not among
 * them are given up.  The caller has first made sure that nothing points
 * a frame at a slot of a name it drops (XDP: every ifindex of the table is
 * cleared here; a tracepoint filter: fsd_tp_iface_keep_only()).
 * 0 or -errno.
 */
int fsd_ifslots_assign(struct fsd_ifslots *s, const struct fsd_iface *ifaces,
		       unsigned int n);

/* XDP: frames received on ifindex count in slot (0: in none). */
void fsd_ifslots_set_ifindex(struct fsd_ifslots *s, __u32 slot, int ifindex);

/* The sum over CPUs of slot's counts.  0 or -errno. */
int fsd_ifslots_read(const struct fsd_ifslots *s, __u32 slot,
		     struct fs_if_counts *out);

#endif /* FLOWSKETCHD_IFSLOTS_H */
