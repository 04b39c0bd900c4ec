/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ifslots.h - which interface each per-interface counter is.
 *
 * An object that counts the -i interfaces (the XDP object, the egress
 * one) counts what each carried in fs_ifcount[slot], and names its slots
 * in fs_ifslot[0] (maps.h, "Per-interface counts").  A slot belongs to an
 * interface name for as long as a daemon counts that name: an adopting
 * daemon finds each name's slot in the pinned map whatever the order of
 * its -i options, and a name it no longer counts gives its slot up once
 * it counts the others.  A slot given up is zeroed, after an RCU
 * barrier, before it is free for another name, so that no count of one
 * interface is ever shown as another's and a counter never goes
 * backwards while its name is counted.
 */
#ifndef FLOWSKETCHD_IFSLOTS_H
#define FLOWSKETCHD_IFSLOTS_H

#include <stdbool.h>
#include <linux/types.h>
#include "flowsketch/maps.h"
#include "base/options.h"

struct fsd_ifslots {
	struct fs_ifslots *t;		/* fs_ifslot[0], mmapped; NULL: closed */
	int count_fd;			/* fs_ifcount */
	int barrier_fd, barrier_inner_fd;
	unsigned int ncpus;
	bool counted;			/* the program on the link counts here
					   (not an earlier release's kept one) */
	__u32 slot[FSD_MAX_IFACES];	/* per -i, after fsd_ifslots_assign() */
};

/* Map fs_ifslot (slot_fd) and keep the other fds (not owned).  0 or -errno. */
int fsd_ifslots_open(struct fsd_ifslots *s, int slot_fd, int count_fd,
		     int barrier_fd, int barrier_inner_fd, unsigned int ncpus);
void fsd_ifslots_close(struct fsd_ifslots *s);

/*
 * Give each of the n interfaces its slot (s->slot[i]): the one the map
 * names it with, else a free one.  Slots of names no -i gives any more
 * are left as they are (their interfaces may still be counted there,
 * and a failed adoption must leave the pinned datapath as it was) for
 * fsd_ifslots_release() once the new daemon counts; only if no slot is
 * free are they given up here first.  0 or -errno.
 */
int fsd_ifslots_assign(struct fsd_ifslots *s, const struct fsd_iface *ifaces,
		       unsigned int n);

/*
 * Once the n interfaces are counted in their slots and nothing points a
 * frame at the slot of a name they do not have (XDP: cleared here; a
 * tracepoint filter: fsd_tp_iface_keep_only() first): give those slots
 * up, zeroed after an RCU barrier.  0 or -errno (then they stay named,
 * for the next start).
 */
int fsd_ifslots_release(struct fsd_ifslots *s, const struct fsd_iface *ifaces,
			unsigned int n);

/* XDP: frames received on ifindex count in slot (0: in none), and in no
 * other slot that still had it. */
void fsd_ifslots_set_ifindex(struct fsd_ifslots *s, __u32 slot, int ifindex);

/* The sum over CPUs of slot's counts.  0 or -errno. */
int fsd_ifslots_read(const struct fsd_ifslots *s, __u32 slot,
		     struct fs_if_counts *out);

#endif /* FLOWSKETCHD_IFSLOTS_H */
