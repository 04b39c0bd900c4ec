// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* rotation.c - window flip, barrier, read and zero (rotation.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/crashpoint.h"
#include "base/log.h"
#include "rotation.h"
#include "flowsketch.skel.h"	/* after rotation.h: needs params.h's types */

__u64 fsd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

__u64 fsd_wall_ns(__u64 mono_ns)
{
	struct timespec ts;
	__u64 wall, now = fsd_now_ns();

	clock_gettime(CLOCK_REALTIME, &ts);
	wall = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	return mono_ns <= now ? wall - (now - mono_ns) : wall + (mono_ns - now);
}

/*
 * Is datapath map k (fd) read, folded and zeroed?  A legacy map made at
 * FS_DP_LEGACY_CHUNKS by a fresh datapath is not: nothing writes it
 * (sketch_kind.h, "Legacy maps").  Its size is the kernel's word, the
 * pinned map's when adopted.  A map whose size cannot be read is folded,
 * as every map was before: its read then fails loudly, not silently.
 */
static bool map_folded(enum fs_dp_map k, int fd, const struct fs_sketch_params *p)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	if (!fs_dp_maps[k].legacy)
		return true;
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return true;
	return fs_dp_map_folded(k, p, FS_NSLOTS, info.max_entries);
}

int fsd_rotation_init_maps(struct fsd_rotation *r, const struct fsd_rotation_maps *l,
			   const struct fs_sketch_params *p, double hh_fraction)
{
	size_t chunk = FS_CHUNK_BYTES;	/* one lookup buffer serves every map */
	int k;

	_Static_assert(sizeof(struct fs_hot_line) <= FS_CHUNK_BYTES, "and fs_hot");
	memset(r, 0, sizeof(*r));
	r->ctl = l->ctl;
	r->params = *p;
	r->ncpus = l->ncpus;
	r->map_lookup = bpf_map_lookup_elem;
	r->map_update = bpf_map_update_elem;
	memcpy(r->sketch_fd, l->sketch_fd, sizeof(r->sketch_fd));
	for (k = 0; k < FS_NDPMAPS; k++)
		r->folded[k] = map_folded(k, l->sketch_fd[k], p);
	r->hot_fd = l->hot_fd;
	r->barrier_fd = l->barrier_fd;
	r->barrier_inner_fd = l->barrier_inner_fd;
	r->value = calloc(r->ncpus, chunk);
	r->zeros = calloc(r->ncpus, chunk);
	if (!r->value || !r->zeros) {
		fsd_rotation_free(r);
		return -ENOMEM;
	}
	r->seq = __atomic_load_n(&r->ctl->window_seq, __ATOMIC_ACQUIRE);
	r->start_ns = l->adopted && r->ctl->window_start_ns ?
		      r->ctl->window_start_ns : fsd_now_ns();
	/* Before attach: the datapath's first packet already has it.  Each
	 * packet's thresholds follow from it and its own window's running
	 * totals (cms.h), so rotation never writes them. */
	__atomic_store_n(&r->ctl->hh_phi_q32, fs_hh_phi_q32(hh_fraction),
			 __ATOMIC_RELEASE);
	return 0;
}

void fsd_rotation_free(struct fsd_rotation *r)
{
	free(r->value);
	free(r->zeros);
	r->value = NULL;
	r->zeros = NULL;
}

/*
 * Read slot's chunks of datapath map k and fold each CPU's copy into s as it
 * comes (s NULL: read only).  The lookup buffer is the only copy: the
 * fold reads it while it is still in this CPU's cache, and no image of
 * the maps is kept, so the daemon's memory does not grow with CPUs times
 * map size.
 */
static int read_chunks(struct fsd_rotation *r, enum fs_dp_map k, __u32 slot,
		       struct fs_sketch *s)
{
	__u32 c = fs_dp_first(k, &r->params, slot) >> fs_dp_maps[k].chunk_shift;
	__u32 end = c + fs_dp_slot_chunks(k, &r->params);
	unsigned int cpu;

