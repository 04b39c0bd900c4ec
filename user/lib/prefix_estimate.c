// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* prefix_estimate.c - heavy prefixes out of a prefix sketch (prefix_estimate.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "prefix_estimate.h"

void fs_prefix_estimate(const struct fs_prefix_bucket *slot,
			const struct fs_prefix_params *p,
			const struct fs_hash_key *hk, __u8 tag,
			const __u8 *masked, struct fs_heavy_prefix *out)
{
	__u64 h = fs_prefix_hash(hk, tag, masked), packets = ~0ULL, bytes = ~0ULL;
	__u32 r;

	for (r = 0; r < p->depth; r++) {
		const struct fs_prefix_bucket *b = &slot[fs_prefix_bucket_index(p, r, h)];
		/* The vote's bound (prefix.h, "Invariant"): 2 f <= V +- L,
		 * and f is whole, so the half rounded down bounds it too. */
		__u64 f = fs_prefix_is_candidate(b, tag, masked) ?
			  (b->packets + b->lead) / 2 : (b->packets - b->lead) / 2;

		if (f < packets)
			packets = f;
		if (b->bytes < bytes)
			bytes = b->bytes;
	}
	out->tag = tag;
	memcpy(out->addr, masked, sizeof(out->addr));
#ifdef FS_MUTANT_PREFIX_NO_SCALE	/* `make mutants`: the sample's count */
	out->packets = packets;
	out->bytes = bytes;
	return;
#endif
	out->packets = packets * fs_prefix_scale(p);
	out->bytes = bytes * fs_prefix_scale(p);
}

void fs_prefix_merge(struct fs_prefix_bucket *dst,
		     const struct fs_prefix_bucket *src,
		     const struct fs_prefix_params *p)
{
	__u32 i, n = fs_prefix_buckets(p);

	for (i = 0; i < n; i++)
		fs_prefix_bucket_merge(&dst[i], &src[i]);
}

static int addr_cmp(const void *a, const void *b)
{
	const struct fs_heavy_prefix *x = a, *y = b;

	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* The walk's order: by prefix, then by row (rows holds the row here). */
static int addr_row_cmp(const void *a, const void *b)
{
	const struct fs_heavy_prefix *x = a, *y = b;
	int c = addr_cmp(a, b);

	if (c)
		return c;
	return (x->rows > y->rows) - (x->rows < y->rows);
}

static int by_packets(const void *a, const void *b)
{
	const struct fs_heavy_prefix *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return addr_cmp(a, b);
}

static int by_bytes(const void *a, const void *b)
{
	const struct fs_heavy_prefix *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return addr_cmp(a, b);
}

/* Each of a prefix's own bounds holds, so their least does. */
static __u64 own_min(__u64 a, __u64 b)
{
#ifdef FS_MUTANT_PREFIX_OWN_MAX	/* `make mutants`: the loosest row's */
	return a > b ? a : b;
#endif
	return a < b ? a : b;
}

/*
 * The walk over the candidates both estimators share: every bucket whose
 * candidate is of this tag and leads, into *all (calloc'ed) as one entry
 * of its prefix, row and own bounds (sampled, unscaled), then each prefix
 * made one entry: the least of its own bounds and the number of distinct
 * rows they came from.  Returns how many prefixes, or -ENOMEM.
 */
static int candidates(const struct fs_prefix_bucket *slot,
		      const struct fs_prefix_params *p, __u8 tag,
		      struct fs_heavy_prefix **all)
{
	__u32 all_n = fs_prefix_buckets(p), i, got = 0, uniq = 0, last_row = 0;
	struct fs_heavy_prefix *v;

	v = calloc(all_n ? all_n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < all_n; i++) {
		const struct fs_prefix_bucket *b = &slot[i];

		if (b->tag != tag || !b->lead)
			continue;
		v[got].tag = tag;
		memcpy(v[got].addr, b->key, sizeof(b->key));
		v[got].rows = i >> p->log2_width;
		/* The vote's bound for the candidate (prefix.h, "Invariant"),
		 * rounded down as f is whole. */
		v[got].packets = (b->packets + b->lead) / 2;
		v[got].bytes = b->bytes;
		got++;
	}
	qsort(v, got, sizeof(*v), addr_row_cmp);
	for (i = 0; i < got; i++) {
		struct fs_heavy_prefix *u = uniq ? &v[uniq - 1] : NULL;
		__u32 row = v[i].rows;

		if (!u || addr_cmp(u, &v[i])) {
			v[uniq] = v[i];
			v[uniq++].rows = 1;
		} else {
			u->packets = own_min(u->packets, v[i].packets);
			u->bytes = own_min(u->bytes, v[i].bytes);
			/* A prefix has one bucket a row; a second one in a
			 * row (a file not of one secret) adds no row. */
			if (row != last_row)
				u->rows++;
		}
		last_row = row;
	}
	*all = v;
	return (int)uniq;
}

void fs_prefix_sort(struct fs_heavy_prefix *h, size_t n, enum fs_prefix_order by)
{
	qsort(h, n, sizeof(*h), by == FS_PREFIX_BY_BYTES ? by_bytes : by_packets);
}

/* The n first of all's m by `by` into out; frees all. */
static int heaviest(struct fs_heavy_prefix *all, int m, enum fs_prefix_order by,
		    struct fs_heavy_prefix *out, size_t n)
{
	int ret;

	fs_prefix_sort(all, (size_t)m, by);
	ret = (int)((size_t)m < n ? (size_t)m : n);
	memcpy(out, all, (size_t)ret * sizeof(*out));
	free(all);
	return ret;
}

int fs_prefix_top(const struct fs_prefix_bucket *slot,
		  const struct fs_prefix_params *p, const struct fs_hash_key *hk,
		  __u8 tag, enum fs_prefix_order by, struct fs_heavy_prefix *out,
		  size_t n)
{
	struct fs_heavy_prefix *all;
	int m = candidates(slot, p, tag, &all), i;

	if (m < 0)
		return m;
	/* With the key, a prefix's every row is found from its hash. */
	for (i = 0; i < m; i++) {
		fs_prefix_estimate(slot, p, hk, tag, all[i].addr, &all[i]);
		all[i].rows = p->depth;
	}
	return heaviest(all, m, by, out, n);
}

int fs_prefix_top_own(const struct fs_prefix_bucket *slot,
		      const struct fs_prefix_params *p, __u8 tag,
		      enum fs_prefix_order by, struct fs_heavy_prefix *out,
		      size_t n)
{
	__u64 v = fs_prefix_scale(p);
	struct fs_heavy_prefix *all;
	int m = candidates(slot, p, tag, &all), i;

	if (m < 0)
		return m;
	for (i = 0; i < m; i++) {
		all[i].packets *= v;
		all[i].bytes *= v;
	}
	return heaviest(all, m, by, out, n);
}
