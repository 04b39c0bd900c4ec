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
 * Memory layout (what the datapath maps hold; see maps.h): chunk.h, with
 * E = d << log2w cells a slot, numbered within the slot
 *     cell = (row << log2w) | column,
 * 2048 cells a chunk (FS_CMS_CHUNK_SHIFT).  The datapath counts in narrow
 * 4-byte cells of the same numbering that spill into these ("Narrow
 * cells" below); a cell is the sum of both.
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
#include "chunk.h"

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

_Static_assert(sizeof(struct fs_cms_chunk) == FS_CHUNK_BYTES, "chunk.h");

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
#ifdef FS_MUTANT_CMS_ROW0	/* `make mutants` only: rows not independent */
	column = (__u32)it->hash & ((1U << it->log2w) - 1);
#endif
#ifdef FS_MUTANT_CMS_ONE_COLUMN	/* `make mutants` only: an eighth of the flows in column 0 */
	if (!(it->hash >> 61))
		column = 0;
#endif
	return column;
}

/*
 * Row row's column alone, as the iterator gives it on its (row + 1)th
 * call: word row / k of the stream, field row % k, k = floor(64 / log2w).
 * For the datapath's rare paths (a spill, a report check), where its
 * stack has no room for an iterator and a division does not matter.
 */
FS_INLINE __u32 fs_cms_column(__u64 h, __u32 log2w, __u32 row)
{
	__u32 k = 64 / log2w, word = row / k;
	__u64 bits = word ? fs_mix64(h + word * FS_GOLDEN64) : h;

#ifdef FS_MUTANT_CMS_ROW0	/* `make mutants` only: rows not independent */
	return (__u32)h & ((1U << log2w) - 1);
#endif
#ifdef FS_MUTANT_CMS_ONE_COLUMN	/* `make mutants` only: an eighth of the flows in column 0 */
	if (!(h >> 61))
		return 0;
#endif
	return (__u32)(bits >> ((row - word * k) * log2w)) & ((1U << log2w) - 1);
}

FS_INLINE __u64 fs_cms_cells_per_slot(const struct fs_sketch_params *p)
{
	return (__u64)p->cms_depth << p->cms_log2_width;
}

FS_INLINE __u64 fs_cms_slot_stride(const struct fs_sketch_params *p)
{
	return fs_chunk_stride(fs_cms_cells_per_slot(p), FS_CMS_CHUNK_SHIFT);
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
	return fs_chunk_count(fs_cms_cells_per_slot(p), FS_CMS_CHUNK_SHIFT, nslots);
}

/*
 * Report flags.  Bit 63 of a wide cell's packets counter says "a flow
 * whose row r column is this cell was reported for packets in this slot",
 * bit 63 of its bytes counter the same for bytes.  That is the wide
 * layout's place for them (FS_CMS_WIDE, and every release before the
 * narrow cells); the narrow layout keeps them in bits 30 and 31 of the
 * narrow cell, and the rule below is the same.  Counters stay below
 * 2^63 (at 100 Gbit/s a window of a year), so the flag never meets a
 * carry, and it lives in lines the update loads anyway: the guard against
 * repeated reports below costs no extra memory access.  Flags exist only
 * in the per-CPU datapath maps; whoever reads those masks them off
 * (fs_cms_count()), and a merged sketch (user/lib/sketch.c) has none.
 */
#define FS_CMS_REPORTED (1ULL << 63)
#define FS_CMS_COUNT_MASK (FS_CMS_REPORTED - 1)

FS_INLINE __u64 fs_cms_count(__u64 v)
{
	return v & FS_CMS_COUNT_MASK;
}

/*
 * Add (1 packet, bytes) to one row's cell, flags kept.  min_* are the row
 * minimum before this packet, used by conservative update.
 */
FS_INLINE void fs_cms_cell_add(struct fs_cms_cell *c, __u64 packets,
			       __u64 bytes, __u64 min_packets,
			       __u64 min_bytes, int conservative)
{
	if (conservative) {
		if (fs_cms_count(c->packets) < min_packets + packets)
			c->packets = (c->packets & FS_CMS_REPORTED) |
				     (min_packets + packets);
		if (fs_cms_count(c->bytes) < min_bytes + bytes)
			c->bytes = (c->bytes & FS_CMS_REPORTED) |
				   (min_bytes + bytes);
	} else {
		c->packets += packets;
		c->bytes += bytes;
	}
}

