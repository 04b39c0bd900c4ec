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
 *
 * Threads.  The event loop alone closes windows and files candidates; span
 * queries run on query threads (workers.h).  h->lock guards the ring of
 * finished windows, and nobody holds it for long: a window is filled in a
 * spare sketch outside the ring and swapped in under the lock
 * (fsd_history_commit), and a query takes the lock for one window at a
 * time, copying what it needs into its own scratch, so closing a window
 * waits for at most one window's merge, never for a whole query.  Windows
 * are named by generation (the count of windows committed before them),
 * so a query that a rotation overtakes still sums each window once: it
 * stops at the first one the ring has dropped meanwhile.  Pending sets are
 * the loop's alone.
 */
#ifndef FLOWSKETCHD_HISTORY_H
#define FLOWSKETCHD_HISTORY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "sketch.h"
#include "candidates.h"
#include "topk.h"

/*
 * A window's sketch held in a read-only shared mapping of its file in the
 * state directory (winstore.h) rather than on the heap: the file is what a
 * restarted daemon reads, and mapping it keeps one copy in memory, not two.
 */
struct fsd_window_map {
	void *addr;			/* NULL: the sketch is on the heap */
	size_t len;
};

#define FSD_NO_SEQ (~0ULL)

struct fsd_window {
	__u64 gen;			/* windows committed before this one */
	__u64 seq;
	__u64 start_ns;			/* CLOCK_MONOTONIC (fsd_now_ns()) */
	__u64 end_ns;
	struct fs_sketch sketch;	/* sketch.totals: the window's totals */
	struct fsd_candidates candidates;
	struct fsd_window_map map;	/* where sketch's cells live, if mapped */
};

struct fsd_history {
	struct fs_sketch_params params;
	/* The ring, count, next, totals.  Queries read under it, commits
	 * write; writers first, so that a stream of queries never keeps a
	 * rotation waiting for more than the one window being read. */
	pthread_rwlock_t lock;
	struct fsd_window *ring;
	__u32 capacity;			/* windows kept */
	__u32 count;			/* finished windows held, <= capacity */
	__u32 next;			/* ring index the next window goes to */
	__u32 candidate_limit;
	struct fsd_candidates pending[FS_NSLOTS];
	__u64 pending_seq[FS_NSLOTS];
	struct fs_sketch spare;		/* the window being filled */
	struct fs_window_totals totals;	/* every finished window, ever */
	__u64 windows_finished;		/* committed or restored here: names
					   windows (gen) in the ring */
	__u64 windows_before;		/* finished by earlier daemons on this
					   datapath and not restored here */
	__u64 windows_dropped;
	__u64 stray_reports;		/* reports of no pending window */
	__u64 candidate_overflow;	/* reports refused: set full */
};

/*
 * Which windows a query sums, newest first: at most `windows` of them
 * (0: as many as are kept), and of those only windows that ended after
 * since_ns (0: any).  A span of S seconds is "the windows that ended in
 * the last S seconds", each whole: they cover at most S plus one window,
 * and a late rotation, which makes a longer window, gives fewer of them.
 */
struct fsd_span_select {
	__u32 windows;
	__u64 since_ns;			/* CLOCK_MONOTONIC */
	/* pinned: only windows committed before generation `newest`, i.e.
	 * those finished when the request arrived; else those at query time. */
	bool pinned;
	__u64 newest;
};

/*
 * A query's own memory: the summed sketch and the set of distinct
 * candidates seen.  One per query thread, allocated once, so queries
 * allocate nothing per request beyond the top-k of their answer.  The set
 * holds at most FSD_QUERY_CANDIDATES keys: a span with more distinct
 * candidates is refused (-E2BIG) rather than allowed to grow without
 * bound.
 */
#define FSD_QUERY_CANDIDATES (1U << 20)

struct fsd_query_scratch {
	struct fs_sketch sum;
	struct fsd_candidates seen;
};

int fsd_query_scratch_init(struct fsd_query_scratch *q,
			   const struct fs_sketch_params *p);
