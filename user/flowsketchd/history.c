// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* history.c - ring of finished windows and span queries (history.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "history.h"

int fsd_history_init(struct fsd_history *h, const struct fs_sketch_params *p,
		     __u32 capacity, __u32 candidate_limit, __u64 first_seq)
{
	__u32 i;
	int err;

	memset(h, 0, sizeof(*h));
	if (!capacity || !candidate_limit)
		return -EINVAL;
	h->params = *p;
	h->capacity = capacity;
	h->candidate_limit = candidate_limit;
	/* Window sketches are allocated when first filled: a daemon asked
	 * for hours of history does not take the memory before it has it. */
	h->ring = calloc(capacity, sizeof(*h->ring));
	if (!h->ring)
		return -ENOMEM;
	for (i = 0; i < capacity; i++)
		fsd_candidates_init(&h->ring[i].candidates, candidate_limit);
	for (i = 0; i < FS_NSLOTS; i++) {
		__u64 seq = first_seq + i;

		fsd_candidates_init(&h->pending[seq % FS_NSLOTS],
				    candidate_limit);
		h->pending_seq[seq % FS_NSLOTS] = seq;
	}
	err = fs_sketch_init(&h->scratch, p);
	if (err)
		goto err_free;
	return 0;

err_free:
	fsd_history_free(h);
	return err;
}

void fsd_history_free(struct fsd_history *h)
{
	__u32 i;

	for (i = 0; h->ring && i < h->capacity; i++) {
		fs_sketch_free(&h->ring[i].sketch);
		fsd_candidates_free(&h->ring[i].candidates);
	}
	free(h->ring);
	h->ring = NULL;
	for (i = 0; i < FS_NSLOTS; i++)
		fsd_candidates_free(&h->pending[i]);
	fs_sketch_free(&h->scratch);
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
	struct fsd_window *w = &h->ring[h->next];
	int err;

	if (!w->sketch.cms) {
		err = fs_sketch_init(&w->sketch, &h->params);
		if (err)
			return err;
	} else {
		fs_sketch_reset(&w->sketch);
	}
	*sketch = &w->sketch;
	return 0;
}

int fsd_history_commit(struct fsd_history *h, __u64 seq, __u64 start_ns,
		       __u64 end_ns)
{
	struct fsd_window *w = &h->ring[h->next];
	struct fsd_candidates *pending = &h->pending[seq % FS_NSLOTS];
	struct fsd_candidates recycled;

	/* Windows close in order: seq must be the older pending one. */
	if (h->pending_seq[seq % FS_NSLOTS] != seq ||
	    h->pending_seq[(seq + 1) % FS_NSLOTS] != seq + 1 || !w->sketch.cms)
		return -EINVAL;
	/* Swap sets: the window takes this window's candidates, and the set
	 * it held (an evicted window's, or empty) collects window seq + 2,
	 * the next to use this slot. */
	recycled = w->candidates;
	w->candidates = *pending;
	fsd_candidates_clear(&recycled);
	*pending = recycled;
	h->pending_seq[seq % FS_NSLOTS] = seq + FS_NSLOTS;

	w->seq = seq;
	w->start_ns = start_ns;
	w->end_ns = end_ns;
	h->totals.packets += w->sketch.totals.packets;
	h->totals.bytes += w->sketch.totals.bytes;
	h->windows_finished++;
	h->next = (h->next + 1) % h->capacity;
	if (h->count < h->capacity)
		h->count++;
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

const struct fsd_window *fsd_history_window(const struct fsd_history *h,
					    __u32 i)
{
	if (i >= h->count)
		return NULL;
	return &h->ring[(h->next + h->capacity - 1 - i) % h->capacity];
}

/* Sum the newest `windows` windows into h->scratch and describe them. */
static int sum_span(struct fsd_history *h, __u32 windows, struct fsd_span *span)
{
	__u32 i;
	int err;

	memset(span, 0, sizeof(*span));
	if (!windows || windows > h->capacity)
		return -ERANGE;
	fs_sketch_reset(&h->scratch);
	for (i = 0; i < windows && i < h->count; i++) {
		const struct fsd_window *w = fsd_history_window(h, i);

		err = fs_sketch_merge(&h->scratch, &w->sketch);
		if (err)
			return err;
		if (!i)
			span->end_ns = w->end_ns;
		span->start_ns = w->start_ns;
	}
	span->windows = i;
	span->totals = h->scratch.totals;
	return 0;
}

int fsd_history_top(struct fsd_history *h, __u32 windows, struct fsd_topk *t,
		    struct fsd_span *span)
{
	struct fsd_candidates seen;
	__u32 i, j;
	int ret;

	ret = sum_span(h, windows, span);
	if (ret)
		return ret;
	/* A flow reported in several windows is estimated once. */
	fsd_candidates_init(&seen, ~0U);
	for (i = 0; i < span->windows; i++) {
		const struct fsd_candidates *c = &fsd_history_window(h, i)->candidates;

		for (j = 0; j < c->capacity; j++) {
			const struct fsd_candidate *e = &c->slots[j];
			struct fsd_flow_count fc = { .key = e->key, .hash = e->hash };
			struct fs_cms_cell est;

			if (!fsd_candidate_used(e))
				continue;
			ret = fsd_candidates_add(&seen, &e->key, e->hash);
			if (ret < 0)
				goto out;
			if (!ret)
				continue;
			fs_sketch_query(&h->scratch, e->hash, &est);
			fc.packets = est.packets;
			fc.bytes = est.bytes;
			fsd_topk_offer(t, &fc);
		}
	}
	span->candidates = seen.count;
	ret = 0;
out:
	fsd_candidates_free(&seen);
	return ret;
}

int fsd_history_distinct(struct fsd_history *h, __u32 windows,
			 double distinct[FS_HLL_NSKETCH], struct fsd_span *span)
{
	__u32 i;
	int ret;

	ret = sum_span(h, windows, span);
	if (ret)
		return ret;
	for (i = 0; i < FS_HLL_NSKETCH; i++)
		distinct[i] = fs_sketch_distinct(&h->scratch, i);
	return 0;
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
	size_t bytes = fs_sketch_bytes(&h->params); /* scratch */
	__u32 i;

	for (i = 0; i < h->capacity; i++) {
		if (h->ring[i].sketch.cms)
			bytes += fs_sketch_bytes(&h->params);
		bytes += fsd_candidates_bytes(&h->ring[i].candidates);
	}
	for (i = 0; i < FS_NSLOTS; i++)
		bytes += fsd_candidates_bytes(&h->pending[i]);
	return bytes + (size_t)h->capacity * sizeof(*h->ring);
}