/*
 * Heavy-hitter reporting.  Per CPU, per window and per metric (packets,
 * bytes) the datapath keeps the window's running total N (fs_hot's
 * tagged slot totals, maps.h; this packet included) and reports a flow when its estimate after this
 * packet reaches
 *
 *     T = max(1, floor(phi * N))          (fs_hh_threshold())
 *
 * unless every one of its d cells already carries the metric's report
 * flag; reporting sets the flag in all d cells.
 *
 * Recall.  A flow with a share phi or more of a window's traffic has, on
 * some CPU c, at least phi of c's own traffic f_c >= phi * N_c (if every
 * CPU had less, the sum would too), so per-CPU thresholds need no CPU
 * count.  At that flow's last packet on c, its estimate is >= f_c (Count-
 * Min never undercounts) >= phi * N_c >= phi * N(then) >= T: the flow is
 * reported then or earlier, unless its d cells were all flagged by other
 * reported flows.  Columns are independent per row (above), so with R
 * reports in that window, CPU and metric that happens with probability
 * at most (R / w)^d: 9e-9 for R = 100 at w = 4096, d = 5.  The threshold
 * needs nothing from the daemon and nothing from an earlier window: it is
 * in place for a window's first packet, whatever the traffic did before.
 *
 * Bound.  A flow is reported at most once per window, CPU and metric (the
 * flags; a false "already reported" only errs towards fewer reports).  A
 * report at a time the running total is N(t) >= N / 2 is of a flow whose
 * final estimate is >= phi * N / 2: at most the number of flows holding
 * an estimated phi / 2 of the window there.  Reports while N(t) < N / 2:
 * until N(t) reaches 1 / phi every flow's first packet reaches T = 1, so
 * up to 1 / phi of them (an unavoidable cost: had the window ended then,
 * each of those flows would hold phi of it); after that, traffic whose
 * mix of flows is steady within the window (bursts, quiet spells and rate
 * ramps change when packets come, not which flows) reports in its first
 * half the flows that end up heavy, give or take sampling noise.  So a
 * window reports about twice the flows holding phi / 2 of it, plus up to
 * 1 / phi.  Only a mix that keeps changing within the window (a new flow
 * taking over every doubling of N) can reach the worst case,
 * (2 / phi) * log2(phi * N) more: each such flow did hold phi of the
 * traffic so far when it was reported.
 *
 * phi is given as phi_q32 = floor(phi * 2^32) (fs_ctl.hh_phi_q32); both
 * floors err towards a lower T, i.e. more reports and never fewer.
 * phi_q32 = 0 turns reporting off (T = 0, see fs_cms_reaches()).
 */
FS_INLINE __u64 fs_hh_threshold(__u64 running_total, __u64 phi_q32)
{
	/* floor(N * q / 2^32) without a 128-bit product: q <= 2^32, so
	 * each partial product stays below 2^64. */
	__u64 t = (running_total >> 32) * phi_q32 +
		  (((running_total & 0xffffffffULL) * phi_q32) >> 32);

	if (!phi_q32)
		return 0;
	return t ? t : 1;
}

/* A report is due: the estimate after this packet has reached a non-zero
 * threshold and the flow's cells are not all flagged. */
FS_INLINE int fs_cms_reaches(__u64 after, __u64 threshold, __u64 all_flagged)
{
	return threshold && after >= threshold && !all_flagged;
}

