/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rotation.h - close the datapath's current window (maps.h protocol).
 *
 * Per rotation, with old = the window the datapath writes now:
 *   1. fs_ctl.window_seq = old + 1: new packets go to the other slot;
 *   2. update fs_barrier: returns after an RCU grace period, so every
 *      program that could still write old's slot has finished;
 *   3. drain the report ring buffer: every report of old is filed;
 *   4. read old's slot (chunks, and the totals in fs_hot tagged old,
 *      every CPU) into the history, stored in a file first (winstore.h);
 *   5. fs_ctl.done_seq = old + 1: the window is finished (stored, or
 *      counted lost);
 *   6. zero old's slot's sketch chunks, which become current again at
 *      old + 2.  The totals are not zeroed: they share fs_hot's per-CPU
 *      line with counters the datapath writes in every window, and the
 *      datapath restarts a slot's totals itself on the first packet of
 *      its next window, by their tag (maps.h, "Totals reset by epoch").
 * Report thresholds need no step: the datapath derives each packet's from
 * its window's running totals and fs_ctl.hh_phi_q32, written once before
 * attach (cms.h, "Heavy-hitter reporting").
 * Each packet lands in exactly one slot and that slot is read exactly once
 * before it is zeroed (its totals: before the datapath restarts them), so
 * the windows' totals add up to every packet sent.
 *
 * Adoption.  A daemon that takes over a pinned datapath (loader.h) finds
 * the protocol where its predecessor left it, at any step, and
 * fsd_rotation_adopt() finishes that rotation from fs_ctl: done_seq <
 * window_seq means steps 1-4 may have run but not 5, so window
 * window_seq - 1 is still whole in its slot (nothing zeroes it before
 * step 5): it is folded and stored now, its reports being still in the
 * pinned ring buffer or filed already.  done_seq == window_seq means
 * step 6 may have stopped half-way: the slot is zeroed again.  The
 * current window goes on from fs_ctl.window_start_ns and holds every
 * packet that arrived while no daemon ran, so its first close by the new
 * daemon counts them: the windows' totals stay exact across the kill.
 *
 * Steps 4 and 6 skip a legacy map that a fresh datapath made at one
 * element (sketch_kind.h, "Legacy maps"): nothing writes it, so there is
 * nothing to read and nothing to zero; an adopted earlier release's,
 * whole, is read and zeroed like the rest.
 *
 * Zeroing a slot (step 6) rewrites whole per-CPU map elements, the only
 * write user space has.  That is safe because every slot starts on a chunk
 * boundary (the slot strides of cms.h and hll.h), so no element holds
 * cells or registers of the live slot.  fs_hot is never written here.
 */
#ifndef FLOWSKETCHD_ROTATION_H
#define FLOWSKETCHD_ROTATION_H

#include <stdbool.h>
#include <stddef.h>
#include "history.h"
#include "winstore.h"

struct ring_buffer;

struct fsd_rotation {
	struct fs_ctl *ctl;
	struct fs_sketch_params params;
	int sketch_fd[FS_NDPMAPS];	/* by datapath map (sketch_kind.h) */
	/* Read, folded and zeroed: every map but a legacy one that holds
	 * no slot (fs_dp_map_folded(), from the map's size at init). */
	bool folded[FS_NDPMAPS];
	int hot_fd, barrier_fd, barrier_inner_fd;
	unsigned int ncpus;
	void *value;			/* one element, all CPUs: lookups */
	void *zeros;			/* one element of zeros, all CPUs */
	__u64 seq;			/* the window the datapath writes */
	__u64 start_ns;			/* when it began, fsd_now_ns() */
	struct fs_window_totals last;	/* the last window closed */
	__u64 errors;			/* rotations that lost a window */
	bool dirty;			/* dirty_slot awaits its zeroing */
	__u32 dirty_slot;
	__u64 postponed;		/* rotations put off: slot not clean */
	__u64 late;			/* rotations >= FSD_LATE_NS late */
	__u64 late_max_ns;
	struct fsd_winstore *store;	/* where finished windows are kept */
	/*
	 * Every map access of a rotation goes through these two: reads of
	 * the closed slot, its zeroing and the barrier.  fsd_rotation_init()
	 * sets bpf_map_lookup_elem and bpf_map_update_elem; a test replaces
	 * them to make one step fail (tests/unit/test_rotation.c), which is
	 * how "a failure loses that window only" is checked against the
	 * real datapath.  Nothing else should touch them.
	 */
	int (*map_lookup)(int fd, const void *key, void *value);
	int (*map_update)(int fd, const void *key, const void *value,
			  __u64 flags);
};

/* How often the barrier is tried before a window is given up. */
#define FSD_BARRIER_TRIES 3
/* A rotation this late (after its timer's due time) is counted late. */
#define FSD_LATE_NS 10000000ULL

/* The maps a rotation works on: one frontend's (frontends/loader.h,
 * datapath/tp_object.h). */
struct fsd_rotation_maps {
	struct fs_ctl *ctl;		/* fs_ctl[0], mmapped */
	int sketch_fd[FS_NDPMAPS];	/* map fs_dp_maps[k].map */
	int hot_fd, barrier_fd, barrier_inner_fd;
	unsigned int ncpus;
	bool adopted;			/* the window goes on from fs_ctl */
};

int fsd_rotation_init_maps(struct fsd_rotation *r, const struct fsd_rotation_maps *m,
			   const struct fs_sketch_params *p, double hh_fraction);
void fsd_rotation_free(struct fsd_rotation *r);

/*
 * Close the current window into h.  0, or -errno when the window is lost
 * (counted in errors, nothing of it in the history) or, when the next
 * slot could not be cleaned, the rotation put off (counted in postponed;
 * the window goes on).  A lost window never leaks into a later one: its
 * slot is zeroed after a barrier, now or before the datapath's next use
 * of it.
 */
int fsd_rotate(struct fsd_rotation *r, struct fsd_history *h,
	       struct ring_buffer *rb);
/*
 * The first window an adopting daemon's history holds pending: the
 * current one, or the one before it when done_seq says it is unfinished
 * and store has no file for it (a daemon killed between the file's
 * rename and done_seq's store finished it; done_seq is corrected).
 */
__u64 fsd_rotation_first_pending(struct fs_ctl *ctl, const struct fsd_winstore *store);

/*
 * Finish what the adopted datapath's last daemon left of its rotation
 * (above), into h, whose pending windows start at fs_ctl.done_seq;
 * prev_end_ns: when the newest stored window ended (0: none), the start
 * of a window folded here.  0 or -errno (a window lost, counted).
 */
int fsd_rotation_adopt(struct fsd_rotation *r, struct fsd_history *h,
		       struct ring_buffer *rb, __u64 prev_end_ns,
		       __u64 window_ns);
/* The timer fired late_ns after the rotation was due: count it. */
void fsd_rotation_note_late(struct fsd_rotation *r, __u64 late_ns);

/*
 * The daemon's clock, CLOCK_MONOTONIC in nanoseconds: windows are timed
 * and spans selected with it, so that a step of the wall clock (NTP at
 * boot) neither empties a span nor makes a window end before it starts.
 */
__u64 fsd_now_ns(void);
/* A time of fsd_now_ns() as wall-clock (CLOCK_REALTIME) nanoseconds, as
 * the wall clock reads now: for answers only. */
__u64 fsd_wall_ns(__u64 mono_ns);

#endif /* FLOWSKETCHD_ROTATION_H */