	for (; c < end; c++) {
		if (r->map_lookup(r->sketch_fd[k], &c, r->value))
			return -errno;
		for (cpu = 0; s && cpu < r->ncpus; cpu++)
			fs_sketch_add_chunk(s, k, slot, c,
					    (const char *)r->value + cpu * FS_CHUNK_BYTES);
	}
	return 0;
}

/*
 * Zero slot's chunks of datapath map k on every CPU, from a buffer of
 * zeros kept for it (zero is empty for every map, sketch_kind.h).  Slots start on
 * chunk boundaries (chunk.h), so these chunks hold only the closed slot
 * and no write of the datapath, which is on the other slot now, can be
 * lost.
 */
static int zero_chunks(struct fsd_rotation *r, enum fs_dp_map k, __u32 slot)
{
	__u32 c = fs_dp_first(k, &r->params, slot) >> fs_dp_maps[k].chunk_shift;
	__u32 end = c + fs_dp_slot_chunks(k, &r->params);

	for (; c < end; c++)
		if (r->map_update(r->sketch_fd[k], &c, r->zeros, BPF_EXIST))
			return -errno;
	return 0;
}

/* Fold slot into s from the maps (every datapath map folded, every CPU). */
static int read_slot(struct fsd_rotation *r, __u32 slot, struct fs_sketch *s)
{
	int k, err = 0;

	for (k = 0; k < FS_NDPMAPS && !err; k++)
		if (r->folded[k])
			err = read_chunks(r, k, slot, s);
	return err;
}

/*
 * Zero the sketches of slot: its chunks.  Not its totals, which the
 * datapath restarts by their tag (maps.h): a window whose totals were not
 * read (a failed read, a lost window) cannot leak them into the slot's
 * next window, whose packets carry another seq.  The crash point before
 * the last map leaves a slot half zeroed (restart.sh).
 */
static int zero_slot(struct fsd_rotation *r, __u32 slot)
{
	int k, err = 0;

	for (k = 0; k < FS_NDPMAPS && !err; k++) {
		if (!r->folded[k])
			continue;
		if (k == FS_NDPMAPS - 1)
			fsd_crash_point("zeroing");
		err = zero_chunks(r, k, slot);
	}
	return err;
}

/*
 * Window seq's totals into *t: the sum over CPUs of fs_hot's slot totals
 * tagged seq.  A CPU whose tag is another window's had no packet in seq:
 * it adds 0 (maps.h, "Totals reset by epoch").  Read, never written.
 */
static int take_totals(struct fsd_rotation *r, __u64 seq,
		       struct fs_window_totals *t)
{
	const struct fs_hot_line *v = r->value;
	const __u32 slot = (__u32)(seq % FS_NSLOTS), zero = 0;
	unsigned int cpu;

	memset(t, 0, sizeof(*t));
	if (r->map_lookup(r->hot_fd, &zero, r->value))
		return -errno;
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		if (v[cpu].slot[slot].seq != seq)
			continue;
		t->packets += v[cpu].slot[slot].packets;
		t->bytes += v[cpu].slot[slot].bytes;
	}
	return 0;
}

/*
 * The RCU barrier of the rotation protocol (maps.h): a map-in-map update
 * returns after synchronize_rcu(), so once it has succeeded no program
 * that could have seen the old window_seq is still running.  Retried a few
 * times: it fails only when the kernel is short of memory.
 */
static int barrier(struct fsd_rotation *r)
{
	__u32 zero = 0;
	int i, err = 0;

	for (i = 0; i < FSD_BARRIER_TRIES; i++) {
		if (!r->map_update(r->barrier_fd, &zero,
				   &r->barrier_inner_fd, BPF_ANY))
			return 0;
		err = -errno;
	}
	fsd_warn("barrier update failed %d times: %s", FSD_BARRIER_TRIES,
		 strerror(-err));
	return err;
}

/*
 * A slot the datapath may still write cannot be zeroed: a writer late
 * past the zeroing would leak its count into the slot's next window.  So
 * a window lost for want of a barrier leaves its slot dirty, and the slot
 * is cleaned before the datapath returns to it, after a barrier that did
 * succeed.  Returns 0 when no slot is dirty any more.
 */
