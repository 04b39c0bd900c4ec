/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * history.h - the finished windows the daemon keeps, and span queries.
 *
 * A ring of the last `capacity` windows, each the sketch the datapath built
 * during it (merged over CPUs) and the flows it reported as heavy-hitter
 * candidates.  Nothing here touches BPF: the rotation fills a window's
 * sketch from the maps, the ring-buffer callback files candidates, and the
 * queries are pure functions of the stored sketches (and are unit-tested
 * as such).
 *
 * Candidates are filed by window sequence number.  Reports of the window
 * being closed still arrive after the datapath has moved to the next one
 * (the daemon drains the ring buffer after the flip), so there is one
 * pending set per datapath slot: pending[seq % FS_NSLOTS] collects window
 * seq, and closing seq hands its set to the finished window.
 *
 * A span of k windows is answered from the sum of their sketches: Count-Min
 * sketches add cell by cell into the sketch of the concatenated stream, so
 * a candidate's estimate over the span (min over rows of the summed cells)
 * is >= its true count, at most the sum of its per-window estimates, and
 * within eps * (span total) of the truth with probability >= 1 - delta,
 * the very bound of one sketch (summing k per-window minima would only
 * give that with probability 1 - k * delta).  HyperLogLogs merge by
 * register max into the sketch of the union.
 */
#ifndef FLOWSKETCHD_HISTORY_H
#define FLOWSKETCHD_HISTORY_H

#include <stddef.h>
#include "sketch.h"
#include "candidates.h"
#include "topk.h"

struct fsd_window {
	__u64 seq;
	__u64 start_ns;			/* CLOCK_REALTIME */
	__u64 end_ns;
	struct fs_sketch sketch;	/* sketch.totals: the window's totals */
	struct fsd_candidates candidates;
};

struct fsd_history {
	struct fs_sketch_params params;
	struct fsd_window *ring;
	__u32 capacity;			/* windows kept */
	__u32 count;			/* finished windows held, <= capacity */
	__u32 next;			/* ring index the next window goes to */
	__u32 candidate_limit;
	struct fsd_candidates pending[FS_NSLOTS];
	__u64 pending_seq[FS_NSLOTS];
	struct fs_sketch scratch;	/* span sums */
	struct fs_window_totals totals;	/* every finished window, ever */
	__u64 windows_finished;
	__u64 windows_dropped;
	__u64 stray_reports;		/* reports of no pending window */
	__u64 candidate_overflow;	/* reports refused: set full */
};

/* What a span query covered. */
struct fsd_span {
	__u32 windows;			/* finished windows summed (may be
					   fewer than asked right after start) */
	__u64 start_ns;
	__u64 end_ns;
	struct fs_window_totals totals;
	__u32 candidates;		/* distinct candidates in the span */
};

/*
 * Keep `capacity` windows (>= 1); the datapath's current window is
 * first_seq.  0, -EINVAL, -ENOMEM.
 */
int fsd_history_init(struct fsd_history *h, const struct fs_sketch_params *p,
		     __u32 capacity, __u32 candidate_limit, __u64 first_seq);
void fsd_history_free(struct fsd_history *h);

/*
 * File a report of window seq: 1 new candidate, 0 already known, -ESRCH
 * for a window that is not pending (counted in stray_reports), -ENOSPC
 * when the window's set is full, -ENOMEM.
 */
int fsd_history_add_candidate(struct fsd_history *h, __u64 seq,
			      const struct fs_flow_key *key, __u64 hash);

/*
 * Closing a window is two steps so that the sketch is filled in place,
 * without a copy: fsd_history_begin() hands out the zeroed sketch of the
 * ring entry about to be overwritten (the oldest once the ring is full),
 * the caller folds the datapath's slot into it, and fsd_history_commit()
 * publishes it with that window's candidates.  Once the ring is full the
 * entry handed out is the oldest window, so no query may run between the
 * two calls (the daemon is single-threaded).  begin: 0 or -ENOMEM;
 * commit: 0, or -EINVAL when seq is not the oldest pending window.
 */
int fsd_history_begin(struct fsd_history *h, struct fs_sketch **sketch);
int fsd_history_commit(struct fsd_history *h, __u64 seq, __u64 start_ns,
		       __u64 end_ns);

/* Give up window seq (the oldest pending) when it could not be read:
 * its candidates are dropped and the next window becomes the oldest. */
void fsd_history_drop(struct fsd_history *h, __u64 seq);

/* The i-th newest finished window (0: the last one), or NULL. */
const struct fsd_window *fsd_history_window(const struct fsd_history *h,
					    __u32 i);

/*
 * Top flows over the newest `windows` windows into t (initialized by the
 * caller; fsd_topk_finish() afterwards): every candidate of the span,
 * estimated in the span's summed sketch.  0, -ERANGE when windows is 0 or
 * more than the history keeps, -ENOMEM.
 */
int fsd_history_top(struct fsd_history *h, __u32 windows, struct fsd_topk *t,
		    struct fsd_span *span);

/* Distinct flows, sources, destinations over the span (indexed by
 * enum fs_hll_sketch).  0, -ERANGE. */
int fsd_history_distinct(struct fsd_history *h, __u32 windows,
			 double distinct[FS_HLL_NSKETCH], struct fsd_span *span);

/* Memory the history holds: window sketches, candidate sets, scratch. */
size_t fsd_history_bytes(const struct fsd_history *h);

/*
 * The most fsd_history_bytes() can reach for these arguments of
 * fsd_history_init(): every window's sketch filled and every candidate
 * set, finished and pending, at its limit.  What the daemon checks
 * against its cap before it allocates anything.
 */
size_t fsd_history_max_bytes(const struct fs_sketch_params *p,
			     __u32 capacity, __u32 candidate_limit);

#endif /* FLOWSKETCHD_HISTORY_H */
