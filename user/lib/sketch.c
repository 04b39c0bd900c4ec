// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sketch.c - merged user-space sketches: fold, merge, query (sketch.h).
 *
 * Merging is exact for both sketches.  A Count-Min cell is a sum of
 * per-packet increments, so the cell-wise sum of two sketches is the
 * sketch of the concatenated streams (for the standard update; with the
 * conservative update the sum is still >= every flow's truth, since each
 * part is).  A HyperLogLog register is a max of ranks, so the register-wise
 * max is the sketch of the union, and merging is idempotent.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hll_estimate.h"
#include "sketch.h"

int fs_sketch_init(struct fs_sketch *s, const struct fs_sketch_params *p)
{
	int err, k;

	memset(s, 0, sizeof(*s));
	err = fs_params_check(p);
	if (err)
		return -EINVAL;
	s->params = *p;
	for (k = 0; k < FS_NKINDS; k++) {
		/* A part of no bytes (a sketch left off) still gets a
		 * pointer of its own. */
		s->part[k] = calloc(1, fs_kind_slot_bytes(k, p) ? fs_kind_slot_bytes(k, p) : 1);
		if (!s->part[k]) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	return 0;

err_free:
	fs_sketch_free(s);
	return err;
}

void fs_sketch_free(struct fs_sketch *s)
{
	int k;

	for (k = 0; k < FS_NKINDS; k++) {
		free(s->part[k]);
		s->part[k] = NULL;
	}
}

void fs_sketch_reset(struct fs_sketch *s)
{
	int k;

	for (k = 0; k < FS_NKINDS; k++)
		memset(s->part[k], 0, fs_kind_slot_bytes(k, &s->params));
	memset(&s->totals, 0, sizeof(s->totals));
}

size_t fs_sketch_bytes(const struct fs_sketch_params *p)
{
	size_t bytes = 0;
	int k;

	for (k = 0; k < FS_NKINDS; k++)
		bytes += fs_kind_slot_bytes(k, p);
	return bytes;
}

/*
 * dst = merge(dst, src & mask), n words of kind k's merge (the detection
 * sketches' buckets: n / 8 of them, the sample's n / 64 at p's rate; mask unused).  Straight
 * loops over both arrays, so that the compiler vectorizes them: a
 * rotation folds every cell of every CPU.
 */
static void combine(enum fs_merge op, void *dst, const void *src, __u64 n,
		    __u64 mask, const struct fs_sketch_params *p)
{
	__u64 i;

	if (op == FS_MERGE_PREFIX) {
		struct fs_prefix_bucket *d = dst;
		const struct fs_prefix_bucket *v = src;

		for (i = 0; i < n / 8; i++)
			fs_prefix_bucket_merge(&d[i], &v[i]);
	} else if (op == FS_MERGE_SPREAD) {
		struct fs_spread_bucket *d = dst;
		const struct fs_spread_bucket *v = src;

		for (i = 0; i < n / 8; i++)
			fs_spread_bucket_merge(&d[i], &v[i]);
	} else if (op == FS_MERGE_SAMPLE) {
		struct fs_sample_bucket *d = dst;
		const struct fs_sample_bucket *v = src;

		for (i = 0; i < n / 64; i++)
			fs_sample_bucket_merge(&d[i], &v[i], p->sample_shift);
	} else if (op == FS_MERGE_SUM64) {
		__u64 *d = dst;
		const __u64 *v = src;

		for (i = 0; i < n; i++)
			d[i] += v[i] & mask;
	} else {
		__u8 *d = dst;
		const __u8 *v = src;

		for (i = 0; i < n; i++)
			d[i] = v[i] > d[i] ? v[i] : d[i];
	}
}

int fs_sketch_add_chunk(struct fs_sketch *s, enum fs_dp_map m, __u32 slot,
			__u32 chunk, const void *c)
{
	const struct fs_dp_map_desc *d = &fs_dp_maps[m];
	const struct fs_sketch_params *p = &s->params;
	__u64 first, lo, hi, b, e, n = d->per_slot(p);
	__u32 elem = FS_CHUNK_BYTES >> d->chunk_shift;

	if (slot >= p->nslots)
		return -EINVAL;
	/* The part of the chunk's elements [lo, hi) that is inside the
	 * slot's [first, first + n): [b, e), empty when b >= e. */
	first = fs_dp_first(m, p, slot);
	lo = (__u64)chunk << d->chunk_shift;
	hi = ((__u64)chunk + 1) << d->chunk_shift;
	b = lo > first ? lo : first;
	e = hi < first + n ? hi : first + n;
	if (b >= e)
		return 0;
	d->fold(s->part[d->kind], (const char *)c + (b - lo) * elem,
		b - first, e - first, p);
	return 0;
}

int fs_sketch_add_slot(struct fs_sketch *s, void *const chunks[FS_NDPMAPS],
		       const __u32 nchunks[FS_NDPMAPS], __u32 slot)
{
	const struct fs_sketch_params *p = &s->params;
	__u32 c;
	int m;

	if (slot >= p->nslots)
		return -EINVAL;
	/* A slot's elements are consecutive in chunk.h's numbering, from
	 * the slot's first one on. */
	for (m = 0; m < FS_NDPMAPS; m++)
		if ((__u64)nchunks[m] << fs_dp_maps[m].chunk_shift <
		    fs_dp_first(m, p, slot) + fs_dp_maps[m].per_slot(p))
			return -EINVAL;
	for (m = 0; m < FS_NDPMAPS; m++)
		for (c = 0; c < nchunks[m]; c++)
			fs_sketch_add_chunk(s, m, slot, c,
					    (const char *)chunks[m] + (size_t)c * FS_CHUNK_BYTES);
	return 0;
}

void fs_sketch_add_totals(struct fs_sketch *s, const struct fs_window_totals *t)
{
	s->totals.packets += t->packets;
	s->totals.bytes += t->bytes;
}

int fs_sketch_merge(struct fs_sketch *s, const struct fs_sketch *o)
{
	int k;

	if (!fs_params_mergeable(&s->params, &o->params))
		return -EINVAL;
	for (k = 0; k < FS_NKINDS; k++)
		combine(fs_sketch_kinds[k].merge, s->part[k], o->part[k],
			fs_kind_slot_bytes(k, &s->params) / fs_sketch_kinds[k].word_bytes,
			~0ULL, &s->params);
	fs_sketch_add_totals(s, &o->totals);
	return 0;
}

void fs_sketch_query_columns(const struct fs_sketch *s, const __u32 *cols,
			     struct fs_cms_cell *est)
{
	const struct fs_sketch_params *p = &s->params;
	__u32 row;

	est->packets = ~0ULL;
	est->bytes = ~0ULL;
	for (row = 0; row < p->cms_depth; row++) {
		const struct fs_cms_cell *c =
			&s->cms[fs_cms_cell_number(p, 0, row, cols[row])];

		if (c->packets < est->packets)
			est->packets = c->packets;
		if (c->bytes < est->bytes)
			est->bytes = c->bytes;
	}
}

void fs_sketch_query(const struct fs_sketch *s, __u64 flow_hash,
		     struct fs_cms_cell *est)
{
	const struct fs_sketch_params *p = &s->params;
	__u32 cols[FS_CMS_MAX_DEPTH], row;
	struct fs_cms_columns it;

	fs_cms_columns_init(&it, flow_hash, p->cms_log2_width);
	for (row = 0; row < p->cms_depth; row++)
		cols[row] = fs_cms_next_column(&it);
	fs_sketch_query_columns(s, cols, est);
}

double fs_cms_epsilon(const struct fs_sketch_params *p)
{
	return M_E / (double)(1ULL << p->cms_log2_width);
}

__u64 fs_hh_phi_q32(double phi)
{
	if (!(phi > 0))
		return 0;
	if (phi >= 1)
		return 1ULL << 32;
	return (__u64)floor(phi * 4294967296.0);
}

double fs_cms_delta(const struct fs_sketch_params *p)
{
	return exp(-(double)p->cms_depth);
}

double fs_sketch_distinct(const struct fs_sketch *s, enum fs_hll_sketch which)
{
	if ((unsigned int)which >= FS_HLL_NSKETCH)
		return NAN;
	return fs_hll_estimate(s->hll + ((size_t)which << s->params.hll_p),
			       s->params.hll_p);
}