static int clean_dirty_slot(struct fsd_rotation *r)
{
	int err;

	if (!r->dirty)
		return 0;
	err = barrier(r);
	if (!err)
		err = zero_slot(r, r->dirty_slot);
	if (!err)
		r->dirty = false;
	return err;
}

/* Count a window lost: nothing of it reaches the history. */
static void lose_window(struct fsd_rotation *r, struct fsd_history *h,
			__u64 seq, int err)
{
	fsd_history_drop(h, seq);
	r->errors++;
	fsd_fail(err, "window %llu lost", (unsigned long long)seq);
}

void fsd_rotation_note_late(struct fsd_rotation *r, __u64 late_ns)
{
	if (late_ns < FSD_LATE_NS)
		return;
	r->late++;
	if (late_ns > r->late_max_ns)
		r->late_max_ns = late_ns;
}

/* Drain the reports, and journal what was filed (winstore.h) before
 * anything else: they are out of the ring now. */
static void drain(struct fsd_rotation *r, struct ring_buffer *rb)
{
	ring_buffer__consume(rb);
	fsd_winstore_flush(r->store);
}

/*
 * Store window seq (sketch s) and commit it to h: mapped from its file
 * when it could be stored, from the heap when not.  0 or -errno.
 */
static int commit_window(struct fsd_rotation *r, struct fsd_history *h,
			 __u64 seq, __u64 start, __u64 end, struct fs_sketch *s)
{
	struct fs_window_totals ever = {
		.packets = h->totals.packets + s->totals.packets,
		.bytes = h->totals.bytes + s->totals.bytes,
	};
	struct fsd_window_map m = { 0 };
	struct fs_sketch view;
	__u64 evicted = FSD_NO_SEQ;
	bool stored;
	int err;

	stored = r->store &&
		 !fsd_winstore_put(r->store, seq, start, end, s,
				   &h->pending[seq % FS_NSLOTS], &ever,
				   h->windows_before + h->windows_finished + 1,
				   &view, &m);
	if (stored)
		fsd_crash_point("stored");
	err = fsd_history_commit(h, seq, start, end, stored ? &view : NULL,
				 stored ? &m : NULL, &evicted);
	fsd_crash_point("committed");
	if (err) {
		if (stored) {
			munmap(m.addr, m.len);
			fsd_winstore_drop(r->store, seq);
		}
		return err;
	}
	if (r->store)
		fsd_winstore_drop(r->store, evicted);
	return 0;
}

/*
 * Steps 4-6 for window old in slot: fold, store and commit, mark done,
 * zero.  0 or -errno (the window lost).
 */
static int finish_window(struct fsd_rotation *r, struct fsd_history *h,
			 __u64 old, __u64 start, __u64 end)
{
	__u32 slot = old % FS_NSLOTS;
	struct fs_sketch *s = NULL;
	struct fs_window_totals t;
	int err, ret;

	err = fsd_history_begin(h, &s);
	if (err)
		s = NULL;
	ret = read_slot(r, slot, s);
	if (!err)
		err = ret;
	ret = take_totals(r, old, &t);
	if (!err)
		err = ret;
	if (!err) {
		fs_sketch_add_totals(s, &t);
		err = commit_window(r, h, old, start, end, s);
	}
	/* Stored or lost, the window is finished: only now may its slot
	 * lose its counts (an adopting daemon reads done_seq), and its
	 * candidates' journal go (winstore.h). */
	__atomic_store_n(&r->ctl->done_seq, old + 1, __ATOMIC_RELEASE);
	fsd_crash_point("done");
	fsd_winstore_forget(r->store, old);
	/* Zero even when the window is lost: its counts must not leak into
	 * window old + 2.  A slot whose sketches cannot be zeroed stays
	 * dirty, and is cleaned before the datapath returns to it; its
	 * totals need nothing (take_totals()).  The window itself is whole
	 * in the history by now, so it is kept. */
	ret = zero_slot(r, slot);
	if (ret) {
		r->dirty = true;
		r->dirty_slot = slot;
		if (!err)
			fsd_warn("slot %u of window %llu not zeroed (%s): cleaned before its next use",
				 slot, (unsigned long long)old, strerror(-ret));
	}
	if (err) {
		lose_window(r, h, old, err);
		return err;
	}
	r->last = t;
	fsd_crash_point("zeroed");
	fsd_debug("window %llu: %llu packets, %llu bytes, %u candidates",
		  (unsigned long long)old, (unsigned long long)t.packets,
		  (unsigned long long)t.bytes,
		  fsd_history_window(h, 0)->candidates.count);
	return 0;
}

