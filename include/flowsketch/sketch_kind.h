/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sketch_kind.h - every sketch kind's facts, once: what rotation, the
 * history, the window store, the native format and the loaders loop over.
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
 * flags, cms.h).  Serialised form (the native export, user/lib/native.h):
 * the element count E, 8 bytes, then the elements as words of word_bytes,
 * each little-endian; the window files (winstore.h) hold them in host
 * order, E * elem_bytes bytes.
 *
 * The per-packet update is not here: it stays hand-written in update.h,
 * where the verifier sees every access.  Adding a kind: its header (the
 * element, its chunk shift and update), its enum value and row below, its
 * map in bpf/maps.bpf.h, its update in update.h, and what a reader says of
 * its part in user/lib/native.c (part_noun and the two messages).
 */
#ifndef FLOWSKETCH_SKETCH_KIND_H
#define FLOWSKETCH_SKETCH_KIND_H

#include "compat.h"
#include "chunk.h"
#include "cms.h"
#include "hll.h"

enum fs_kind {
	FS_KIND_CMS = 0,
	FS_KIND_HLL = 1,
	FS_NKINDS = 2,
};

/* The word type the merge works on says the word's size. */
enum fs_merge {
	FS_MERGE_SUM64,		/* __u64 words add */
	FS_MERGE_MAX8,		/* __u8 words take the max */
};

struct fs_sketch_kind {
	const char *map;		/* the datapath's map (maps.h) */
	const char *pin;		/* its pin, in the pin directory */
	__u32 elem_bytes;		/* one cell or register */
	__u32 word_bytes;		/* 8 or 1, as merge says */
	__u32 chunk_shift;		/* elements a chunk: 1 << chunk_shift */
	enum fs_merge merge;
	__u64 fold_mask;		/* on each datapath word folded */
	__u64 (*per_slot)(const struct fs_sketch_params *p);	/* E */
};

static const struct fs_sketch_kind fs_sketch_kinds[FS_NKINDS] = {
	[FS_KIND_CMS] = {
		.map = "fs_cms",
		.pin = "cms",
		.elem_bytes = sizeof(struct fs_cms_cell),
		.word_bytes = 8,
		.chunk_shift = FS_CMS_CHUNK_SHIFT,
		.merge = FS_MERGE_SUM64,
		.fold_mask = FS_CMS_COUNT_MASK,
		.per_slot = fs_cms_cells_per_slot,
	},
	[FS_KIND_HLL] = {
		.map = "fs_hll",
		.pin = "hll",
		.elem_bytes = 1,
		.word_bytes = 1,
		.chunk_shift = FS_HLL_CHUNK_SHIFT,
		.merge = FS_MERGE_MAX8,
		.fold_mask = 0xff,
		.per_slot = fs_hll_regs_per_slot,
	},
};

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

#endif /* FLOWSKETCH_SKETCH_KIND_H */
