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

void fs_prefix_sort(struct fs_heavy_prefix *h, size_t n, enum fs_prefix_order by)
{
	qsort(h, n, sizeof(*h), by == FS_PREFIX_BY_BYTES ? by_bytes : by_packets);
}

int fs_prefix_top(const struct fs_prefix_bucket *slot,
		  const struct fs_prefix_params *p, const struct fs_hash_key *hk,
		  __u8 tag, enum fs_prefix_order by, struct fs_heavy_prefix *out,
		  size_t n)
{
	__u32 all_n = fs_prefix_buckets(p), i, got = 0, uniq = 0;
	struct fs_heavy_prefix *all;
	int ret;

	all = calloc(all_n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < all_n; i++)
		if (slot[i].tag == tag && slot[i].lead)
			memcpy(all[got++].addr, slot[i].key, sizeof(slot[i].key));
	/* A prefix is the candidate of up to d buckets: estimated once. */
	qsort(all, got, sizeof(*all), addr_cmp);
	for (i = 0; i < got; i++) {
		if (uniq && !addr_cmp(&all[uniq - 1], &all[i]))
			continue;
		fs_prefix_estimate(slot, p, hk, tag, all[i].addr, &all[uniq++]);
	}
	fs_prefix_sort(all, uniq, by);
	ret = (int)(uniq < n ? uniq : n);
	memcpy(out, all, (size_t)ret * sizeof(*out));
	free(all);
	return ret;
}