void fsd_query_scratch_free(struct fsd_query_scratch *q);
/* The most a scratch takes (its sketch and a full candidate set). */
size_t fsd_query_scratch_max_bytes(const struct fs_sketch_params *p);

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
 * without a copy and without the lock: fsd_history_begin() hands out the
 * zeroed spare sketch, the caller folds the datapath's slot into it, and
 * fsd_history_commit() swaps it into the ring (under the lock) with that
 * window's candidates; the sketch of the window it evicts becomes the next
 * spare.  begin: 0 or -ENOMEM; commit: 0, or -EINVAL when seq is not the
 * oldest pending window.
 *
 * With view and m (the spare's contents stored and mapped, winstore.h),
 * the ring takes the view (cells in the mapping) and the spare stays the
 * spare.  *evicted_seq (if not NULL): the window the ring dropped to make
 * room, or FSD_NO_SEQ.
 */
int fsd_history_begin(struct fsd_history *h, struct fs_sketch **sketch);
int fsd_history_commit(struct fsd_history *h, __u64 seq, __u64 start_ns,
		       __u64 end_ns, const struct fs_sketch *view,
		       const struct fsd_window_map *m, __u64 *evicted_seq);

/*
 * A window an earlier daemon finished, read back from the state directory
 * (winstore.h): into the ring as the newest, with its candidates, before
 * any window of this daemon, named by the next generation like a commit.
 * ever: the history's totals and the windows finished on this datapath
 * after it, which carry on from there (windows_before takes the windows
 * finished but not restored).  0, -ENOMEM.
 */
struct fsd_window_restore {
	__u64 seq, start_ns, end_ns;
	struct fs_sketch view;		/* cells in m */
	struct fsd_window_map m;
	const struct fsd_candidate *candidates;
	__u64 ncandidates;
	struct fs_window_totals ever;
	__u64 ever_windows;
};
int fsd_history_restore(struct fsd_history *h, const struct fsd_window_restore *r);

/* Give up window seq (the oldest pending) when it could not be read:
 * its candidates are dropped and the next window becomes the oldest. */
void fsd_history_drop(struct fsd_history *h, __u64 seq);

/*
 * Give up the oldest finished window to make room in the state directory
 * (statebudget.h): it leaves the ring (spans no longer reach it; a query
 * that had started on it stops there, as when the ring drops a window)
 * and its sketch and candidates are freed.  *seq: its sequence number,
 * *mapped: whether its sketch was a file's mapping (the caller removes the
 * file).  0, or -ENOENT when the ring is empty.
 */
int fsd_history_evict_oldest(struct fsd_history *h, __u64 *seq, bool *mapped);

/* The i-th newest finished window (0: the last one), or NULL.  For the
 * event loop's thread (and tests), which alone changes the ring. */
const struct fsd_window *fsd_history_window(const struct fsd_history *h,
					    __u32 i);

/* Offer t every candidate of set, estimated in sketch and tagged
 * t->direction. */
void fsd_offer_candidates(struct fsd_topk *t, const struct fsd_candidates *set,
			  const struct fs_sketch *sketch);

/*
 * Top flows over the selected windows into t (initialized by the caller;
 * fsd_topk_finish() afterwards): every candidate of the span, estimated in
 * the span's summed sketch (in q).  0, -ERANGE when sel->windows is more
 * than the history keeps, -E2BIG for too many candidates, -ENOMEM.  Safe
 * on any thread.
 */
int fsd_history_top(struct fsd_history *h, const struct fsd_span_select *sel,
		    struct fsd_query_scratch *q, struct fsd_topk *t,
		    struct fsd_span *span);

/* Distinct flows, sources, destinations over the span (indexed by
 * enum fs_hll_sketch).  0, -ERANGE.  Safe on any thread. */
int fsd_history_distinct(struct fsd_history *h,
			 const struct fsd_span_select *sel,
			 struct fsd_query_scratch *q,
			 double distinct[FS_HLL_NSKETCH], struct fsd_span *span);

/* One window of a series (fsd_history_series()). */
struct fsd_window_point {
	__u64 start_ns, end_ns;			/* CLOCK_MONOTONIC */
	struct fs_window_totals totals;
	double distinct[FS_HLL_NSKETCH];	/* of this window alone */
	struct fs_sample_sum sample;		/* its keyed sample's (sample.h) */
};

/*
 * The selected windows one by one, newest first, into pts (at most max):
 * each window's times, totals and distinct counts, for a plot of the span
 * (`flowsketch plot`).  One lock hold per window, as for the sums.  The
 * number of points, or -errno.
 */
int fsd_history_series(struct fsd_history *h, const struct fsd_span_select *sel,
		       struct fsd_window_point *pts, __u32 max);

/* Memory the history holds: window sketches, candidate sets, spare. */
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
