/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * params.h - the parameters that make two sketches mergeable.
 *
 * Count-Min sketches merge by adding cells and HyperLogLogs by taking the
 * register-wise max, but only when they were built with the same width,
 * depth, precision, hash and secret.  Merging mismatched sketches does not
 * fail loudly: it gives silently wrong counts.  So every sketch flowsketch
 * stores or exports carries this record, and every merge compares it first
 * (fs_params_mergeable()).
 *
 * Serialized layout (32 bytes, little-endian, version 1):
 *
 *   off size field
 *     0    4 magic           "FSK1" (0x314b5346 read as a LE u32)
 *     4    1 version         1
 *     5    1 cms_depth       d, Count-Min rows, 1..FS_CMS_MAX_DEPTH
 *     6    1 cms_log2_width  log2 w, Count-Min columns, FS_CMS_MIN..MAX_LOG2W
 *     7    1 hll_p           log2 m, HyperLogLog registers, FS_HLL_MIN..MAX_P
 *     8    1 flags           FS_PARAM_F_CONSERVATIVE: Count-Min conservative update
 *     9    1 nslots          window slots in the datapath maps (2)
 *    10    1 prefix_log2w    0: no prefix sketch; else its log2 w (prefix.h)
 *    11    1 prefix_shape    its depth << 4 | skip shift t
 *    12    1 spread_log2w    0: no spread sketch; else its log2 w (spread.h)
 *    13    1 spread_shape    its depth << 4 | sample shift s
 *    14    1 sample_log2b    0: no keyed sample; else log2 of its buckets (sample.h)
 *    15    1 sample_shift    its rate 2^-shift
 *    16   16 secret          SipHash key k0, k1 (hash.h)
 *
 * The detection sketches' bytes (10..13) and the sample's (14, 15) were
 * reserved, zero, before those structures: a record without them is the
 * same version, and a release that predates them refuses a record that
 * has them (a reserved byte not zero) instead of dropping a part it
 * cannot read.
 *
 * Error bounds the parameters imply (w = 2^log2w, m = 2^p):
 *   Count-Min: estimate >= truth always; estimate <= truth + eps*N with
 *   probability >= 1 - delta, eps = e / w, delta = e^-d (Cormode and
 *   Muthukrishnan 2005).  Width is a power of two so that a column is a mask
 *   of hash bits: a request for eps rounds w up, which only tightens eps.
 *   HyperLogLog: relative standard error 1.04 / sqrt(m).
 */
#ifndef FLOWSKETCH_PARAMS_H
#define FLOWSKETCH_PARAMS_H

#include "compat.h"
#include "hash.h"
#include "prefix.h"
#include "spread.h"
#include "sample.h"

#define FS_PARAMS_MAGIC 0x314b5346U /* "FSK1" */
#define FS_PARAMS_VERSION 1

#define FS_CMS_MAX_DEPTH 8
#define FS_CMS_MIN_LOG2W 4
#define FS_CMS_MAX_LOG2W 22
#define FS_HLL_MIN_P 4
#define FS_HLL_MAX_P 18
#define FS_NSLOTS 2

#define FS_PARAM_F_CONSERVATIVE 0x01

/* Defaults: eps = 0.1 % (w = 4096 after rounding up, eps = 0.066 %),
 * delta = 1 % (d = 5), p = 14 (0.81 %, Redis's choice). */
#define FS_DEFAULT_CMS_DEPTH 5
#define FS_DEFAULT_CMS_LOG2W 12
#define FS_DEFAULT_HLL_P 14

struct fs_sketch_params {
	__u32 magic;
	__u8 version;
	__u8 cms_depth;
	__u8 cms_log2_width;
	__u8 hll_p;
	__u8 flags;
	__u8 nslots;
	__u8 prefix_log2w;
	__u8 prefix_shape;
	__u8 spread_log2w;
	__u8 spread_shape;
	__u8 sample_log2b;
	__u8 sample_shift;
	struct fs_hash_secret secret;
};

_Static_assert(sizeof(struct fs_sketch_params) == 32, "params are 32 bytes");

/* A complete record: header, sizes, flags and secret, reserved bytes zero. */
FS_INLINE void fs_params_init(struct fs_sketch_params *p, __u32 cms_depth,
			      __u32 cms_log2_width, __u32 hll_p, __u32 flags,
			      const struct fs_hash_secret *secret)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->magic = FS_PARAMS_MAGIC;
	p->version = FS_PARAMS_VERSION;
	p->cms_depth = (__u8)cms_depth;
	p->cms_log2_width = (__u8)cms_log2_width;
	p->hll_p = (__u8)hll_p;
	p->flags = (__u8)flags;
	p->nslots = FS_NSLOTS;
	p->secret = *secret;
}

/* The detection sketches' parameters (bytes 10..13 above); depth 0 and
 * width 0 when the sketch is off. */
