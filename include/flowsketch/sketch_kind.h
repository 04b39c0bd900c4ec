/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sketch_kind.h - every sketch kind's facts, once: what rotation, the
 * history, the window store, the native format, the exports and the
 * loaders loop over.  The list of kinds is for every build (the datapath
 * makes its maps, chunk lookups and kfunc arguments from it); the rows,
 * which need stdio for their messages, are for user space only.
 *
 *  kind  map (pin)     element          per slot E       chunk  merge       fold mask
 *  ----  ------------  ---------------  ---------------  -----  ----------  -----------------
 *  cms   fs_cms (cms)  fs_cms_cell, 16  d << log2w       2^11   sum of u64  FS_CMS_COUNT_MASK
 *  hll   fs_hll (hll)  register, 1      3 << p           2^15   max of u8   (none)
 *
 * Layout: chunk.h (slots in per-CPU map elements of 32 KiB).  Zeroing:
 * zero is empty for every kind (a cell counts nothing, a register has
 * seen no rank), so a slot is cleared by writing zeros over its chunks.
 * Merge: exact for both (cms.h, hll.h): words add, or take the max; a
 * fold of the datapath's copy masks each word first (Count-Min's report
 * flags, cms.h).  Serialised form (the native export, user/lib/native.h,
 * and the daemon's export answer, protocol.h): the elements as words of
 * word_bytes, each little-endian, kind after kind (the native file puts
 * each kind's count E, 8 bytes, first); the window files (winstore.h)
 * hold them in host order, E * elem_bytes bytes.  A word above word_max
 * in a file or an answer is refused (a HyperLogLog register above its
 * precision's largest rank).  Exported, a part is in secret coordinates:
 * each run of 1 << perm_shift elements (a Count-Min row, a HyperLogLog
 * sketch) permuted, elements whole (export_perm.h).
 *
 * Adding a sketch kind of fixed size touches 6 files (one sized by a
 * parameter of its own adds it to params.h and to what reads, checks and
 * prints the parameters):
 *   include/flowsketch/KIND.h   new: element, struct fs_KIND_chunk, chunk
 *     shift, E, fs_KIND_chunks(), update arithmetic
 *   include/flowsketch/sketch_kind.h   its FS_SKETCH_KINDS entry and row
 *   include/flowsketch/update.h   the per-packet update, hand-written for
 *     the verifier (each build's fs_env_chunk() takes the kind)
 *   include/flowsketch/kfunc.h   a new ABI version (FS_KFUNC_UPDATE_FN):
 *     the kind's map is one more kfunc argument, made from FS_SKETCH_KINDS
 *     (room for a third kind only: a kfunc takes five arguments)
 *   user/lib/native.h, user/flowsketchd/windows/winstore.h   the version
 *     and the layout of each format that gains a part
 * Everything else takes the kind from here: the datapath's maps, their
 * lookups and the kfunc's map checks, the model, pins, map sizes, memory
 * sums, rotation, the history, merge, the window files, the native file,
 * the export's secret coordinates, the export answer and its reader.
 * Optional: pgsql.c (its PostgreSQL tables) and whatever answers queries
 * from it.
 */
#ifndef FLOWSKETCH_SKETCH_KIND_H
#define FLOWSKETCH_SKETCH_KIND_H

#include "compat.h"
#include "chunk.h"
#include "cms.h"
#include "hll.h"

/*
 * Every kind's name, in kind order, for what must be known while
 * compiling: X(NAME, name) gives FS_KIND_NAME, its pin FS_KIND_PIN(name)
 * and its map FS_KIND_MAP(name), a per-CPU array of struct fs_name_chunk
 * (FS_CHUNK_BYTES each) with fs_name_chunks() elements, both from the
 * kind's header.  The datapath's maps (maps.bpf.h), the module's map
 * checks and the kfunc's map arguments (kfunc.h) are made from it.
 */
#define FS_SKETCH_KINDS(X) X(CMS, cms) X(HLL, hll)
#define FS_KIND_PIN(name) #name
#define FS_KIND_MAP(name) "fs_" #name

#define FS_KIND_ENUM(NAME, name) FS_KIND_##NAME,
enum fs_kind {
	FS_SKETCH_KINDS(FS_KIND_ENUM)
	FS_NKINDS
};
#undef FS_KIND_ENUM

#if !defined(__bpf__) && !defined(__KERNEL__)
#include <stdio.h>

/* The word type the merge works on says the word's size. */
enum fs_merge {
	FS_MERGE_SUM64,		/* __u64 words add */
	FS_MERGE_MAX8,		/* __u8 words take the max */
};

struct fs_sketch_kind {
	const char *map;		/* the datapath's map (maps.h) */
	const char *pin;		/* its pin, in the pin directory */
	const char *noun;		/* one element, in messages (+"s": many) */
	const char *count_key;		/* E in an export answer: sketch.KEY */
	__u32 elem_bytes;		/* one cell or register */
	__u32 word_bytes;		/* 8 or 1, as merge says */
	__u32 chunk_shift;		/* elements a chunk: 1 << chunk_shift */
	enum fs_merge merge;
	__u64 fold_mask;		/* on each datapath word folded */
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

static const struct fs_sketch_kind fs_sketch_kinds[FS_NKINDS] = {
	[FS_KIND_CMS] = {
		.map = FS_KIND_MAP(cms),
		.pin = FS_KIND_PIN(cms),
		.noun = "Count-Min cell",
		.count_key = "cells",
		.elem_bytes = sizeof(struct fs_cms_cell),
		.word_bytes = 8,
		.chunk_shift = FS_CMS_CHUNK_SHIFT,
		.merge = FS_MERGE_SUM64,
		.fold_mask = FS_CMS_COUNT_MASK,
		.per_slot = fs_cms_cells_per_slot,
		.say_count = fs_cms_say_count,
		.perm_shift = fs_cms_perm_shift,
	},
	[FS_KIND_HLL] = {
		.map = FS_KIND_MAP(hll),
		.pin = FS_KIND_PIN(hll),
		.noun = "HyperLogLog register",
		.count_key = "registers",
		.elem_bytes = 1,
		.word_bytes = 1,
		.chunk_shift = FS_HLL_CHUNK_SHIFT,
		.merge = FS_MERGE_MAX8,
		.fold_mask = 0xff,
		.per_slot = fs_hll_regs_per_slot,
		.word_max = fs_hll_word_max,
		.say_count = fs_hll_say_count,
		.say_bound = fs_hll_say_bound,
		.perm_shift = fs_hll_perm_shift,
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

/* The first element of slot (chunk.h numbering). */
FS_INLINE __u64 fs_kind_first(enum fs_kind k, const struct fs_sketch_params *p,
			      __u32 slot)
{
	return slot * fs_chunk_stride(fs_sketch_kinds[k].per_slot(p),
				      fs_sketch_kinds[k].chunk_shift);
}

/* Chunks of one slot; map elements of all nslots. */
FS_INLINE __u32 fs_kind_slot_chunks(enum fs_kind k, const struct fs_sketch_params *p)
{
	return fs_chunks_per_slot(fs_sketch_kinds[k].per_slot(p),
				  fs_sketch_kinds[k].chunk_shift);
}

FS_INLINE __u32 fs_kind_chunks(enum fs_kind k, const struct fs_sketch_params *p,
			       __u32 nslots)
{
	return fs_chunk_count(fs_sketch_kinds[k].per_slot(p),
			      fs_sketch_kinds[k].chunk_shift, nslots);
}

/* Per-CPU bytes of every kind's map holding nslots slots (what a CPU's
 * copy of the datapath's sketches takes). */
FS_INLINE __u64 fs_kinds_percpu_bytes(const struct fs_sketch_params *p, __u32 nslots)
{
	__u64 bytes = 0;
	int k;

	for (k = 0; k < FS_NKINDS; k++)
		bytes += (__u64)fs_kind_chunks((enum fs_kind)k, p, nslots) * FS_CHUNK_BYTES;
	return bytes;
}

#endif /* user space */
#endif /* FLOWSKETCH_SKETCH_KIND_H */
