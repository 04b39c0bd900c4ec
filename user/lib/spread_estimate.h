/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * spread_estimate.h - spreaders out of a spread sketch (include/flowsketch/
 * spread.h): a bucket's distinct count, a key's estimate, the merge of two
 * sketches and the top keys of a side.  User space: the estimate needs
 * floating point, and the key hash the secret's hash key.
 */
#ifndef FLOWSKETCH_SPREAD_ESTIMATE_H
#define FLOWSKETCH_SPREAD_ESTIMATE_H

#include <stddef.h>
#include "flowsketch/spread.h"

/* A key and its estimated spread (distinct peers). */
struct fs_spreader {
	__u8 family;
	__u8 addr[16];
	__u32 rows;		/* rows the estimate is the minimum over */
	double distinct;
};

/* R times the HyperLogLog estimate of one bucket's sampled elements. */
double fs_spread_bucket_estimate(const struct fs_spread_bucket *b,
				 const struct fs_spread_params *p);

/* The hash that picks a key's columns on a side: the packet hash's src
 * (side SRC) or dst (side DST) of an address of family. */
__u64 fs_spread_key_hash(__u32 side, __u32 family, const __u8 *addr,
			 const struct fs_hash_key *hk);

/* A key's estimate: the least of its buckets' over the rows. */
double fs_spread_estimate(const struct fs_spread_bucket *slot,
			  const struct fs_spread_params *p, __u32 side,
			  __u64 h_key);

/* dst = merge(dst, src), bucket by bucket, over a whole slot (both sides). */
void fs_spread_merge(struct fs_spread_bucket *dst,
		     const struct fs_spread_bucket *src,
		     const struct fs_spread_params *p);

/*
 * The side's candidates (each bucket's key, once), each with its
 * estimate, widest first, at most n of them into out.  Returns how many,
 * or -ENOMEM.
 */
int fs_spread_top(const struct fs_spread_bucket *slot,
		  const struct fs_spread_params *p, __u32 side,
		  const struct fs_hash_key *hk, struct fs_spreader *out, size_t n);

/*
 * The same without the hash key (a merge of export files, which hold no
 * secret): a key's columns cannot be recomputed, so each candidate is
 * estimated from its own buckets, those it is the candidate of: the
 * least of their estimates, over `rows` (1 .. d) rows.  Each is an
 * overcount of the key's spread as any of its buckets' is (spread.h,
 * "Error"), but the sharing term of a minimum over fewer rows holds with
 * probability 1 - e^-rows only.
 */
int fs_spread_top_own(const struct fs_spread_bucket *slot,
		      const struct fs_spread_params *p, __u32 side,
		      struct fs_spreader *out, size_t n);

#endif /* FLOWSKETCH_SPREAD_ESTIMATE_H */
