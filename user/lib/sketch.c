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
	int err;

	memset(s, 0, sizeof(*s));
	err = fs_params_check(p);
	if (err)
		return -EINVAL;
	s->params = *p;
	s->cms = calloc(fs_cms_cells_per_slot(p), sizeof(*s->cms));
	s->hll = calloc(fs_hll_regs_per_slot(p), sizeof(*s->hll));
	if (!s->cms || !s->hll) {
		err = -ENOMEM;
		goto err_free;
	}
	return 0;

err_free:
	fs_sketch_free(s);
	return err;
}

void fs_sketch_free(struct fs_sketch *s)
{
	free(s->cms);
	free(s->hll);
	s->cms = NULL;
	s->hll = NULL;
}

void fs_sketch_reset(struct fs_sketch *s)
{
	memset(s->cms, 0, fs_cms_cells_per_slot(&s->params) * sizeof(*s->cms));
	memset(s->hll, 0, fs_hll_regs_per_slot(&s->params));
	memset(&s->totals, 0, sizeof(s->totals));
}

size_t fs_sketch_bytes(const struct fs_sketch_params *p)
{
	return fs_cms_cells_per_slot(p) * sizeof(struct fs_cms_cell) +
	       fs_hll_regs_per_slot(p);
}

/*
 * The part of [lo, hi) (one chunk's global numbers) that is inside
 * [first, first + n) (one slot's): [*b, *e), empty when *b >= *e.
 */
static void slot_overlap(__u64 lo, __u64 hi, __u64 first, __u64 n,
			 __u64 *b, __u64 *e)
{
	*b = lo > first ? lo : first;
	*e = hi < first + n ? hi : first + n;
}

int fs_sketch_add_cms_chunk(struct fs_sketch *s, __u32 slot, __u32 chunk,
			    const struct fs_cms_chunk *c)
{
	const struct fs_sketch_params *p = &s->params;
	__u64 first, b, e, i;
	struct fs_cms_cell *dst;
	const struct fs_cms_cell *src;

	if (slot >= p->nslots)
		return -EINVAL;
	first = fs_cms_cell_number(p, slot, 0, 0);
	slot_overlap((__u64)chunk << FS_CMS_CHUNK_SHIFT,
		     ((__u64)chunk + 1) << FS_CMS_CHUNK_SHIFT, first,
		     fs_cms_cells_per_slot(p), &b, &e);
	if (b >= e)
		return 0;
	/* Straight loops over both arrays, so that the compiler
	 * vectorizes them: a rotation folds every cell of every CPU. */
	dst = s->cms + (b - first);
	src = c->cells + (b & FS_CMS_CHUNK_MASK);
	for (i = 0; i < e - b; i++) {
		dst[i].packets += fs_cms_count(src[i].packets);
		dst[i].bytes += fs_cms_count(src[i].bytes);
	}
	return 0;
}

int fs_sketch_add_hll_chunk(struct fs_sketch *s, __u32 slot, __u32 chunk,
			    const struct fs_hll_chunk *c)
{
	const struct fs_sketch_params *p = &s->params;
	__u64 first, b, e, i;
	const __u8 *src;
	__u8 *dst;

	if (slot >= p->nslots)
		return -EINVAL;
	first = fs_hll_register_number(p, slot, 0, 0);
	slot_overlap((__u64)chunk << FS_HLL_CHUNK_SHIFT,
		     ((__u64)chunk + 1) << FS_HLL_CHUNK_SHIFT, first,
		     fs_hll_regs_per_slot(p), &b, &e);
	if (b >= e)
		return 0;
	dst = s->hll + (b - first);
	src = c->regs + (b & FS_HLL_CHUNK_MASK);
	for (i = 0; i < e - b; i++)
		dst[i] = src[i] > dst[i] ? src[i] : dst[i];
	return 0;
}

int fs_sketch_add_slot(struct fs_sketch *s,
		       const struct fs_cms_chunk *cms_chunks, __u32 n_cms_chunks,
		       const struct fs_hll_chunk *hll_chunks, __u32 n_hll_chunks,
		       __u32 slot)
{
	const struct fs_sketch_params *p = &s->params;
	__u32 k;

	if (slot >= p->nslots)
		return -EINVAL;
	/* A slot's cells (and registers) are consecutive in the global
	 * numbering of cms.h (hll.h), from the slot's first one on. */
	if ((__u64)n_cms_chunks * FS_CMS_CHUNK_CELLS <
		    fs_cms_cell_number(p, slot, 0, 0) + fs_cms_cells_per_slot(p) ||
	    (__u64)n_hll_chunks * FS_HLL_CHUNK_REGS <
		    fs_hll_register_number(p, slot, 0, 0) + fs_hll_regs_per_slot(p))
		return -EINVAL;
	for (k = 0; k < n_cms_chunks; k++)
		fs_sketch_add_cms_chunk(s, slot, k, &cms_chunks[k]);
	for (k = 0; k < n_hll_chunks; k++)
		fs_sketch_add_hll_chunk(s, slot, k, &hll_chunks[k]);
	return 0;
}

void fs_sketch_add_totals(struct fs_sketch *s, const struct fs_window_totals *t)
{
	s->totals.packets += t->packets;
	s->totals.bytes += t->bytes;
}

int fs_sketch_merge(struct fs_sketch *s, const struct fs_sketch *o)
{
	__u64 ncells, nregs, i;

	if (!fs_params_mergeable(&s->params, &o->params))
		return -EINVAL;
	ncells = fs_cms_cells_per_slot(&s->params);
	nregs = fs_hll_regs_per_slot(&s->params);
	for (i = 0; i < ncells; i++) {
		s->cms[i].packets += o->cms[i].packets;
		s->cms[i].bytes += o->cms[i].bytes;
	}
	for (i = 0; i < nregs; i++)
		fs_hll_register_max(&s->hll[i], o->hll[i]);
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
