/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * export_perm.h - the secret coordinates a sketch leaves the host in.
 *
 * A Count-Min column and a HyperLogLog register index are bits of a flow's
 * keyed hash (cms.h, hll.h), so a sketch exported as the datapath lays it
 * out tells whoever reads it those bits for every flow it can pick out
 * (its own heavy flows): enough, with the linear pair-multiply hash, to
 * learn the key and aim collisions (hash.h, "What leaves the host");
 * and a sample bucket's index is the low bits of its flows' keyed sample
 * values (sample.h), whose other bits an export cuts to the leading one.
 * Exports therefore move every run of a kind's part (its perm_shift,
 * sketch_kind.h) through a secret permutation of its own, elements whole:
 * every Count-Min row's columns through pi_r of [0, w), and every
 * HyperLogLog sketch's registers through sigma_s of [0, 2^p) (and the
 * sample's buckets, one run, the same way):
 *
 *     exported cell (r, pi_r(c))       = cell (r, c)
 *     exported register (s, sigma_s(i)) = register (s, i)
 *
 * and a candidate flow carries its d exported columns pi_r(col_r(hash)),
 * never the hash.  Cell-wise sums and register-wise maxima commute with a
 * fixed relabelling, so hosts of one secret merge exactly, and a reader
 * queries the merged cells with the candidates' columns, needing no secret
 * (merge.c, pgsql.c, dist/fleet_top.sql); a HyperLogLog estimate is a
 * function of the registers' histogram only, which a relabelling keeps
 * (Redis's PFCOUNT and postgresql-hll's hll_cardinality alike).
 *
 * The permutations are uniform given the secret: Fisher-Yates, each draw
 * j = floor(r * (i + 1) / 2^64) of r = SipHash-2-4 under the export key
 * of the word (what << 40 | index << 32 | k), what = 1 + the kind
 * (sketch_kind.h: 1 Count-Min, 2 HyperLogLog), index the run, k the
 * draw.  The export key is two words of SipHash-2-4 under the secret of
 * the two-word messages ("fsexport", 0) and ("fsexport", 1): two-word
 * messages are a domain of their own (the per-packet key and the
 * fingerprint hash one word, hash.h, params.h), and the daemon, which
 * wipes the secret once the datapath is loaded, keeps this key only, from
 * which the per-packet key cannot be had (SipHash is a PRF).  The draw's
 * bias is at most (i + 1) / 2^64 < 2^-41 per choice.  Built per export,
 * one run at a time: the longest run's words of memory (w or 2^p), one
 * SipHash call an element, d w + 3 2^p (about 1 ms at the defaults; the
 * 48 MiB answer cap bounds it to some 3 million calls).
 */
#ifndef FLOWSKETCH_EXPORT_PERM_H
#define FLOWSKETCH_EXPORT_PERM_H

#include <stddef.h>
#include "sketch.h"

/* The export key of a secret. */
void fs_export_key_derive(const struct fs_hash_secret *secret,
			  struct fs_hash_secret *export_key);

/* The permutation of run index of kind k's part, of [0, 2^log2n), under
 * the export key into perm. */
void fs_export_perm(const struct fs_hash_secret *export_key, enum fs_kind k,
		    __u32 index, __u32 log2n, __u32 *perm);

/*
 * The exported picture of in into out, which this fs_sketch_init()s with
 * in's params and totals; and the exported columns of n flow hashes into
 * cols[i * depth + row].  0 or -ENOMEM (nothing to free then).
 */
int fs_export_permute(const struct fs_sketch *in,
		      const struct fs_hash_secret *export_key,
		      const __u64 *hashes, size_t n, __u32 *cols,
		      struct fs_sketch *out);

#endif /* FLOWSKETCH_EXPORT_PERM_H */