FS_INLINE void fs_params_prefix(const struct fs_sketch_params *p,
				struct fs_prefix_params *out)
{
	out->depth = p->prefix_log2w ? (__u32)p->prefix_shape >> 4 : 0;
	out->log2_width = p->prefix_log2w;
	out->skip_shift = (__u32)p->prefix_shape & 15;
}

FS_INLINE void fs_params_spread(const struct fs_sketch_params *p,
				struct fs_spread_params *out)
{
	out->depth = p->spread_log2w ? (__u32)p->spread_shape >> 4 : 0;
	out->log2_width = p->spread_log2w;
	out->sample_shift = (__u32)p->spread_shape & 15;
}

FS_INLINE void fs_params_sample(const struct fs_sketch_params *p,
				struct fs_sample_params *out)
{
	out->log2_buckets = p->sample_log2b;
	out->shift = p->sample_log2b ? p->sample_shift : 0;
}

FS_INLINE void fs_params_set_sample(struct fs_sketch_params *p,
				    const struct fs_sample_params *d)
{
	p->sample_log2b = (__u8)d->log2_buckets;
	p->sample_shift = (__u8)d->shift;
}

/* Turn a detection sketch on (fs_params_check() says whether the sizes
 * are in range). */
FS_INLINE void fs_params_set_prefix(struct fs_sketch_params *p,
				    const struct fs_prefix_params *d)
{
	p->prefix_log2w = (__u8)d->log2_width;
	p->prefix_shape = (__u8)(d->depth << 4 | (d->skip_shift & 15));
}

FS_INLINE void fs_params_set_spread(struct fs_sketch_params *p,
				    const struct fs_spread_params *d)
{
	p->spread_log2w = (__u8)d->log2_width;
	p->spread_shape = (__u8)(d->depth << 4 | (d->sample_shift & 15));
}

/*
 * A fingerprint of the secret, for records that must say which secret
 * their sketches were built with without holding it (the daemon's window
 * files, exports): SipHash-2-4 under the secret of a constant of its own,
 * so it reveals nothing of the key and no other use of the key makes it.
 */
FS_INLINE __u64 fs_params_fingerprint(const struct fs_hash_secret *s)
{
	const __u64 domain = 0x746e697270726e66ULL;	/* "fnrprint" */

	return fs_siphash_words(&domain, 1, s, 2, 4);
}

/* 0 when the parameters are in range, else a negative errno-style code. */
FS_INLINE int fs_params_check(const struct fs_sketch_params *p)
{

	if (p->magic != FS_PARAMS_MAGIC || p->version != FS_PARAMS_VERSION)
		return -22; /* EINVAL */
	if (p->cms_depth < 1 || p->cms_depth > FS_CMS_MAX_DEPTH)
		return -22;
	if (p->cms_log2_width < FS_CMS_MIN_LOG2W ||
	    p->cms_log2_width > FS_CMS_MAX_LOG2W)
		return -22;
	if (p->hll_p < FS_HLL_MIN_P || p->hll_p > FS_HLL_MAX_P)
		return -22;
	if (p->nslots != FS_NSLOTS)
		return -22;
	/* A flag or field this version does not know could change what the
	 * sketch means: refuse rather than misread a newer record. */
	if (p->flags & ~FS_PARAM_F_CONSERVATIVE)
		return -22;
	if (p->prefix_log2w) {
		struct fs_prefix_params d;

		fs_params_prefix(p, &d);
		if (fs_prefix_params_check(&d) || d.skip_shift > 15)
			return -22;
	} else if (p->prefix_shape) {
		return -22;
	}
	if (p->spread_log2w) {
		struct fs_spread_params d;

		fs_params_spread(p, &d);
		if (fs_spread_params_check(&d))
			return -22;
	} else if (p->spread_shape) {
		return -22;
	}
	if (p->sample_log2b) {
		struct fs_sample_params d;

		fs_params_sample(p, &d);
		if (fs_sample_params_check(&d))
			return -22;
	} else if (p->sample_shift) {
		return -22;
	}
	return 0;
}

/*
 * Two sketches merge only when everything that places a key is equal.
 * The update rule is not compared: standard and conservative Count-Min
 * cells are both upper bounds of the truth, so their sum is one too (with
 * the bound of the standard sketch); only subtraction would be wrong.
 */
FS_INLINE int fs_params_mergeable(const struct fs_sketch_params *a,
				  const struct fs_sketch_params *b)
{
	return a->cms_depth == b->cms_depth &&
	       a->cms_log2_width == b->cms_log2_width &&
	       a->hll_p == b->hll_p &&
	       a->prefix_log2w == b->prefix_log2w && a->prefix_shape == b->prefix_shape &&
	       a->spread_log2w == b->spread_log2w && a->spread_shape == b->spread_shape &&
	       a->sample_log2b == b->sample_log2b && a->sample_shift == b->sample_shift &&
	       a->secret.k0 == b->secret.k0 && a->secret.k1 == b->secret.k1;
}

#endif /* FLOWSKETCH_PARAMS_H */
