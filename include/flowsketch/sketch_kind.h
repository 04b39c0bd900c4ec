/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sketch_kind.h - every sketch kind's facts, once, and the datapath maps
 * that hold them: what rotation, the history, the window store, the
 * native format, the exports and the loaders loop over.  The lists of
 * kinds and maps are for every build (the datapath makes its maps, chunk
 * lookups and kfunc arguments from them); the rows, which need stdio for
 * their messages, are for user space only.
 *
 *  kind  part element     per slot E   merge       datapath maps (FS_DP_MAPS below)
 *  ----  ---------------  -----------  ----------  ------------------------------------
 *  cms   fs_cms_cell, 16  d << log2w   sum of u64  fs_cms_narrow, spilling into fs_cms
 *  hll   register, 1      3 << p       max of u8   fs_hll_packed (fs_hll: older releases)
 *  prefix, spread  detect.h's buckets, 64 B, merged as their headers say
 *  sample  fs_sample_bucket, 512  2^b  sample.h's  fs_sample (0 elements: off)
 *
 * Layout: chunk.h (slots in per-CPU map elements of 32 KiB).  Zeroing:
 * zero is empty for every map (a cell counts nothing, a register has
 * seen no rank), so a slot is cleared by writing zeros over its chunks.
 * Merge: exact for both (cms.h, hll.h): words add, or take the max; a
 * fold of the datapath's maps unpacks each map's elements into the part
 * (fs_dp_maps[].fold: Count-Min's report flags masked, narrow cells'
 * fields added, packed registers taken apart).  Serialised form (the native export, user/lib/native.h,
 * and the daemon's export answer, protocol.h): the elements as words of
 * word_bytes, each little-endian, kind after kind (the native file puts
 * each kind's count E, 8 bytes, first); the window files (winstore.h)
 * hold them in host order, E * elem_bytes bytes.  A word above word_max
 * in a file or an answer is refused (a HyperLogLog register above its
 * precision's largest rank).  Exported, a part is in secret coordinates:
 * each run of 1 << perm_shift elements (a Count-Min row, a HyperLogLog
 * sketch, the sample's buckets) permuted, elements whole (export_perm.h),
 * and the sample's buckets cut to what may leave the host (export_elem).
 *
 * Adding a sketch kind of fixed size touches 6 files (one sized by a
 * parameter of its own adds it to params.h and to what reads, checks and
 * prints the parameters):
 *   include/flowsketch/KIND.h   new: element, struct fs_KIND_chunk, chunk
 *     shift, E, fs_KIND_chunks(), update arithmetic
 *   include/flowsketch/sketch_kind.h   its FS_SKETCH_KINDS entry and row,
 *     its datapath map's FS_DP_MAPS entry and fs_dp_maps[] row (fold)
 *   include/flowsketch/update.h   the per-packet update, hand-written for
 *     the verifier (each build's fs_env_chunk() takes the map)
 *   include/flowsketch/kfunc.h   a new ABI version (FS_KFUNC_UPDATE_FN):
 *     the map is one more kfunc argument, made from FS_KFUNC_MAPS; the
 *     three maps there leave none (a kfunc takes five arguments): the
 *     maps would have to be gathered first, in a map of maps
 *   user/lib/native.h, user/flowsketchd/windows/winstore.h   the version
 *     and the layout of each format that gains a part
 * Everything else takes the kind and its maps from here: the datapath's
 * maps, their lookups and the kfunc's map checks, the model, pins, map
 * sizes, memory sums, rotation's fold, the history, merge, the window
 * files, the native file, the export's secret coordinates, the export
 * answer and its reader.
 * Optional: pgsql.c (its PostgreSQL tables) and whatever answers queries
 * from it.
 */
#ifndef FLOWSKETCH_SKETCH_KIND_H
#define FLOWSKETCH_SKETCH_KIND_H

#include "compat.h"
#include "chunk.h"
#include "cms.h"
#include "hll.h"
#include "detect.h"
#include "sample.h"

/*
 * Every kind's name, in kind order, for what must be known while
 * compiling: X(NAME, name) gives FS_KIND_NAME (the part of a merged
 * sketch, user/lib/sketch.h).  FS_KIND_PIN(name) and FS_KIND_MAP(name)
 * name a datapath map's pin and map (FS_DP_MAPS below).
 */
#define FS_SKETCH_KINDS(X) X(CMS, cms) X(HLL, hll) X(PREFIX, prefix) X(SPREAD, spread) \
			   X(SAMPLE, sample)
#define FS_KIND_PIN(name) #name
#define FS_KIND_MAP(name) "fs_" #name

/*
 * The keyed sample's map (sample.h): fs_sample, PERCPU_ARRAY of struct
 * fs_sample_chunk (64 buckets of 512 B), E = 2^b buckets a slot, numbered
 * as chunk.h numbers every map; 0 (one unused element) when it is off.
 */
FS_INLINE __u64 fs_params_sample_buckets(const struct fs_sketch_params *p)
{
	return p->sample_log2b ? 1ULL << p->sample_log2b : 0;
}

FS_INLINE __u64 fs_sample_element(const struct fs_sketch_params *p, __u32 slot,
				  __u32 bucket)
{
	return slot * fs_chunk_stride(fs_params_sample_buckets(p), FS_SAMPLE_CHUNK_SHIFT) +
	       bucket;
}

#define FS_KIND_ENUM(NAME, name) FS_KIND_##NAME,
enum fs_kind {
	FS_SKETCH_KINDS(FS_KIND_ENUM)
	FS_NKINDS
};
#undef FS_KIND_ENUM

/*
 * The datapath's maps of sketch state.  A kind's part is held by one or
 * more per-CPU maps, and the fold of a slot is every one of them folded
 * into its kind's part (fs_dp_maps below):
 *
 *  map             element                per slot        chunk  fold into part
 *  --------------  ---------------------  --------------  -----  -----------------------------
 *  fs_cms          fs_cms_cell, 16 B      d << log2w      2^11   cms: += words & COUNT_MASK
 *  fs_cms_narrow   __u32 narrow cell      d << log2w      2^13   cms: += its packets, bytes
 *  fs_hll          register, 1 B          3 << p          2^15   hll: max
 *  fs_hll_packed   __u32 of 5 registers   ceil(3 << p/5)  2^13   hll: max of each 6-bit field
 *
 * The datapath counts in fs_cms_narrow and fs_hll_packed, the working set
 * a packet touches (cms.h, "Narrow cells"; hll.h, "Packed registers"), and
 * spills into fs_cms.  fs_hll and fs_cms's report flags are what the
 * datapath of a release before the narrow layout writes: a daemon that
 * adopts such a datapath (its tracepoint programs stay attached until
 * --replace) folds them like the rest, so nothing they count is lost; a
 * new datapath never writes fs_hll, and the wide-cell build of the tests
 * and the benchmark (FS_CMS_WIDE, update.h) writes only fs_cms and fs_hll.
 *
 * Legacy maps (fs_hll, .legacy in fs_dp_maps[]).  A daemon that loads a
 * datapath afresh gives fs_hll FS_DP_LEGACY_CHUNKS element (an array map
 * needs one; the map stays, under its name, pin and value type, for the
 * kernel module's name checks, bpftool and an adopting daemon), and its
 * rotation neither reads, folds nor zeroes it.  A rotation tells that from
 * the map alone (fs_dp_map_folded()): one chunk cannot hold FS_NSLOTS
 * slots of a chunk or more each.  A datapath pinned by an earlier release,
 * whose programs write fs_hll, is adopted on its pinned fs_hll, whole, and
 * folded as before; so is one pinned by a daemon of this release that had
 * adopted such a datapath (the map keeps its size through every adoption,
 * until --replace).  Per CPU at the defaults (d = 5, log2w = 12, p = 14;
 * chunks of 32 KiB, each slot rounded up to whole chunks, chunk.h):
 *
 *  map             a slot                       chunks    fresh         adopted
 *  fs_cms          20480 x 16 B = 320 KiB       10 x 2    640 KiB       640 KiB
 *  fs_cms_narrow   20480 x 4 B = 80 KiB         3 x 2     192 KiB       192 KiB
 *  fs_hll          49152 x 1 B = 48 KiB         2 x 2     32 KiB (1)    128 KiB
 *  fs_hll_packed   9831 x 4 B = 38.4 KiB        2 x 2     128 KiB       128 KiB
 *  total                                                  992 KiB       1088 KiB
 *
 * and a rotation reads and zeroes one slot: 320 + 96 + 64 = 480 KiB a CPU
 * fresh, 544 KiB with an earlier release's fs_hll.
 * X(NAME, name, KIND): map "fs_" #name, pin #name, struct
 * fs_name_chunk, fs_name_chunks(p, nslots), and the kind it folds into.
 * FS_KFUNC_MAPS are the ones the kernel module's kfunc writes (kfunc.h).
 */
#define FS_DP_MAPS(X) X(CMS, cms, CMS) X(CMS_NARROW, cms_narrow, CMS)	\
		      X(HLL, hll, HLL) X(HLL_PACKED, hll_packed, HLL)	\
		      X(PREFIX, prefix, PREFIX) X(SPREAD, spread, SPREAD)	\
		      X(SAMPLE, sample, SAMPLE)
#define FS_KFUNC_MAPS(X) X(CMS, cms, CMS) X(CMS_NARROW, cms_narrow, CMS)	\
			 X(HLL_PACKED, hll_packed, HLL)

#define FS_DP_ENUM(NAME, name, KIND) FS_DP_##NAME,
enum fs_dp_map {
	FS_DP_MAPS(FS_DP_ENUM)
	FS_NDPMAPS
};
#undef FS_DP_ENUM

#if !defined(__bpf__) && !defined(__KERNEL__)
#include <stdbool.h>
#include <stdio.h>

/* The word type the merge works on says the word's size; the detection
 * sketches' buckets (64 bytes, 8 words) merge as their headers say. */
enum fs_merge {
	FS_MERGE_SUM64,		/* __u64 words add */
	FS_MERGE_MAX8,		/* __u8 words take the max */
	FS_MERGE_PREFIX,	/* fs_prefix_bucket_merge(), prefix.h */
	FS_MERGE_SPREAD,	/* fs_spread_bucket_merge(), spread.h */
	FS_MERGE_SAMPLE,	/* fs_sample_bucket_merge(), sample.h */
};

struct fs_sketch_kind {
	const char *noun;		/* one element, in messages (+"s": many) */
	const char *count_key;		/* E in an export answer: sketch.KEY */
	__u32 elem_bytes;		/* one cell or register */
	__u32 word_bytes;		/* 8 or 1, as merge says */
	enum fs_merge merge;
	__u64 (*per_slot)(const struct fs_sketch_params *p);	/* E */
	/* The largest word a sketch can hold; NULL: any. */
	__u64 (*word_max)(const struct fs_sketch_params *p);
	/* For messages: how p makes E ("depth 2 times width 16 make 32"),
	 * and, with word_max, what bounds a word ("precision 4"). */
	void (*say_count)(char *buf, size_t len, const struct fs_sketch_params *p);
	void (*say_bound)(char *buf, size_t len, const struct fs_sketch_params *p);
	/* An export moves the elements whole, in runs of 1 << perm_shift
	 * (a Count-Min row, a HyperLogLog sketch), each run through a
	 * secret permutation of its own (export_perm.h). */
	__u32 (*perm_shift)(const struct fs_sketch_params *p);
	/* What an export does to an element besides moving it (NULL:
	 * nothing): the sample's buckets hold raw keyed hashes, which an
	 * export cuts to their leading bits (sample.h, "Exports"). */
	void (*export_elem)(void *elem, const struct fs_sketch_params *p);
};

static inline __u32 fs_cms_perm_shift(const struct fs_sketch_params *p)
{
	return p->cms_log2_width;
}

static inline void fs_cms_say_count(char *buf, size_t len,
				    const struct fs_sketch_params *p)
{
	snprintf(buf, len, "depth %u times width %u make %llu", p->cms_depth,
		 1U << p->cms_log2_width,
		 (unsigned long long)fs_cms_cells_per_slot(p));
}

/* The rank a register can reach (hll.h); 0 is never set. */
static inline __u64 fs_hll_word_max(const struct fs_sketch_params *p)
{
	return 65 - p->hll_p;
}

static inline void fs_hll_say_count(char *buf, size_t len,
				    const struct fs_sketch_params *p)
{
	snprintf(buf, len, "precision %u makes %llu (3 sketches of 2^%u)",
		 p->hll_p, (unsigned long long)fs_hll_regs_per_slot(p), p->hll_p);
}

static inline void fs_hll_say_bound(char *buf, size_t len,
				    const struct fs_sketch_params *p)
{
	snprintf(buf, len, "precision %u", p->hll_p);
}

static inline __u32 fs_hll_perm_shift(const struct fs_sketch_params *p)
{
	return p->hll_p;
}

static inline __u32 fs_prefix_perm_shift(const struct fs_sketch_params *p)
{
	return p->prefix_log2w;
}

static inline __u32 fs_spread_perm_shift(const struct fs_sketch_params *p)
{
	return p->spread_log2w;
}

static inline void fs_prefix_say_count(char *buf, size_t len,
				       const struct fs_sketch_params *p)
{
	snprintf(buf, len, "prefix depth %u times width %u make %llu",
		 p->prefix_shape >> 4, p->prefix_log2w ? 1U << p->prefix_log2w : 0,
		 (unsigned long long)fs_prefix_buckets_per_slot(p));
}

static inline void fs_spread_say_count(char *buf, size_t len,
				       const struct fs_sketch_params *p)
{
	snprintf(buf, len, "2 sides of spread depth %u times width %u make %llu",
		 p->spread_shape >> 4, p->spread_log2w ? 1U << p->spread_log2w : 0,
		 (unsigned long long)fs_spread_buckets_per_slot(p));
}

static inline __u32 fs_sample_perm_shift(const struct fs_sketch_params *p)
{
	return p->sample_log2b;
}

static inline void fs_sample_export_elem(void *elem, const struct fs_sketch_params *p)
{
	fs_sample_bucket_export(elem, p->sample_shift);
}

static inline void fs_sample_say_count(char *buf, size_t len,
				       const struct fs_sketch_params *p)
{
	snprintf(buf, len, "%llu sample buckets",
		 (unsigned long long)fs_params_sample_buckets(p));
}

static const struct fs_sketch_kind fs_sketch_kinds[FS_NKINDS] = {
	[FS_KIND_CMS] = {
		.noun = "Count-Min cell",
		.count_key = "cells",
		.elem_bytes = sizeof(struct fs_cms_cell),
		.word_bytes = 8,
		.merge = FS_MERGE_SUM64,
		.per_slot = fs_cms_cells_per_slot,
		.say_count = fs_cms_say_count,
		.perm_shift = fs_cms_perm_shift,
	},
	[FS_KIND_HLL] = {
		.noun = "HyperLogLog register",
		.count_key = "registers",
		.elem_bytes = 1,
		.word_bytes = 1,
		.merge = FS_MERGE_MAX8,
		.per_slot = fs_hll_regs_per_slot,
		.word_max = fs_hll_word_max,
		.say_count = fs_hll_say_count,
		.say_bound = fs_hll_say_bound,
		.perm_shift = fs_hll_perm_shift,
	},
	/* The detection sketches: E = 0 when the parameters leave them off
	 * (detect.h), a part of no bytes. */
	[FS_KIND_PREFIX] = {
		.noun = "prefix bucket",
		.count_key = "prefix_buckets",
		.elem_bytes = sizeof(struct fs_prefix_bucket),
		.word_bytes = 8,
		.merge = FS_MERGE_PREFIX,
		.per_slot = fs_prefix_buckets_per_slot,
		.say_count = fs_prefix_say_count,
		.perm_shift = fs_prefix_perm_shift,
	},
	[FS_KIND_SPREAD] = {
		.noun = "spread bucket",
		.count_key = "spread_buckets",
		.elem_bytes = sizeof(struct fs_spread_bucket),
		.word_bytes = 8,
		.merge = FS_MERGE_SPREAD,
		.per_slot = fs_spread_buckets_per_slot,
		.say_count = fs_spread_say_count,
		.perm_shift = fs_spread_perm_shift,
	},
	/* The keyed sample (sample.h): E = 0 when it is off. */
	[FS_KIND_SAMPLE] = {
		.noun = "sample bucket",
		.count_key = "sample_buckets",
		.elem_bytes = sizeof(struct fs_sample_bucket),
		.word_bytes = 8,
		.merge = FS_MERGE_SAMPLE,
		.per_slot = fs_params_sample_buckets,
		.say_count = fs_sample_say_count,
		.perm_shift = fs_sample_perm_shift,
		.export_elem = fs_sample_export_elem,
	},
};

/* Word i of a part of kind k (a merged sketch's, sketch.h). */
FS_INLINE __u64 fs_kind_word(enum fs_kind k, const void *part, __u64 i)
{
	return fs_sketch_kinds[k].word_bytes == 8 ? ((const __u64 *)part)[i] :
						      ((const __u8 *)part)[i];
}

FS_INLINE void fs_kind_set_word(enum fs_kind k, void *part, __u64 i, __u64 v)
{
	if (fs_sketch_kinds[k].word_bytes == 8)
		((__u64 *)part)[i] = v;
	else
		((__u8 *)part)[i] = (__u8)v;
}

/* Bytes of one slot of kind k (a merged sketch's part). */
FS_INLINE __u64 fs_kind_slot_bytes(enum fs_kind k, const struct fs_sketch_params *p)
{
	return fs_sketch_kinds[k].per_slot(p) * fs_sketch_kinds[k].elem_bytes;
}

/*
 * A datapath map's facts (the table above).  fold adds the elements
 * [b, e) of one CPU's chunk (c holds element b first) to the part of
 * kind `kind`, whose element i is the slot's element i (b and e are
 * numbered within the slot).
 */
struct fs_dp_map_desc {
	const char *map;		/* the datapath's map (maps.h) */
	/* Written only by an earlier release's datapath (above): made
	 * with FS_DP_LEGACY_CHUNKS elements, folded only when it is whole. */
	bool legacy;
	const char *pin;		/* its pin, in the pin directory */
	enum fs_kind kind;		/* the part it folds into */
	__u32 chunk_shift;		/* elements a chunk: 1 << chunk_shift */
	__u64 (*per_slot)(const struct fs_sketch_params *p);
	void (*fold)(void *part, const void *c, __u64 b, __u64 e,
		     const struct fs_sketch_params *p);
};

/* Folds, written as straight loops that the compiler vectorizes where it
 * can: a rotation folds every element of every CPU. */
static inline void fs_fold_cms(void *part, const void *c, __u64 b, __u64 e,
			       const struct fs_sketch_params *p)
{
	__u64 *d = (__u64 *)part + 2 * b;
	const __u64 *v = c;
	__u64 i, n = 2 * (e - b);

	(void)p;
	for (i = 0; i < n; i++)
		d[i] += v[i] & FS_CMS_COUNT_MASK;
}

static inline void fs_fold_cms_narrow(void *part, const void *c, __u64 b,
				      __u64 e, const struct fs_sketch_params *p)
{
	struct fs_cms_cell *d = (struct fs_cms_cell *)part + b;
	const __u32 *v = c;
	__u64 i, n = e - b;

	(void)p;
	for (i = 0; i < n; i++) {
		d[i].packets += fs_cmsn_packets(v[i]);
		d[i].bytes += fs_cmsn_bytes(v[i]);
	}
}

static inline void fs_fold_hll(void *part, const void *c, __u64 b, __u64 e,
			       const struct fs_sketch_params *p)
{
	__u8 *d = (__u8 *)part + b;
	const __u8 *v = c;
	__u64 i, n = e - b;

	(void)p;
	for (i = 0; i < n; i++)
		d[i] = v[i] > d[i] ? v[i] : d[i];
}

/* The max of register *d and field f of word w (hll.h). */
static inline void fs_fold_hll_field(__u8 *d, __u32 w, __u32 f)
{
	__u8 x = fs_hll_packed_get(w, f);

	*d = x > *d ? x : *d;
}

/*
 * Words [b, e) hold registers [5b, 5e), of which those below 3 << p are
 * the slot's (the last word's top fields are padding, always zero).  The
 * words whose five fields are all the slot's, all but at most the last,
 * go without a bound per field, five fields unrolled: a rotation unpacks
 * every word of every CPU, and the bound and the loop cost more than the
 * fields.  A zero word (five empty registers, common in a light window)
 * leaves the part as it is.
 */
static inline void fs_fold_hll_packed(void *part, const void *c, __u64 b,
				      __u64 e, const struct fs_sketch_params *p)
{
	__u8 *d = (__u8 *)part + b * FS_HLL_PACKED_PER_WORD;
	const __u32 *v = c;
	__u64 regs = fs_hll_regs_per_slot(p), full = regs / FS_HLL_PACKED_PER_WORD;
	__u64 i, n = e - b, whole = full > b ? full - b : 0;
	__u32 f;

	if (whole > n)
		whole = n;
#ifdef FS_MUTANT_PACKED_UNBOUNDED	/* `make mutants` only: padding read */
	whole = n;
#endif
	for (i = 0; i < whole; i++, d += FS_HLL_PACKED_PER_WORD) {
		__u32 w = v[i];

		if (!w)
			continue;
		fs_fold_hll_field(d, w, 0);
		fs_fold_hll_field(d + 1, w, 1);
		fs_fold_hll_field(d + 2, w, 2);
		fs_fold_hll_field(d + 3, w, 3);
		fs_fold_hll_field(d + 4, w, 4);
	}
	_Static_assert(FS_HLL_PACKED_PER_WORD == 5, "the unrolled fields");
	for (; i < n; i++, d += FS_HLL_PACKED_PER_WORD)
		for (f = 0; f < FS_HLL_PACKED_PER_WORD; f++)
			if ((b + i) * FS_HLL_PACKED_PER_WORD + f < regs)
				fs_fold_hll_field(d + f, v[i], f);
}

/* The detection sketches' buckets merge, each CPU's into the part. */
static inline void fs_fold_prefix(void *part, const void *c, __u64 b, __u64 e,
				  const struct fs_sketch_params *p)
{
	struct fs_prefix_bucket *d = (struct fs_prefix_bucket *)part + b;
	const struct fs_prefix_bucket *v = c;
	__u64 i;

	(void)p;
	for (i = 0; i < e - b; i++)
		fs_prefix_bucket_merge(&d[i], &v[i]);
}

static inline void fs_fold_spread(void *part, const void *c, __u64 b, __u64 e,
				  const struct fs_sketch_params *p)
{
	struct fs_spread_bucket *d = (struct fs_spread_bucket *)part + b;
	const struct fs_spread_bucket *v = c;
	__u64 i;

	(void)p;
	for (i = 0; i < e - b; i++)
		fs_spread_bucket_merge(&d[i], &v[i]);
}

static inline void fs_fold_sample(void *part, const void *c, __u64 b, __u64 e,
				  const struct fs_sketch_params *p)
{
	struct fs_sample_bucket *d = (struct fs_sample_bucket *)part + b;
	const struct fs_sample_bucket *v = c;
	__u64 i;

	for (i = 0; i < e - b; i++)
		fs_sample_bucket_merge(&d[i], &v[i], p->sample_shift);
}

static const struct fs_dp_map_desc fs_dp_maps[FS_NDPMAPS] = {
	[FS_DP_CMS] = {
		.map = FS_KIND_MAP(cms), .pin = FS_KIND_PIN(cms),
		.kind = FS_KIND_CMS, .chunk_shift = FS_CMS_CHUNK_SHIFT,
		.per_slot = fs_cms_cells_per_slot, .fold = fs_fold_cms,
	},
	[FS_DP_CMS_NARROW] = {
		.map = FS_KIND_MAP(cms_narrow), .pin = FS_KIND_PIN(cms_narrow),
		.kind = FS_KIND_CMS, .chunk_shift = FS_CMSN_CHUNK_SHIFT,
		.per_slot = fs_cms_cells_per_slot, .fold = fs_fold_cms_narrow,
	},
	[FS_DP_HLL] = {
		.map = FS_KIND_MAP(hll), .pin = FS_KIND_PIN(hll),
		.kind = FS_KIND_HLL, .chunk_shift = FS_HLL_CHUNK_SHIFT,
		.per_slot = fs_hll_regs_per_slot, .fold = fs_fold_hll,
		.legacy = true,
	},
	[FS_DP_HLL_PACKED] = {
		.map = FS_KIND_MAP(hll_packed), .pin = FS_KIND_PIN(hll_packed),
		.kind = FS_KIND_HLL, .chunk_shift = FS_HLL_PACKED_CHUNK_SHIFT,
		.per_slot = fs_hll_packed_words_per_slot,
		.fold = fs_fold_hll_packed,
	},
	[FS_DP_PREFIX] = {
		.map = FS_KIND_MAP(prefix), .pin = FS_KIND_PIN(prefix),
		.kind = FS_KIND_PREFIX, .chunk_shift = FS_DETECT_CHUNK_SHIFT,
		.per_slot = fs_prefix_buckets_per_slot, .fold = fs_fold_prefix,
	},
	[FS_DP_SPREAD] = {
		.map = FS_KIND_MAP(spread), .pin = FS_KIND_PIN(spread),
		.kind = FS_KIND_SPREAD, .chunk_shift = FS_DETECT_CHUNK_SHIFT,
		.per_slot = fs_spread_buckets_per_slot, .fold = fs_fold_spread,
	},
	[FS_DP_SAMPLE] = {
		.map = FS_KIND_MAP(sample), .pin = FS_KIND_PIN(sample),
		.kind = FS_KIND_SAMPLE, .chunk_shift = FS_SAMPLE_CHUNK_SHIFT,
		.per_slot = fs_params_sample_buckets, .fold = fs_fold_sample,
	},
};

/* The first element of slot in map m (chunk.h numbering). */
FS_INLINE __u64 fs_dp_first(enum fs_dp_map m, const struct fs_sketch_params *p,
			    __u32 slot)
{
	return slot * fs_chunk_stride(fs_dp_maps[m].per_slot(p),
				      fs_dp_maps[m].chunk_shift);
}

/* Chunks of one slot of map m; map elements of all nslots. */
FS_INLINE __u32 fs_dp_slot_chunks(enum fs_dp_map m, const struct fs_sketch_params *p)
{
	return fs_chunks_per_slot(fs_dp_maps[m].per_slot(p),
				  fs_dp_maps[m].chunk_shift);
}

/* A map of no slot (a detection sketch the parameters leave off) still
 * has one element: an array map needs one.  Nothing writes or reads it. */
FS_INLINE __u32 fs_dp_chunks(enum fs_dp_map m, const struct fs_sketch_params *p,
			     __u32 nslots)
{
	__u32 n = fs_chunk_count(fs_dp_maps[m].per_slot(p),
				 fs_dp_maps[m].chunk_shift, nslots);

	return n ? n : 1;
}

/* A legacy map's elements in a datapath loaded afresh (above). */
#define FS_DP_LEGACY_CHUNKS 1U
_Static_assert(FS_DP_LEGACY_CHUNKS < FS_NSLOTS, "a fresh legacy map holds no slot");

/* Elements of map m in a datapath this release loads afresh. */
FS_INLINE __u32 fs_dp_fresh_chunks(enum fs_dp_map m, const struct fs_sketch_params *p,
				   __u32 nslots)
{
	return fs_dp_maps[m].legacy ? FS_DP_LEGACY_CHUNKS : fs_dp_chunks(m, p, nslots);
}

/*
 * Does a rotation read, fold and zero map m, which has max_entries
 * elements?  Not one of no slot (a detection sketch left off, its one
 * element unused).  Every other map but a legacy one; a legacy one when it holds all
 * nslots slots (an adopted earlier release's datapath writes it), not at
 * FS_DP_LEGACY_CHUNKS (nothing writes it).
 */
FS_INLINE bool fs_dp_map_folded(enum fs_dp_map m, const struct fs_sketch_params *p,
				__u32 nslots, __u32 max_entries)
{
	if (!fs_dp_maps[m].per_slot(p))		/* a map of no slot */
		return false;
	return !fs_dp_maps[m].legacy || max_entries >= fs_dp_chunks(m, p, nslots);
}

/* Per-CPU bytes of every datapath map holding nslots slots, as this
 * release loads them afresh (what a CPU's copy of the datapath's sketches
 * takes: 992 KiB at the defaults, table above). */
FS_INLINE __u64 fs_dp_percpu_bytes(const struct fs_sketch_params *p, __u32 nslots)
{
	__u64 bytes = 0;
	int m;

	for (m = 0; m < FS_NDPMAPS; m++)
		bytes += (__u64)fs_dp_fresh_chunks((enum fs_dp_map)m, p, nslots) *
			 FS_CHUNK_BYTES;
	return bytes;
}

/*
 * The per-CPU bytes a packet can touch in the open slot: its narrow cells
 * and packed registers (4 bytes each, d << log2w cells and ceil(3 << p / 5)
 * words), the working set the caches must keep.  The wide cells a spill
 * writes are left out: a row's spill comes at most once in 59 of its
 * packets (cms.h), so their lines are not part of what every packet needs.
 * 118.4 KiB at the defaults; the wide layout's was d << log2w cells of 16
 * bytes and 3 << p byte registers, 368 KiB.
 */
FS_INLINE __u64 fs_dp_packet_bytes(const struct fs_sketch_params *p)
{
	return fs_cms_cells_per_slot(p) * sizeof(__u32) +
	       fs_hll_packed_words_per_slot(p) * sizeof(__u32);
}

FS_INLINE __u64 fs_dp_packet_bytes_wide(const struct fs_sketch_params *p)
{
	return fs_cms_cells_per_slot(p) * sizeof(struct fs_cms_cell) +
	       fs_hll_regs_per_slot(p);
}

#endif /* user space */
#endif /* FLOWSKETCH_SKETCH_KIND_H */
