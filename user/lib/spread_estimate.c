// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* spread_estimate.c - spreaders out of a spread sketch (spread_estimate.h). */
#include <errno.h>
#include <math.h>
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

static int spreader_cmp(const void *a, const void *b)
{
	const struct fs_spreader *x = a, *y = b;

	if (x->distinct != y->distinct)
		return x->distinct < y->distinct ? 1 : -1;
	return key_cmp(a, b);
}

int fs_spread_top(const struct fs_spread_bucket *slot,
		  const struct fs_spread_params *p, __u32 side,
		  const struct fs_hash_key *hk, struct fs_spreader *out, size_t n)
{
	__u32 per_side = p->depth << p->log2_width, i, got = 0, uniq = 0;
	const struct fs_spread_bucket *b = slot + side * per_side;
	struct fs_spreader *all;
	int ret;

	all = calloc(per_side, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < per_side; i++) {
		if (!b[i].family)
			continue;
		all[got].family = b[i].family;
		memcpy(all[got].addr, b[i].key, sizeof(b[i].key));
		got++;
	}
	/* A key is the candidate of up to d buckets: estimated once. */
	qsort(all, got, sizeof(*all), key_cmp);
	for (i = 0; i < got; i++) {
		if (uniq && !key_cmp(&all[uniq - 1], &all[i]))
			continue;
		all[uniq] = all[i];
		all[uniq].distinct = fs_spread_estimate(slot, p, side,
			fs_spread_key_hash(side, all[i].family, all[i].addr, hk));
		uniq++;
	}
	qsort(all, uniq, sizeof(*all), spreader_cmp);
	ret = (int)(uniq < n ? uniq : n);
	memcpy(out, all, (size_t)ret * sizeof(*out));
	free(all);
	return ret;
}
