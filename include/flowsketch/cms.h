/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cms.h - Count-Min sketch of packets and bytes per flow.
 *
 * A sketch is d rows of w cells; a cell counts packets and bytes together,
 * so that one row update touches one 16-byte cell (one cache line holds
 * four).  Counters are 64-bit: at 100 Gbit/s a window of one hour counts
 * 4.5e13 bytes and 5.4e11 minimum-size packets, far below 2^64 (1.8e19),
 * where 32-bit counters would wrap within a second.
 *
 * Row columns.  All rows are fed from the one 64-bit flow hash (hash.h):
 * row r takes bits [k*log2w, (k+1)*log2w) of word r / k of a bit stream,
 * k = floor(64 / log2w), whose word 0 is the hash itself and word j > 0 is
 * fs_mix64(hash + j * golden).  The flow hash is strongly universal on all
 * 64 bits (hash.h): for two distinct flows the pair of hashes is uniform,
 * so disjoint bit fields of it, and of any fixed function of it, put the
 * two flows in the same column with probability 1/w independently per
 * row, which is what the Count-Min bound assumes.  With the defaults
 * (d = 5, w = 2^12) one word serves all rows, so no extra mixing is done.
 *
 * Memory layout (what the datapath maps hold; see maps.h).  Cells are
 * numbered
 *     cell = slot * stride + ((row << log2w) | column),
 *     stride = (d << log2w) rounded up to a multiple of FS_CMS_CHUNK_CELLS,
 * and stored in chunks of FS_CMS_CHUNK_CELLS cells (32 KiB, the largest
 * per-CPU map value the kernel allows): chunk = cell >> FS_CMS_CHUNK_SHIFT,
 * offset = cell & FS_CMS_CHUNK_MASK.  The stride keeps every chunk inside
 * one slot: the daemon rewrites a closed slot's elements whole while the
 * datapath writes the other slot, and a shared element would lose those
 * writes.  A merged sketch in user space keeps the numbering of slot 0.
 *
 * Update.  Standard: every row's cell += (1, bytes).  Conservative update
 * (Estan and Varghese): raise each row's cell only to min + increment.  It
 * keeps the guarantee estimate >= truth and typically halves the overcount
 * of light flows, but the sketch is then no longer linear: a window cannot
 * be subtracted from a sum of windows.  flowsketch only ever adds windows.
 */
#ifndef FLOWSKETCH_CMS_H
#define FLOWSKETCH_CMS_H

#include "compat.h"
#include "hash.h"
#include "params.h"

struct fs_cms_cell {
	__u64 packets;
	__u64 bytes;
};

#define FS_CMS_CHUNK_SHIFT 11
#define FS_CMS_CHUNK_CELLS (1U << FS_CMS_CHUNK_SHIFT)
#define FS_CMS_CHUNK_MASK (FS_CMS_CHUNK_CELLS - 1)

/* One per-CPU map element: 2048 cells, 32 KiB. */
struct fs_cms_chunk {
	struct fs_cms_cell cells[FS_CMS_CHUNK_CELLS];
};

#define FS_GOLDEN64 0x9e3779b97f4a7c15ULL

/*
 * Columns of a flow, row after row: fs_cms_columns_init() then one
 * fs_cms_next_column() per row.  An iterator rather than a function of
 * (hash, row) so that the per-packet path needs no division by log2w.
 */
struct fs_cms_columns {
	__u64 hash;
	__u64 bits;
	__u32 shift;
	__u32 word;
	__u32 log2w;
};

FS_INLINE void fs_cms_columns_init(struct fs_cms_columns *it, __u64 h,
				   __u32 log2w)
{
	it->hash = h;
	it->bits = h;
	it->shift = 0;
	it->word = 0;
	it->log2w = log2w;
}

FS_INLINE __u32 fs_cms_next_column(struct fs_cms_columns *it)
{
	__u32 column;

	if (it->shift + it->log2w > 64) {
		it->word++;
		it->bits = fs_mix64(it->hash + it->word * FS_GOLDEN64);
		it->shift = 0;
	}
	column = (__u32)(it->bits >> it->shift) & ((1U << it->log2w) - 1);
	it->shift += it->log2w;
	return column;
}

FS_INLINE __u64 fs_cms_cells_per_slot(const struct fs_sketch_params *p)
{
	return (__u64)p->cms_depth << p->cms_log2_width;
}

/* Cells from one slot's first cell to the next one's (whole chunks). */
FS_INLINE __u64 fs_cms_slot_stride(const struct fs_sketch_params *p)
{
	return (fs_cms_cells_per_slot(p) + FS_CMS_CHUNK_MASK) &
	       ~(__u64)FS_CMS_CHUNK_MASK;
}

/* Global cell number of (slot, row, column); see the header comment. */
FS_INLINE __u64 fs_cms_cell_number(const struct fs_sketch_params *p,
				   __u32 slot, __u32 row, __u32 column)
{
	return slot * fs_cms_slot_stride(p) +
	       (((__u64)row << p->cms_log2_width) | column);
}

/* Number of chunks (map elements) holding `nslots` slots. */
FS_INLINE __u32 fs_cms_chunks(const struct fs_sketch_params *p, __u32 nslots)
{
	return (__u32)((nslots * fs_cms_slot_stride(p)) >> FS_CMS_CHUNK_SHIFT);
}

/*
 * Add (1 packet, bytes) to one row's cell.  min_* are the row minimum
 * before this packet, used by conservative update.
 */
FS_INLINE void fs_cms_cell_add(struct fs_cms_cell *c, __u64 packets,
			       __u64 bytes, __u64 min_packets,
			       __u64 min_bytes, int conservative)
{
	if (conservative) {
		if (c->packets < min_packets + packets)
			c->packets = min_packets + packets;
		if (c->bytes < min_bytes + bytes)
			c->bytes = min_bytes + bytes;
	} else {
		c->packets += packets;
		c->bytes += bytes;
	}
}

/*
 * Heavy-hitter reporting: a flow is reported when its estimate crosses the
 * threshold with this packet.  Both update rules raise the row minimum by
 * exactly the increment, so "before < t <= before + inc" happens at most
 * once per flow, per CPU, per window and per metric: that is the bound on
 * how often one key is reported.  A threshold of 0 disables reporting.
 */
FS_INLINE int fs_cms_crosses(__u64 before, __u64 inc, __u64 threshold)
{
	return threshold && before < threshold && before + inc >= threshold;
}

#endif /* FLOWSKETCH_CMS_H */
