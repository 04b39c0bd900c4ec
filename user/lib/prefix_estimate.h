/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prefix_estimate.h - heavy prefixes out of a prefix sketch (include/
 * flowsketch/prefix.h): a prefix's estimate, the merge of two sketches and
 * the top prefixes of one (side, family, level).  User space: it needs the
 * secret's hash keys.
 */
#ifndef FLOWSKETCH_PREFIX_ESTIMATE_H
#define FLOWSKETCH_PREFIX_ESTIMATE_H

#include <stddef.h>
#include "flowsketch/prefix.h"

/* A prefix and its estimates, already scaled by V. */
struct fs_heavy_prefix {
	__u8 tag;
	__u8 addr[16];		/* masked to the tag's level */
	__u32 rows;		/* rows the estimate is the minimum over */
	__u64 packets;
	__u64 bytes;
};

/* The estimates of prefix (tag, masked) (fs_prefix_mask()'s form). */
void fs_prefix_estimate(const struct fs_prefix_bucket *slot,
			const struct fs_prefix_params *p,
			const struct fs_hash_key *hk, __u8 tag,
			const __u8 *masked, struct fs_heavy_prefix *out);

/* dst = merge(dst, src) over a whole slot. */
void fs_prefix_merge(struct fs_prefix_bucket *dst,
		     const struct fs_prefix_bucket *src,
		     const struct fs_prefix_params *p);

/* How fs_prefix_top() ranks. */
enum fs_prefix_order {
	FS_PREFIX_BY_PACKETS,
	FS_PREFIX_BY_BYTES,
};

/* Heaviest first (ties: by address), e.g. the tops of two tags as one. */
void fs_prefix_sort(struct fs_heavy_prefix *h, size_t n, enum fs_prefix_order by);

/* The candidates of one tag (each once), heaviest first, at most n into
 * out.  Returns how many, or -ENOMEM. */
int fs_prefix_top(const struct fs_prefix_bucket *slot,
		  const struct fs_prefix_params *p, const struct fs_hash_key *hk,
		  __u8 tag, enum fs_prefix_order by, struct fs_heavy_prefix *out,
		  size_t n);

/*
 * The same without the hash key (a merge of export files, which hold no
 * secret): a candidate's columns cannot be recomputed, so each is
 * estimated from its own buckets, those it is the candidate of.  Its
 * packets: V times the least (V_b + L_b) / 2 over them (the vote's bound
 * for a bucket's candidate, prefix.h); its bytes: V times their least
 * B_b.  Both stay upper bounds of the sampled counts, but over `rows`
 * (1 .. d) rows only: a prefix outvoted in some row leaves that row out,
 * and its collision term then holds with probability 1 - e^-rows, not
 * 1 - e^-d.
 */
int fs_prefix_top_own(const struct fs_prefix_bucket *slot,
		      const struct fs_prefix_params *p, __u8 tag,
		      enum fs_prefix_order by, struct fs_heavy_prefix *out,
		      size_t n);

#endif /* FLOWSKETCH_PREFIX_ESTIMATE_H */
