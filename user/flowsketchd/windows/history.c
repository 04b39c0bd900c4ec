// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* history.c - ring of finished windows and span queries (history.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "history.h"

static int history_lock_init(struct fsd_history *h)
{
	pthread_rwlockattr_t attr;
	int err;

	err = -pthread_rwlockattr_init(&attr);
	if (err)
		return err;
	err = -pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (!err)
		err = -pthread_rwlock_init(&h->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return err;
}

int fsd_history_init(struct fsd_history *h, const struct fs_sketch_params *p,
		     __u32 capacity, __u32 candidate_limit, __u64 first_seq)
{
	__u32 i;
	int err;

	memset(h, 0, sizeof(*h));
	if (!capacity || !candidate_limit)
		return -EINVAL;
	err = history_lock_init(h);
	if (err)
		return err;
	h->params = *p;
	h->capacity = capacity;
	h->candidate_limit = candidate_limit;
	/* Window sketches are allocated when first filled: a daemon asked
	 * for hours of history does not take the memory before it has it. */
	h->ring = calloc(capacity, sizeof(*h->ring));
	if (!h->ring) {
		pthread_rwlock_destroy(&h->lock);
		return -ENOMEM;
	}
	for (i = 0; i < capacity; i++)
		fsd_candidates_init(&h->ring[i].candidates, candidate_limit);
	for (i = 0; i < FS_NSLOTS; i++) {
		__u64 seq = first_seq + i;

		fsd_candidates_init(&h->pending[seq % FS_NSLOTS],
				    candidate_limit);
		h->pending_seq[seq % FS_NSLOTS] = seq;
	}
	return 0;
}

void fsd_history_free(struct fsd_history *h)
{
	__u32 i;

	for (i = 0; h->ring && i < h->capacity; i++) {
		if (h->ring[i].map.addr)
			munmap(h->ring[i].map.addr, h->ring[i].map.len);
		else
			fs_sketch_free(&h->ring[i].sketch);
		fsd_candidates_free(&h->ring[i].candidates);
	}
	free(h->ring);
	h->ring = NULL;
	for (i = 0; i < FS_NSLOTS; i++)
		fsd_candidates_free(&h->pending[i]);
	fs_sketch_free(&h->spare);
	pthread_rwlock_destroy(&h->lock);
}

int fsd_history_add_candidate(struct fsd_history *h, __u64 seq,
			      const struct fs_flow_key *key, __u64 hash)
{
	struct fsd_candidates *set = &h->pending[seq % FS_NSLOTS];
	int ret;

	if (h->pending_seq[seq % FS_NSLOTS] != seq) {
		h->stray_reports++;
		return -ESRCH;
	}
	ret = fsd_candidates_add(set, key, hash);
	if (ret == -ENOSPC)
		h->candidate_overflow++;
	return ret;
}

int fsd_history_begin(struct fsd_history *h, struct fs_sketch **sketch)
{
	int err;

	if (!h->spare.cms) {
		err = fs_sketch_init(&h->spare, &h->params);
		if (err)
			return err;
	} else {
		fs_sketch_reset(&h->spare);
	}
	*sketch = &h->spare;
	return 0;
}

/* Under h->lock: w becomes the newest window; what it held goes to *old. */
static void ring_put(struct fsd_history *h, struct fsd_window *w, __u64 seq,
		     __u64 start_ns, __u64 end_ns)
{
	w->gen = h->windows_finished;
	w->seq = seq;
	w->start_ns = start_ns;
	w->end_ns = end_ns;
	h->totals.packets += w->sketch.totals.packets;
	h->totals.bytes += w->sketch.totals.bytes;
	h->windows_finished++;
	h->next = (h->next + 1) % h->capacity;
	if (h->count < h->capacity)
		h->count++;
}

/* Outside the lock: what a window held before the ring reused it. */
static void release_evicted(struct fs_sketch *sketch, struct fsd_window_map *m)
{
	if (m->addr)
		munmap(m->addr, m->len);
	else
		fs_sketch_free(sketch);
}

int fsd_history_commit(struct fsd_history *h, __u64 seq, __u64 start_ns,
		       __u64 end_ns, const struct fs_sketch *view,
		       const struct fsd_window_map *m, __u64 *evicted_seq)
{
	struct fsd_candidates *pending = &h->pending[seq % FS_NSLOTS];
	struct fsd_candidates recycled;
	struct fsd_window_map evicted_map;
	struct fs_sketch evicted;
	struct fsd_window *w;
	bool had;

	/* Windows close in order: seq must be the older pending one. */
	if (h->pending_seq[seq % FS_NSLOTS] != seq ||
	    h->pending_seq[(seq + 1) % FS_NSLOTS] != seq + 1 || !h->spare.cms)
		return -EINVAL;
	pthread_rwlock_wrlock(&h->lock);
	w = &h->ring[h->next];
	had = h->count == h->capacity;
	if (evicted_seq)
		*evicted_seq = had ? w->seq : FSD_NO_SEQ;
	/* Swap sets: the window takes this window's candidates, and the set
	 * it held (an evicted window's, or empty) collects window seq + 2,
	 * the next to use this slot. */
	recycled = w->candidates;
	w->candidates = *pending;
	evicted = w->sketch;
	evicted_map = w->map;
	if (m) {
		/* Stored: the ring reads the mapping, the spare stays. */
		w->sketch = *view;
		w->map = *m;
	} else {
		/* The spare goes into the ring; the evicted heap sketch (or
		 * none yet) is the next spare. */
		w->sketch = h->spare;
		w->map.addr = NULL;
		w->map.len = 0;
		if (evicted_map.addr) {
			memset(&h->spare, 0, sizeof(h->spare));
		} else {
			h->spare = evicted;
			memset(&evicted, 0, sizeof(evicted));
		}
	}
	ring_put(h, w, seq, start_ns, end_ns);
	pthread_rwlock_unlock(&h->lock);
	/* Outside the lock: clearing touches the whole table, and no query
	 * can reach the evicted window any more. */
	release_evicted(&evicted, &evicted_map);
	fsd_candidates_clear(&recycled);
	*pending = recycled;
	h->pending_seq[seq % FS_NSLOTS] = seq + FS_NSLOTS;
	return 0;
}

int fsd_history_restore(struct fsd_history *h, const struct fsd_window_restore *r)
{
	struct fsd_candidates set, recycled;
	struct fsd_window_map evicted_map;
	struct fs_sketch evicted;
	struct fsd_window *w;
	__u64 i;
	int err;

	fsd_candidates_init(&set, h->candidate_limit);
	for (i = 0; i < r->ncandidates; i++) {
		err = fsd_candidates_add(&set, &r->candidates[i].key,
					 r->candidates[i].hash);
		/* A full set or a record of no family loses that record only. */
		if (err == -ENOMEM) {
			fsd_candidates_free(&set);
			return err;
		}
	}
	pthread_rwlock_wrlock(&h->lock);
	w = &h->ring[h->next];
	recycled = w->candidates;
	evicted = w->sketch;
	evicted_map = w->map;
	w->candidates = set;
	w->sketch = r->view;
	w->map = r->m;
	ring_put(h, w, r->seq, r->start_ns, r->end_ns);
	h->totals = r->ever;
	h->windows_before = r->ever_windows > h->windows_finished ?
			    r->ever_windows - h->windows_finished : 0;
	pthread_rwlock_unlock(&h->lock);
	release_evicted(&evicted, &evicted_map);
	fsd_candidates_free(&recycled);
	return 0;
}

void fsd_history_drop(struct fsd_history *h, __u64 seq)
{
	if (h->pending_seq[seq % FS_NSLOTS] != seq)
		return;
	fsd_candidates_clear(&h->pending[seq % FS_NSLOTS]);
	h->pending_seq[seq % FS_NSLOTS] = seq + FS_NSLOTS;
	h->windows_dropped++;
}

int fsd_history_evict_oldest(struct fsd_history *h, __u64 *seq, bool *mapped)
{
	struct fsd_candidates set;
	struct fsd_window_map m;
	struct fs_sketch sketch;
	struct fsd_window *w;

	if (!h->count)
		return -ENOENT;
	pthread_rwlock_wrlock(&h->lock);
	w = &h->ring[(h->next + h->capacity - h->count) % h->capacity];
	*seq = w->seq;
	*mapped = w->map.addr != NULL;
	sketch = w->sketch;
	m = w->map;
	set = w->candidates;
	memset(&w->sketch, 0, sizeof(w->sketch));
	memset(&w->map, 0, sizeof(w->map));
	fsd_candidates_init(&w->candidates, h->candidate_limit);
	/* The ring's slots past count are free: the next commit fills
	 * ring[next] (the oldest slot) whatever it held. */
	h->count--;
	pthread_rwlock_unlock(&h->lock);
	release_evicted(&sketch, &m);
	fsd_candidates_free(&set);
	return 0;
}

const struct fsd_window *fsd_history_window(const struct fsd_history *h,
					    __u32 i)
{
	if (i >= h->count)
		return NULL;
	return &h->ring[(h->next + h->capacity - 1 - i) % h->capacity];
}

int fsd_query_scratch_init(struct fsd_query_scratch *q,
			   const struct fs_sketch_params *p)
{
	fsd_candidates_init(&q->seen, FSD_QUERY_CANDIDATES);
	return fs_sketch_init(&q->sum, p);
}

void fsd_query_scratch_free(struct fsd_query_scratch *q)
{
	fs_sketch_free(&q->sum);
	fsd_candidates_free(&q->seen);
}

size_t fsd_query_scratch_max_bytes(const struct fs_sketch_params *p)
{
	return fs_sketch_bytes(p) + fsd_candidates_max_bytes(FSD_QUERY_CANDIDATES);
}

/*
 * The window of generation gen while the caller holds h->lock, or NULL
 * once the ring has dropped it (or it is not committed yet).
 */
static const struct fsd_window *window_of_gen(const struct fsd_history *h,
					      __u64 gen)
{
	const struct fsd_window *w;

	if (gen >= h->windows_finished || h->windows_finished - gen > h->count)
		return NULL;
	w = &h->ring[gen % h->capacity];
	return w->gen == gen ? w : NULL;
}

/*
 * Walk the selected windows newest first, one lock hold each, calling
 * visit() on each under the lock.  The walk starts below generation
 * *newest, or below the next window to commit when *newest is
 * FSD_GEN_NOW (and then sets *newest to it).  Returns how many windows
 * were visited, or visit()'s non-zero return (which ends the walk).
 */
#define FSD_GEN_NOW (~0ULL)

static int walk_span(struct fsd_history *h, const struct fsd_span_select *sel,
		     __u64 *newest,
		     int (*visit)(const struct fsd_window *w, void *arg),
		     void *arg)
{
	__u32 limit = sel->windows ? sel->windows : h->capacity;
	__u64 gen;
	__u32 n;
	int err;

	if (*newest == FSD_GEN_NOW) {
		pthread_rwlock_rdlock(&h->lock);
		*newest = h->windows_finished;
		pthread_rwlock_unlock(&h->lock);
	}
	gen = *newest;
	for (n = 0; n < limit && gen > 0; n++) {
		const struct fsd_window *w;

		gen--;
		pthread_rwlock_rdlock(&h->lock);
		w = window_of_gen(h, gen);
		if (!w || (sel->since_ns && w->end_ns <= sel->since_ns)) {
			pthread_rwlock_unlock(&h->lock);
			break;
		}
		err = visit(w, arg);
		pthread_rwlock_unlock(&h->lock);
		if (err)
			return err;
	}
	return (int)n;
}

struct sum_arg {
	struct fsd_query_scratch *q;
	struct fsd_span *span;
	__u32 done;
};

static int sum_window(const struct fsd_window *w, void *arg)
{
	struct sum_arg *a = arg;
	int err;

	err = fs_sketch_merge(&a->q->sum, &w->sketch);
	if (err)
		return err;
	if (!a->done++)
		a->span->end_ns = w->end_ns;
	a->span->start_ns = w->start_ns;
	return 0;
}

/* Sum the selected windows into q->sum and describe them; *newest as in
 * walk_span(), for a second walk over the same windows. */
static int sum_span(struct fsd_history *h, const struct fsd_span_select *sel,
		    struct fsd_query_scratch *q, struct fsd_span *span,
		    __u64 *newest)
{
	struct sum_arg a = { .q = q, .span = span };
	int n;

	*newest = sel->pinned ? sel->newest : FSD_GEN_NOW;
	memset(span, 0, sizeof(*span));
	if (sel->windows > h->capacity)
		return -ERANGE;
	fs_sketch_reset(&q->sum);
	n = walk_span(h, sel, newest, sum_window, &a);
	if (n < 0)
		return n;
	span->windows = (__u32)n;
	span->totals = q->sum.totals;
	return 0;
}

struct seen_arg {
	struct fsd_query_scratch *q;
};

/* Copy a window's candidates into the query's set (under the lock: the
 * window's set is recycled when the ring drops it). */
static int gather_window(const struct fsd_window *w, void *arg)
{
	struct seen_arg *a = arg;
	__u32 j;
	int ret;

	for (j = 0; j < w->candidates.capacity; j++) {
		const struct fsd_candidate *e = &w->candidates.slots[j];

		if (!fsd_candidate_used(e))
			continue;
		ret = fsd_candidates_add(&a->q->seen, &e->key, e->hash);
		if (ret == -ENOSPC)
			return -E2BIG;
		if (ret < 0)
			return ret;
	}
	return 0;
}

void fsd_offer_candidates(struct fsd_topk *t, const struct fsd_candidates *set,
			  const struct fs_sketch *sketch)
{
	__u32 j;

	for (j = 0; j < set->capacity; j++) {
		const struct fsd_candidate *e = &set->slots[j];
		struct fsd_flow_count fc = { .key = e->key, .hash = e->hash,
					     .direction = t->direction };
		struct fs_cms_cell est;

		if (!fsd_candidate_used(e))
			continue;
		fs_sketch_query(sketch, e->hash, &est);
		fc.packets = est.packets;
		fc.bytes = est.bytes;
		fsd_topk_offer(t, &fc);
	}
}

int fsd_history_top(struct fsd_history *h, const struct fsd_span_select *sel,
		    struct fsd_query_scratch *q, struct fsd_topk *t,
		    struct fsd_span *span)
{
	struct seen_arg a = { .q = q };
	__u64 newest;
	__u32 j;
	int ret;

	ret = sum_span(h, sel, q, span, &newest);
	if (ret)
		return ret;
	/* The same windows again, for their candidates: starting from the
	 * same generation skips windows committed since; one the ring has
	 * dropped since ends the walk early, so its flows may be missing
	 * from the answer but are never estimated from a sum that lacks
	 * them. */
	fsd_candidates_clear(&q->seen);
	for (j = 0; j < span->windows; j++) {
		struct fsd_span_select one = { .windows = 1 };
		__u64 below = newest - j, need;

		/* Room for this window's candidates first, grown outside the
		 * lock: growing rehashes the whole table, which would hold up
		 * a commit.  The window's count is read under the lock, and
		 * cannot change while the window exists. */
		pthread_rwlock_rdlock(&h->lock);
		need = window_of_gen(h, below - 1) ?
		       window_of_gen(h, below - 1)->candidates.count : 0;
		pthread_rwlock_unlock(&h->lock);
		ret = fsd_candidates_reserve(&q->seen, need);
		if (ret)
			return ret;
		ret = walk_span(h, &one, &below, gather_window, &a);
		if (ret < 0)
			return ret;
		if (ret == 0)
			break;	/* dropped by the ring meanwhile */
	}
	/* Estimates from the query's own sum: no lock. */
	fsd_offer_candidates(t, &q->seen, &q->sum);
	span->candidates = q->seen.count;
	return 0;
}

int fsd_history_distinct(struct fsd_history *h,
			 const struct fsd_span_select *sel,
			 struct fsd_query_scratch *q,
			 double distinct[FS_HLL_NSKETCH], struct fsd_span *span)
{
	__u64 newest;
	__u32 i;
	int ret;

	ret = sum_span(h, sel, q, span, &newest);
	if (ret)
		return ret;
	for (i = 0; i < FS_HLL_NSKETCH; i++)
		distinct[i] = fs_sketch_distinct(&q->sum, i);
	return 0;
}

struct series_arg {
	struct fsd_window_point *pts;
	__u32 n, max;
};

/* One window's point (under the lock, like every visit). */
static int point_window(const struct fsd_window *w, void *arg)
{
	struct series_arg *a = arg;
	struct fsd_window_point *p;
	__u32 i;

	if (a->n == a->max)
		return 1;	/* full: the walk ends */
	p = &a->pts[a->n++];
	p->start_ns = w->start_ns;
	p->end_ns = w->end_ns;
	p->totals = w->sketch.totals;
	for (i = 0; i < FS_HLL_NSKETCH; i++)
		p->distinct[i] = fs_sketch_distinct(&w->sketch, i);
	fs_sample_summarize(w->sketch.sample, fs_params_sample_buckets(&w->sketch.params),
			    w->sketch.params.sample_shift, &p->sample);
	return 0;
}

int fsd_history_series(struct fsd_history *h, const struct fsd_span_select *sel,
		       struct fsd_window_point *pts, __u32 max)
{
	struct series_arg a = { .pts = pts, .max = max };
	__u64 newest = sel->pinned ? sel->newest : FSD_GEN_NOW;
	int n;

	if (sel->windows > h->capacity)
		return -ERANGE;
	n = walk_span(h, sel, &newest, point_window, &a);
	return n < 0 ? n : (int)a.n;
}

size_t fsd_history_max_bytes(const struct fs_sketch_params *p,
			     __u32 capacity, __u32 candidate_limit)
{
	size_t sketch = fs_sketch_bytes(p);
	size_t set = fsd_candidates_max_bytes(candidate_limit);

	return sketch + (size_t)capacity * (sketch + set + sizeof(struct fsd_window)) +
	       FS_NSLOTS * set;
}

size_t fsd_history_bytes(const struct fsd_history *h)
{
	size_t bytes = h->spare.cms ? fs_sketch_bytes(&h->params) : 0;
	__u32 i;

	for (i = 0; i < h->capacity; i++) {
		if (h->ring[i].sketch.cms)	/* mapped ones too: tmpfs is memory */
			bytes += fs_sketch_bytes(&h->params);
		bytes += fsd_candidates_bytes(&h->ring[i].candidates);
	}
	for (i = 0; i < FS_NSLOTS; i++)
		bytes += fsd_candidates_bytes(&h->pending[i]);
	return bytes + (size_t)h->capacity * sizeof(*h->ring);
}