int fsd_rotate(struct fsd_rotation *r, struct fsd_history *h,
	       struct ring_buffer *rb)
{
	__u64 old = r->seq, start = r->start_ns, now;
	__u32 slot = old % FS_NSLOTS;
	int err;

	/* The slot the datapath moves to must be clean first; if it cannot
	 * be, the current window goes on (a longer window, not a leak). */
	err = clean_dirty_slot(r);
	if (err) {
		r->postponed++;
		return fsd_fail(err, "window %llu extended: slot %u cannot be cleaned",
				(unsigned long long)old, r->dirty_slot);
	}
	now = fsd_now_ns();
	/* The start first: killed between the two, the window goes on with
	 * a later start, rather than two windows sharing one. */
	__atomic_store_n(&r->ctl->window_start_ns, now, __ATOMIC_RELEASE);
	__atomic_store_n(&r->ctl->window_seq, old + 1, __ATOMIC_RELEASE);
	fsd_crash_point("flip");
	r->seq = old + 1;
	r->start_ns = now;
	err = barrier(r);
	if (err) {
		/* Reading now could miss a late writer, zeroing could let one
		 * leak into window old + 2: the window is lost, its slot
		 * cleaned before its next use. */
		r->dirty = true;
		r->dirty_slot = slot;
		__atomic_store_n(&r->ctl->done_seq, old + 1, __ATOMIC_RELEASE);
		fsd_winstore_forget(r->store, old);
		lose_window(r, h, old, err);
		return err;
	}
	drain(r, rb);
	fsd_crash_point("drained");
	return finish_window(r, h, old, start, now);
}

__u64 fsd_rotation_first_pending(struct fs_ctl *ctl, const struct fsd_winstore *store)
{
	__u64 seq = __atomic_load_n(&ctl->window_seq, __ATOMIC_ACQUIRE);

	if (!seq || __atomic_load_n(&ctl->done_seq, __ATOMIC_ACQUIRE) >= seq)
		return seq;
	if (store && fsd_winstore_has(store, seq - 1)) {
		__atomic_store_n(&ctl->done_seq, seq, __ATOMIC_RELEASE);
		return seq;
	}
	return seq - 1;
}

int fsd_rotation_adopt(struct fsd_rotation *r, struct fsd_history *h,
		       struct ring_buffer *rb, __u64 prev_end_ns,
		       __u64 window_ns)
{
	__u64 seq = r->seq, done = __atomic_load_n(&r->ctl->done_seq, __ATOMIC_ACQUIRE);
	__u64 start, end = r->start_ns;

	if (!seq)
		return 0;
	if (done >= seq) {
		/* Window seq - 1 is stored or lost; its zeroing may have
		 * stopped half-way.  No program writes that slot (the flip
		 * was before the last daemon stopped), the barrier is only
		 * clean_dirty_slot()'s habit. */
		r->dirty = true;
		r->dirty_slot = (__u32)((seq - 1) % FS_NSLOTS);
		return clean_dirty_slot(r);
	}
	/* Window seq - 1 is whole in its slot.  It began when the newest
	 * stored window ended, or, with none, one window before its end. */
	start = prev_end_ns && prev_end_ns <= end ? prev_end_ns :
		(end > window_ns ? end - window_ns : 0);
	fsd_info("finishing window %llu, which the previous daemon closed but did not store",
		 (unsigned long long)(seq - 1));
	/* The flip was the predecessor's, long ago as programs go (it died,
	 * this daemon loaded since); the barrier makes sure, as after every
	 * flip, and failing it (out of memory) changes nothing of that. */
	barrier(r);
	drain(r, rb);
	return finish_window(r, h, seq - 1, start, end);
}