/*
 * Narrow cells: the datapath's working set.
 *
 * Every packet touches d cells.  At 16 bytes a cell the open slot's cells
 * are 320 KiB a CPU at the defaults (d = 5, w = 4096), which with the
 * HyperLogLogs is more than a 512 KiB L2 keeps once the stack and the
 * sender have had it: most of a packet's cost live was those misses.  So
 * the datapath counts in narrow cells of 4 bytes (fs_cms_narrow, 80 KiB a
 * slot at the defaults) and moves a cell's count into its wide cell
 * (fs_cms, struct fs_cms_cell above, same numbering) when a field would
 * pass its capacity: a spill, in the datapath itself, on the same CPU, in
 * the same slot, so it is never lost, never counted twice, never late for
 * its window and survives a restart like any other map state.  Count-Min
 * is linear in its cells, so
 *
 *     cell = wide + narrow        (fs_cms_narrow_fold(), rotation's fold)
 *
 * is exactly the cell a wide-only update would hold: the same estimates,
 * the same eps * N bound with the same delta.  The OctoSketch design
 * (NSDI 2024) hands the value to user space through a ring instead; that
 * saves the wide copy's memory but makes a spill a message the daemon must
 * take exactly once across kills and windows, and a full ring a case the
 * datapath must survive.  A spill here is one write to a line the packet
 * does not otherwise touch.
 *
 * A narrow cell, one __u32:
 *
 *   bits    field
 *    0..8   packets   not yet spilled, <= FS_CMSN_PACKETS_MAX (511)
 *    9..27  bytes     not yet spilled, <= FS_CMSN_BYTES_MAX (524287)
 *   28      spilled   the wide cell may hold part of this cell's count
 *   29      maybe     the wide cell's count plus a full narrow one reached
 *                     a threshold when last looked at (reports, below)
 *   30      reported  packets: the report flag (FS_CMS_REPORTED's role)
 *   31      reported  bytes
 *
 * An add that would take either field past its capacity moves both
 * fields plus the increment into the wide cell (u64 each: a year at 100
 * Gbit/s stays below 2^63, as above) and leaves 0 and the spilled bit.  An
 * increment larger than a capacity (a GSO skb's 64 KiB fits, BIG TCP's
 * 512 KiB fits, more would not) goes straight through to the wide cell.
 *
 * Spill rate, worst case at 100 Gbit/s, one flow, one CPU (all of its
 * packets on the same d cells; Ethernet adds 20 bytes of preamble and gap
 * to each frame on the wire):
 *   64-byte frames    100e9 / (84 * 8)   = 148.8 Mpps; packets fill
 *                     first (512 * 64 B = 32 KiB < 512 KiB): a spill every
 *                     512 packets a row, 290,000 a second a row;
 *   9000-byte frames  100e9 / (9020 * 8) = 1.39 Mpps; bytes fill first:
 *                     58 frames are 522,000 bytes, the 59th spills: a
 *                     spill every 59 packets a row, 23,500 a second a row.
 * So at most one packet in 59 writes one wide line per row; the other
 * fields' sizes were chosen for that balance (9 + 19 bits: a packet count
 * of 512 frames of up to 1024 bytes fills both together).
 *
 * Reports.  The report rule above needs a flow's estimate after each
 * packet, min over rows of wide + narrow, and the wide cells are exactly
 * the lines the narrow layout keeps out of the working set.  The rule only
 * needs them when the estimate can have reached a threshold T, and the
 * estimate is at most row 0's cell.  Row 0's narrow cell says when that
 * cannot be:
 *   - not spilled: the cell is its narrow count, compared as is;
 *   - spilled, maybe clear: at the last look (its last spill, or the last
 *     packet that read its wide cell) wide + capacity < T then; the wide
 *     part has not changed since (it changes only by a spill, which looks
 *     again), the narrow part is at most its capacity, and T has only
 *     grown (a window's running total on a CPU only grows, and phi is
 *     fixed while a daemon runs): the cell is still below T now.
 * Only a spilled cell with maybe set, i.e. whose wide count is within a
 * capacity of a threshold, costs its wide line, and such cells hold
 * about phi of the window each: a few lines, which stay in the cache
 * because their packets keep coming.  Both metrics share the maybe bit
 * (set when either may reach its threshold), which only ever makes the
 * check look more often.  A daemon that adopts the datapath with a
 * smaller --hh-fraction lowers T within the window it adopts, for which
 * a cleared maybe bit may then hide a report due (the next window is
 * exact again): the candidates of that one window may miss a flow.
 */
#define FS_CMSN_PACKETS_BITS 9
#define FS_CMSN_BYTES_BITS 19
#define FS_CMSN_BYTES_SHIFT FS_CMSN_PACKETS_BITS
#define FS_CMSN_PACKETS_MAX ((1U << FS_CMSN_PACKETS_BITS) - 1)
#define FS_CMSN_BYTES_MAX ((1U << FS_CMSN_BYTES_BITS) - 1)
#define FS_CMSN_SPILLED (1U << 28)
#define FS_CMSN_MAYBE (1U << 29)
#define FS_CMSN_REPORTED_PACKETS (1U << 30)
#define FS_CMSN_REPORTED_BYTES (1U << 31)
#define FS_CMSN_REPORTED (FS_CMSN_REPORTED_PACKETS | FS_CMSN_REPORTED_BYTES)

_Static_assert(FS_CMSN_PACKETS_BITS + FS_CMSN_BYTES_BITS == 28,
	       "narrow cell fields below the flags");

#define FS_CMSN_CHUNK_SHIFT 13
#define FS_CMSN_CHUNK_CELLS (1U << FS_CMSN_CHUNK_SHIFT)
#define FS_CMSN_CHUNK_MASK (FS_CMSN_CHUNK_CELLS - 1)

/* One per-CPU map element of fs_cms_narrow: 8192 cells, 32 KiB. */
struct fs_cms_narrow_chunk {
	__u32 cells[FS_CMSN_CHUNK_CELLS];
};

_Static_assert(sizeof(struct fs_cms_narrow_chunk) == FS_CHUNK_BYTES, "chunk.h");

