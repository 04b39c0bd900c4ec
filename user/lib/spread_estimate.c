// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* spread_estimate.c - spreaders out of a spread sketch (spread_estimate.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "hll_estimate.h"
#include "spread_estimate.h"

double fs_spread_bucket_estimate(const struct fs_spread_bucket *b,
				 const struct fs_spread_params *p)
{
	__u32 hist[FS_SPREAD_RANK_MAX + 1] = { 0 }, i;
	double n;

	for (i = 0; i < FS_SPREAD_REGS; i++)
		hist[fs_spread_reg_get(b, i)]++;
	n = fs_hll_estimate_hist(hist, FS_SPREAD_REGS, FS_SPREAD_RANK_BITS);
#ifndef FS_MUTANT_SPREAD_NO_SCALE	/* `make mutants`: the sample's count */
	n = ldexp(n, (int)p->sample_shift);
#endif
	return n;
}

__u64 fs_spread_key_hash(__u32 side, __u32 family, const __u8 *addr,
			 const struct fs_hash_key *hk)
{
	struct fs_flow_key key = { .family = (__u8)family };
	struct fs_packet_hashes h;
	size_t len = family == FS_FAMILY_IPV4 ? 4 : 16;

	memcpy(side == FS_SPREAD_SRC ? key.src : key.dst, addr, len);
	fs_packet_hash(&key, hk, &h);
	return side == FS_SPREAD_SRC ? h.src : h.dst;
}

double fs_spread_estimate(const struct fs_spread_bucket *slot,
			  const struct fs_spread_params *p, __u32 side,
			  __u64 h_key)
{
	double best = INFINITY;
	__u32 r;

	for (r = 0; r < p->depth; r++) {
		double e = fs_spread_bucket_estimate(&slot[fs_spread_bucket_index(p, side, r, h_key)], p);

		if (e < best)
			best = e;
	}
	return best;
}

void fs_spread_merge(struct fs_spread_bucket *dst,
		     const struct fs_spread_bucket *src,
		     const struct fs_spread_params *p)
{
	__u32 i, n = fs_spread_buckets(p);

	for (i = 0; i < n; i++)
		fs_spread_bucket_merge(&dst[i], &src[i]);
}

static int key_cmp(const void *a, const void *b)
{
	const struct fs_spreader *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* The walk's order: by key, then by row (rows holds the row here). */
static int key_row_cmp(const void *a, const void *b)
{
	const struct fs_spreader *x = a, *y = b;
	int c = key_cmp(a, b);

	if (c)
		return c;
	return (x->rows > y->rows) - (x->rows < y->rows);
}

static int spreader_cmp(const void *a, const void *b)
{
	const struct fs_spreader *x = a, *y = b;

	if (x->distinct != y->distinct)
		return x->distinct < y->distinct ? 1 : -1;
	return key_cmp(a, b);
}

/* Each of a key's own buckets overcounts it, so their least does. */
static double own_min(double a, double b)
{
#ifdef FS_MUTANT_SPREAD_OWN_MAX	/* `make mutants`: the loosest row's */
	return a > b ? a : b;
#endif
	return a < b ? a : b;
}

/*
 * The walk over the candidates both estimators share: every bucket of the
 * side that holds a key, as one entry of its key and row, with that
 * bucket's estimate when `own` (else 0: the caller estimates by hash),
 * then each key made one entry: the least of its own estimates and the
 * number of distinct rows they came from.  *all is calloc'ed.  Returns
 * how many keys, or -ENOMEM.
 */
static int candidates(const struct fs_spread_bucket *slot,
		      const struct fs_spread_params *p, __u32 side, bool own,
		      struct fs_spreader **all)
{
	__u32 per_side = p->depth << p->log2_width, i, got = 0, uniq = 0, last_row = 0;
	const struct fs_spread_bucket *b = slot + side * per_side;
	struct fs_spreader *v;

	v = calloc(per_side ? per_side : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < per_side; i++) {
		if (!b[i].family)
			continue;
		v[got].family = b[i].family;
		memcpy(v[got].addr, b[i].key, sizeof(b[i].key));
		v[got].rows = i >> p->log2_width;
		v[got].distinct = own ? fs_spread_bucket_estimate(&b[i], p) : 0;
		got++;
	}
	qsort(v, got, sizeof(*v), key_row_cmp);
	for (i = 0; i < got; i++) {
		struct fs_spreader *u = uniq ? &v[uniq - 1] : NULL;
		__u32 row = v[i].rows;

		if (!u || key_cmp(u, &v[i])) {
			v[uniq] = v[i];
			v[uniq++].rows = 1;
		} else {
			u->distinct = own_min(u->distinct, v[i].distinct);
			/* A key has one bucket a row; a second one in a row
			 * (a file not of one secret) adds no row. */
			if (row != last_row)
				u->rows++;
		}
		last_row = row;
	}
	*all = v;
	return (int)uniq;
}

/* The n widest of all's m into out; frees all. */
static int widest(struct fs_spreader *all, int m, struct fs_spreader *out, size_t n)
{
	int ret;

	qsort(all, (size_t)m, sizeof(*all), spreader_cmp);
	ret = (int)((size_t)m < n ? (size_t)m : n);
	memcpy(out, all, (size_t)ret * sizeof(*out));
	free(all);
	return ret;
}

int fs_spread_top(const struct fs_spread_bucket *slot,
		  const struct fs_spread_params *p, __u32 side,
		  const struct fs_hash_key *hk, struct fs_spreader *out, size_t n)
{
	struct fs_spreader *all;
	int m = candidates(slot, p, side, false, &all), i;

	if (m < 0)
		return m;
	/* With the key, a key's every row is found from its hash. */
	for (i = 0; i < m; i++) {
		all[i].distinct = fs_spread_estimate(slot, p, side,
			fs_spread_key_hash(side, all[i].family, all[i].addr, hk));
		all[i].rows = p->depth;
	}
	return widest(all, m, out, n);
}

int fs_spread_top_own(const struct fs_spread_bucket *slot,
		      const struct fs_spread_params *p, __u32 side,
		      struct fs_spreader *out, size_t n)
{
	struct fs_spreader *all;
	int m = candidates(slot, p, side, true, &all);

	if (m < 0)
		return m;
	return widest(all, m, out, n);
}