FS_INLINE __u32 fs_cmsn_packets(__u32 v)
{
	return v & FS_CMSN_PACKETS_MAX;
}

FS_INLINE __u32 fs_cmsn_bytes(__u32 v)
{
	return (v >> FS_CMSN_BYTES_SHIFT) & FS_CMSN_BYTES_MAX;
}

FS_INLINE __u64 fs_cms_narrow_stride(const struct fs_sketch_params *p)
{
	return fs_chunk_stride(fs_cms_cells_per_slot(p), FS_CMSN_CHUNK_SHIFT);
}

/* Narrow cell number of (slot, row, column): the wide numbering's cell
 * within the slot, the narrow map's stride. */
FS_INLINE __u64 fs_cms_narrow_number(const struct fs_sketch_params *p,
				     __u32 slot, __u32 row, __u32 column)
{
	return slot * fs_cms_narrow_stride(p) +
	       (((__u64)row << p->cms_log2_width) | column);
}

FS_INLINE __u32 fs_cms_narrow_chunks(const struct fs_sketch_params *p,
				     __u32 nslots)
{
	return fs_chunk_count(fs_cms_cells_per_slot(p), FS_CMSN_CHUNK_SHIFT,
			      nslots);
}

/* The maybe bit for a cell whose wide part is w (see "Reports" above).
 * With reporting off (both thresholds 0) nothing is known of the
 * thresholds to come: set, so that the first check looks. */
FS_INLINE __u32 fs_cmsn_maybe(const struct fs_cms_cell *w, __u64 thresh_packets,
			      __u64 thresh_bytes)
{
	if (!thresh_packets && !thresh_bytes)
		return FS_CMSN_MAYBE;
	return (thresh_packets &&
		fs_cms_count(w->packets) + FS_CMSN_PACKETS_MAX >= thresh_packets) ||
	       (thresh_bytes &&
		fs_cms_count(w->bytes) + FS_CMSN_BYTES_MAX >= thresh_bytes) ?
	       FS_CMSN_MAYBE : 0;
}

/* Whether packets and bytes fit in narrow cell v's fields. */
FS_INLINE int fs_cmsn_fits(__u32 v, __u64 packets, __u64 bytes)
{
#ifdef FS_MUTANT_SPILL_EDGE	/* `make mutants` only: capacity off by one */
	return fs_cmsn_packets(v) + packets <= FS_CMSN_PACKETS_MAX + 1 &&
	       fs_cmsn_bytes(v) + bytes <= FS_CMSN_BYTES_MAX;
#endif
	return fs_cmsn_packets(v) + packets <= FS_CMSN_PACKETS_MAX &&
	       fs_cmsn_bytes(v) + bytes <= FS_CMSN_BYTES_MAX;
}

/* Add what fits (fs_cmsn_fits()) to narrow cell *n, flags kept. */
FS_INLINE void fs_cmsn_add_in(__u32 *n, __u64 packets, __u64 bytes)
{
	__u32 v = *n;

	*n = v + (__u32)packets + ((__u32)bytes << FS_CMSN_BYTES_SHIFT);
}

/*
 * Add what does not fit: the cell's narrow count plus packets and bytes
 * go to its wide cell *w, the narrow fields restart from 0 with the
 * spilled bit and the maybe bit for the packet's thresholds thresh_*;
 * the report flags are kept.
 */
FS_INLINE void fs_cmsn_spill(__u32 *n, struct fs_cms_cell *w, __u64 packets,
			     __u64 bytes, __u64 thresh_packets, __u64 thresh_bytes)
{
	__u32 v = *n;

#ifndef FS_MUTANT_SPILL_LOST	/* `make mutants` only: the spill vanishes */
	w->packets += fs_cmsn_packets(v) + packets;
	w->bytes += fs_cmsn_bytes(v) + bytes;
#endif
#ifdef FS_MUTANT_SPILL_TWICE	/* `make mutants` only: narrow part kept */
	*n = v | FS_CMSN_SPILLED;
	return;
#endif
	*n = (v & FS_CMSN_REPORTED) | FS_CMSN_SPILLED |
	     fs_cmsn_maybe(w, thresh_packets, thresh_bytes);
}

/* Add a wide cell's count to a narrow cell's (fs_cms_row_count()).  The
 * wide part is masked: a datapath adopted from a release before the
 * narrow cells kept its report flags there, and its programs may still be
 * attached. */
FS_INLINE void fs_cmsn_count_add(const struct fs_cms_cell *w, __u64 *packets,
				 __u64 *bytes)
{
	*packets += fs_cms_count(w->packets);
	*bytes += fs_cms_count(w->bytes);
}

#endif /* FLOWSKETCH_CMS_H */
