/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * update.h - the per-packet sketch update, written once for three builds.
 *
 * The pure-BPF datapath, the kernel module's kfunc and the user-space model
 * used by the tests all run fs_sketch_update() below, so their sketch state
 * is identical by construction (and the tests check that it is).  The only
 * thing that differs between builds is how a chunk of map memory is found,
 * so the including file defines, before including this header:
 *
 *   struct fs_update_env;   whatever the build needs to reach its memory
 *   static void *fs_env_chunk(struct fs_update_env *, enum fs_dp_map m, __u32 chunk);
 *
 * (always-inline, returning NULL when the chunk does not exist; chunk
 * `chunk` of datapath map m, a struct fs_NAME_chunk, sketch_kind.h).  m is
 * a constant at every call, so each build's choice by map folds away.  In
 * BPF it is bpf_map_lookup_elem() on the per-CPU map, in the module the
 * same lookup written out, in user space plain arrays.
 *
 * Its input and output, struct fs_packet_update, is in packet_update.h,
 * which needs no environment.
 */
#ifndef FLOWSKETCH_UPDATE_H
#define FLOWSKETCH_UPDATE_H

#include "compat.h"
#include "flow_key.h"
#include "hash.h"
#include "params.h"
#include "cms.h"
#include "hll.h"
#include "sketch_kind.h"
#include "packet_update.h"
#include "detect.h"
#ifdef FS_CMS_NITRO
#include "cms_sampled.h"
#endif

/*
 * A build may prefetch: the module defines fs_env_prefetch() as
 * prefetchw() (BPF has no prefetch instruction, user space does not need
 * one).  The update finds every line a packet needs before it touches any
 * of them, so that the d + 3 misses overlap instead of following each
 * other.
 */
#ifndef fs_env_prefetch
#define fs_env_prefetch(ptr) ((void)(ptr))
#endif

/*
 * Two layouts, one chosen at build time.  The datapath's (the default)
 * counts in narrow cells that spill into wide ones and in packed
 * registers (cms.h, "Narrow cells"; hll.h, "Packed registers"); the wide
 * one (FS_CMS_WIDE) counts in the wide cells and byte registers directly,
 * with the report flags in bit 63 of the wide cells, as every release
 * before the narrow cells did.  Only the tests and the benchmark build
 * the wide one: it is what the narrow layout must equal bit for bit once
 * folded, and the baseline its cost is measured against.
 */

/*
 * The three HyperLogLog registers of a packet: pointers to their bytes
 * (wide) or words (narrow), and the words' field shifts, five bits each
 * in one word (the stack has no room for more, below).
 */
struct fs_hll_refs {
#ifdef FS_CMS_WIDE
	__u8 *reg[FS_HLL_NSKETCH];
#else
	__u32 *word[FS_HLL_NSKETCH];
	__u32 shifts;
#endif
};

/* Find register `sketch` of flow hash h in slot; 0, or FS_UPDATE_ENOENT
 * when its chunk does not exist. */
FS_INLINE int fs_hll_find(struct fs_update_env *env,
			  const struct fs_sketch_params *p, __u32 slot,
			  __u32 sketch, __u64 h, struct fs_hll_refs *ref)
{
#ifdef FS_CMS_WIDE
	__u64 n = fs_hll_register_number(p, slot, sketch,
					 fs_hll_index(h, p->hll_p));
	struct fs_hll_chunk *chunk;

	chunk = fs_env_chunk(env, FS_DP_HLL, (__u32)(n >> FS_HLL_CHUNK_SHIFT));
	if (!chunk)
		return FS_UPDATE_ENOENT;
	ref->reg[sketch] = &chunk->regs[n & FS_HLL_CHUNK_MASK];
	fs_env_prefetch(ref->reg[sketch]);
#else
	__u32 reg = (sketch << p->hll_p) | fs_hll_index(h, p->hll_p), shift;
	__u64 w = fs_hll_packed_word(p, slot, reg, &shift);
	struct fs_hll_packed_chunk *chunk;

	chunk = fs_env_chunk(env, FS_DP_HLL_PACKED,
			     (__u32)(w >> FS_HLL_PACKED_CHUNK_SHIFT));
	if (!chunk)
		return FS_UPDATE_ENOENT;
	ref->word[sketch] = &chunk->words[w & FS_HLL_PACKED_CHUNK_MASK];
	ref->shifts |= shift << (5 * sketch);
	fs_env_prefetch(ref->word[sketch]);
#endif
	return 0;
}

FS_INLINE void fs_hll_raise(struct fs_hll_refs *ref, __u32 sketch, __u64 h,
			    __u32 p)
{
#ifdef FS_CMS_WIDE
	fs_hll_register_max(ref->reg[sketch], fs_hll_rank(h, p));
#else
	fs_hll_packed_max(ref->word[sketch], (ref->shifts >> (5 * sketch)) & 31,
			  fs_hll_rank(h, p));
#endif
}

/*
 * A flow's d cells.  Wide layout: cell[], found before anything is
 * written.  Narrow layout: narrow[], what every packet touches; a spill
 * or a report check finds a row's wide cell when it needs it, from the
 * flow hash again (fs_cms_wide_cell()).  Not kept beside narrow[]: the
 * datapath's stack, parser and all, was at 504 of BPF's 512 bytes with the
 * wide layout's pointers alone.
 */
struct fs_cms_refs {
#ifdef FS_CMS_WIDE
	struct fs_cms_cell *cell[FS_CMS_MAX_DEPTH];
#else
	__u32 *narrow[FS_CMS_MAX_DEPTH];
#endif
};

#ifndef FS_CMS_WIDE
/* Row row's wide cell for the flow and slot of u (u->hash set), or NULL
 * (which fs_cms_find() has ruled out). */
FS_INLINE struct fs_cms_cell *fs_cms_wide_cell(struct fs_update_env *env,
					       const struct fs_sketch_params *p,
					       const struct fs_packet_update *u,
					       __u32 row)
{
	__u64 n = fs_cms_cell_number(p, u->slot, row,
				     fs_cms_column(u->hash, p->cms_log2_width, row));
	struct fs_cms_chunk *chunk;

	chunk = fs_env_chunk(env, FS_DP_CMS, (__u32)(n >> FS_CMS_CHUNK_SHIFT));
	return chunk ? &chunk->cells[n & FS_CMS_CHUNK_MASK] : 0;
}
#endif

FS_INLINE int fs_cms_find(struct fs_update_env *env,
			  const struct fs_sketch_params *p, __u32 slot,
			  __u64 hash, struct fs_cms_refs *c)
{
	struct fs_cms_columns cols;
	__u32 depth = p->cms_depth, row;

	fs_cms_columns_init(&cols, hash, p->cms_log2_width);
FS_UNROLL
	for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
		__u32 column;
		__u64 n;

		/* continue, not break: clang cannot fully unroll a loop with
		 * an early exit on a value it does not know (the depth from
		 * .rodata); the verifier prunes the rows the depth rules out. */
		if (row >= depth)
			continue;
		column = fs_cms_next_column(&cols);
#ifdef FS_CMS_WIDE
		{
			struct fs_cms_chunk *chunk;

			n = fs_cms_cell_number(p, slot, row, column);
			chunk = fs_env_chunk(env, FS_DP_CMS,
					     (__u32)(n >> FS_CMS_CHUNK_SHIFT));
			if (!chunk)
				return FS_UPDATE_ENOENT;
			c->cell[row] = &chunk->cells[n & FS_CMS_CHUNK_MASK];
			fs_env_prefetch(c->cell[row]);
		}
#else
		{
			struct fs_cms_narrow_chunk *nc;

			n = fs_cms_narrow_number(p, slot, row, column);
			nc = fs_env_chunk(env, FS_DP_CMS_NARROW,
					  (__u32)(n >> FS_CMSN_CHUNK_SHIFT));
			if (!nc)
				return FS_UPDATE_ENOENT;
			c->narrow[row] = &nc->cells[n & FS_CMSN_CHUNK_MASK];
			fs_env_prefetch(c->narrow[row]);
		}
#endif
	}
#ifndef FS_CMS_WIDE
	/* The wide cells are found when needed; that the map holds the
	 * slot's last one says it holds them all (chunk.h). */
	if (!fs_env_chunk(env, FS_DP_CMS,
			  (__u32)((fs_cms_cell_number(p, slot, 0, 0) +
				   fs_cms_cells_per_slot(p) - 1) >> FS_CMS_CHUNK_SHIFT)))
		return FS_UPDATE_ENOENT;
#endif
	return 0;
}

/*
 * What the report rule needs of a flow's cells (cms.h, "Heavy-hitter
 * reporting"): its estimate, the row minimum of its cells' counts, and
 * whether every cell carries each metric's report flag.
 */
struct fs_cms_scan {
	__u64 min_packets, min_bytes;
	int flagged_packets, flagged_bytes;
};

#ifdef FS_CMS_WIDE
/*
 * The row minimum and the AND of the raw counters (bit 63 set iff every
 * cell carries the report flag).  Branch-free (fs_min_u63): cells are
 * random, so a compare-and-branch would mispredict about every other row.
 */
FS_INLINE void fs_cms_rows_scan(struct fs_update_env *env,
				const struct fs_sketch_params *p,
				const struct fs_packet_update *u,
				const struct fs_cms_refs *c, __u32 depth,
				struct fs_cms_scan *sc)
{
	/* Counters stay below 2^63, as fs_min_u63 requires. */
	__u64 mp = 0x7fffffffffffffffULL, mb = 0x7fffffffffffffffULL;
	__u64 fp = ~0ULL, fb = ~0ULL;
	__u32 row;

	(void)env;
	(void)p;
	(void)u;
FS_UNROLL
	for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
		const struct fs_cms_cell *cell;

		if (row >= depth)
			continue;
		cell = c->cell[row];
		fp &= cell->packets;
		fb &= cell->bytes;
		mp = fs_min_u63(fs_cms_count(cell->packets), mp);
		mb = fs_min_u63(fs_cms_count(cell->bytes), mb);
	}
	sc->min_packets = mp;
	sc->min_bytes = mb;
	sc->flagged_packets = !!(fp & FS_CMS_REPORTED);
	sc->flagged_bytes = !!(fb & FS_CMS_REPORTED);
}

/* Whether a flow whose row-0 cell is c (after this packet) can have
 * reached a non-zero threshold: its estimate is at most that cell. */
FS_INLINE int fs_cms_may_reach(const struct fs_cms_refs *c, __u32 depth,
			       __u64 thresh_packets, __u64 thresh_bytes)
{
	const struct fs_cms_cell *cell = c->cell[0];

	(void)depth;
#ifdef FS_MUTANT_REPORT_SKIP_AT	/* `make mutants` only: skips the report
					   of a flow that just reached T */
	return (thresh_packets && fs_cms_count(cell->packets) > thresh_packets) ||
	       (thresh_bytes && fs_cms_count(cell->bytes) > thresh_bytes);
#endif
	return (thresh_packets && fs_cms_count(cell->packets) >= thresh_packets) ||
	       (thresh_bytes && fs_cms_count(cell->bytes) >= thresh_bytes);
}

FS_INLINE void fs_cms_row_add(struct fs_update_env *env,
			      const struct fs_sketch_params *p,
			      struct fs_cms_refs *c, __u32 row, __u64 packets,
			      __u64 bytes, const struct fs_packet_update *u)
{
	(void)env;
	(void)p;
	(void)u;
	c->cell[row]->packets += packets;
	c->cell[row]->bytes += bytes;
}

FS_INLINE void fs_cms_row_count(struct fs_update_env *env,
				const struct fs_sketch_params *p,
				const struct fs_packet_update *u,
				const struct fs_cms_refs *c, __u32 row,
				__u64 *packets, __u64 *bytes)
{
	(void)env;
	(void)p;
	(void)u;
	*packets = fs_cms_count(c->cell[row]->packets);
	*bytes = fs_cms_count(c->cell[row]->bytes);
}

FS_INLINE void fs_cms_row_flag(struct fs_cms_refs *c, __u32 row, __u32 report)
{
	if (report & FS_REPORT_PACKETS)
		c->cell[row]->packets |= FS_CMS_REPORTED;
	if (report & FS_REPORT_BYTES)
		c->cell[row]->bytes |= FS_CMS_REPORTED;
}
#else
/* A cell's whole count: its narrow part, plus its wide part once it has
 * spilled (the wide line is read only then). */
FS_INLINE void fs_cms_row_count(struct fs_update_env *env,
				const struct fs_sketch_params *p,
				const struct fs_packet_update *u,
				const struct fs_cms_refs *c, __u32 row,
				__u64 *packets, __u64 *bytes)
{
	__u32 v = *c->narrow[row];

	*packets = fs_cmsn_packets(v);
	*bytes = fs_cmsn_bytes(v);
	if (v & FS_CMSN_SPILLED) {
		const struct fs_cms_cell *w = fs_cms_wide_cell(env, p, u, row);

		if (w)		/* always (fs_cms_find()) */
			fs_cmsn_count_add(w, packets, bytes);
	}
}

/* The row minimum of the cells' whole counts (wide lines read only for
 * cells that have spilled) and the AND of their report flags. */
FS_INLINE void fs_cms_rows_scan(struct fs_update_env *env,
				const struct fs_sketch_params *p,
				const struct fs_packet_update *u,
				const struct fs_cms_refs *c, __u32 depth,
				struct fs_cms_scan *sc)
{
	__u64 mp = 0x7fffffffffffffffULL, mb = 0x7fffffffffffffffULL;
	__u32 flags = FS_CMSN_REPORTED;
	__u32 row;

FS_UNROLL
	for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
		__u64 packets, bytes;

		if (row >= depth)
			continue;
		flags &= *c->narrow[row];
		fs_cms_row_count(env, p, u, c, row, &packets, &bytes);
		mp = fs_min_u63(packets, mp);
		mb = fs_min_u63(bytes, mb);
	}
	sc->min_packets = mp;
	sc->min_bytes = mb;
	sc->flagged_packets = !!(flags & FS_CMSN_REPORTED_PACKETS);
	sc->flagged_bytes = !!(flags & FS_CMSN_REPORTED_BYTES);
}

/*
 * Whether a report can be due after this packet, from the narrow cells
 * alone (cms.h, "Reports"): row 0's says whether the estimate can have
 * reached a non-zero threshold; the common packet stops there.  A flow
 * reported already for every metric that has a threshold (all d cells
 * flagged) cannot be reported again, and its wide lines are not read:
 * its narrow lines are loaded anyway, while a heavy flow's row 0 keeps
 * its maybe bit.
 */
FS_INLINE int fs_cms_may_reach(const struct fs_cms_refs *c, __u32 depth,
			       __u64 thresh_packets, __u64 thresh_bytes)
{
	__u32 v = *c->narrow[0], flags = FS_CMSN_REPORTED, want = 0, row;

	if (!thresh_packets && !thresh_bytes)
		return 0;
	if (!(v & FS_CMSN_MAYBE)) {
		if (v & FS_CMSN_SPILLED)
			return 0;
#ifdef FS_MUTANT_REPORT_SKIP_AT	/* `make mutants` only: skips the report
					   of a flow that just reached T */
		if (!((thresh_packets && fs_cmsn_packets(v) > thresh_packets) ||
		      (thresh_bytes && fs_cmsn_bytes(v) > thresh_bytes)))
			return 0;
#else
		if (!((thresh_packets && fs_cmsn_packets(v) >= thresh_packets) ||
		      (thresh_bytes && fs_cmsn_bytes(v) >= thresh_bytes)))
			return 0;
#endif
	}
#ifndef FS_MUTANT_REPORT_NO_FLAGS	/* the mutant's flags do not stop reports */
	if (thresh_packets)
		want |= FS_CMSN_REPORTED_PACKETS;
	if (thresh_bytes)
		want |= FS_CMSN_REPORTED_BYTES;
FS_UNROLL
	for (row = 0; row < FS_CMS_MAX_DEPTH; row++)
		if (row < depth)
			flags &= *c->narrow[row];
	if ((flags & want) == want)
		return 0;
#else
	(void)flags, (void)want, (void)row;
#endif
	return 1;
}

/* The wide cell is found only for a spill: the datapath's common add
 * touches the narrow line alone. */
FS_INLINE void fs_cms_row_add(struct fs_update_env *env,
			      const struct fs_sketch_params *p,
			      struct fs_cms_refs *c, __u32 row, __u64 packets,
			      __u64 bytes, const struct fs_packet_update *u)
{
	struct fs_cms_cell *w;

	if (fs_cmsn_fits(*c->narrow[row], packets, bytes)) {
		fs_cmsn_add_in(c->narrow[row], packets, bytes);
		return;
	}
	w = fs_cms_wide_cell(env, p, u, row);
	if (w)		/* always (fs_cms_find()) */
		fs_cmsn_spill(c->narrow[row], w, packets, bytes,
			      u->thresh_packets, u->thresh_bytes);
}

FS_INLINE void fs_cms_row_flag(struct fs_cms_refs *c, __u32 row, __u32 report)
{
	if (report & FS_REPORT_PACKETS)
		*c->narrow[row] |= FS_CMSN_REPORTED_PACKETS;
	if (report & FS_REPORT_BYTES)
		*c->narrow[row] |= FS_CMSN_REPORTED_BYTES;
}
#endif

#ifdef FS_CMS_NITRO
#ifdef FS_CMS_WIDE
#error "FS_CMS_NITRO is built on the narrow layout only"
#endif
/*
 * The sampled Count-Min options (cms_sampled.h), benchmark builds only,
 * never the daemon's: the build defines fs_env_nitro(env), this CPU's
 * sampling state, or NULL.
 *
 * Reports.  fs_cms_may_reach()'s reasoning holds with any row's cell in
 * row 0's place: the estimate (min of rows) is at most any row's cell,
 * and every row's maybe bit is set by its own spills as row 0's is.  So a
 * packet looks at a row it updated.  Only packets that update a row look:
 * the estimate changes only with a row, and thresholds only grow, so a
 * flow whose estimate reaches T is seen then (but see the flag stop
 * below).
 */
/*
 * Its first part, from the row's cell alone, and a stop the default does
 * not have: a cell that carries every wanted report flag ends the check.
 * The default stops only when all d cells do (cms.h, "Heavy-hitter
 * reporting"), but its d lines are loaded anyway, while here they would
 * be d more for every packet of every reported heavy flow (about half the
 * packets of a Zipf 1.1 mix).  A flow not reported yet has a cell without
 * the flag in some row r unless all d are flagged by others (as in the
 * default), and the packets that sample r (1/d of them) check it: reports
 * come a few packets later than the rule says, or, for a flow that
 * crosses T in its very last packets, not at all.  Recall was already
 * given up with "never below the truth" (cms_sampled.h, point 6).
 */
FS_INLINE int fs_cms_nitro_may_reach_v(__u32 v, __u64 thresh_packets,
				       __u64 thresh_bytes)
{
	__u32 want = (thresh_packets ? FS_CMSN_REPORTED_PACKETS : 0) |
		     (thresh_bytes ? FS_CMSN_REPORTED_BYTES : 0);

	if (!want || (v & want) == want)
		return 0;
	if (v & FS_CMSN_MAYBE)
		return 1;
	if (v & FS_CMSN_SPILLED)
		return 0;
	return (thresh_packets && fs_cmsn_packets(v) >= thresh_packets) ||
	       (thresh_bytes && fs_cmsn_bytes(v) >= thresh_bytes);
}

/*
 * Whether row row's cell *cell (of u's flow, u->hash set), which
 * fs_cms_nitro_may_reach_v() let through, has reached a threshold in
 * whole: narrow part, plus its wide part if it has spilled, whose maybe
 * bit is then set again from the wide part (fs_cmsn_maybe(), as the
 * default does after its scan).  The sampled variants' scans are dearer
 * than the default's (their other rows' lines are not loaded yet), so
 * this one line is read first.
 */
FS_INLINE int fs_cms_nitro_whole_reaches(struct fs_update_env *env,
					 const struct fs_sketch_params *p,
					 const struct fs_packet_update *u,
					 __u32 row, __u32 *cell)
{
	__u64 pk = fs_cmsn_packets(*cell), by = fs_cmsn_bytes(*cell);
	struct fs_cms_cell *w;

	if (*cell & FS_CMSN_SPILLED) {
		w = fs_cms_wide_cell(env, p, u, row);
		if (!w)
			return 0;	/* cannot be: fs_cms_find() checked */
		fs_cmsn_count_add(w, &pk, &by);
		*cell = (*cell & ~FS_CMSN_MAYBE) |
			fs_cmsn_maybe(w, u->thresh_packets, u->thresh_bytes);
	}
	return (u->thresh_packets && pk >= u->thresh_packets) ||
	       (u->thresh_bytes && by >= u->thresh_bytes);
}

/* fs_cms_may_reach() with v, the cell of a row this packet updated, in
 * row 0's place; the flags of all d rows read only past the first part. */
FS_INLINE int fs_cms_nitro_may_reach(const struct fs_cms_refs *c, __u32 v,
				     __u32 depth, __u64 thresh_packets,
				     __u64 thresh_bytes)
{
	__u32 flags = FS_CMSN_REPORTED, want = 0, row;

	if (!fs_cms_nitro_may_reach_v(v, thresh_packets, thresh_bytes))
		return 0;
	if (thresh_packets)
		want |= FS_CMSN_REPORTED_PACKETS;
	if (thresh_bytes)
		want |= FS_CMSN_REPORTED_BYTES;
FS_UNROLL
	for (row = 0; row < FS_CMS_MAX_DEPTH; row++)
		if (row < depth)
			flags &= *c->narrow[row];
	return (flags & want) != want;
}
#endif

#ifdef FS_CMS_NITRO_ONE
/*
 * The one-row option (cms_sampled.h, "One row a packet"): one row chosen
 * uniformly, its cell counted d times the increment.  No refs kept (the
 * stack has no room beside them): rows' cells are found again from the
 * flow hash when needed, their columns from the iterator (no division).
 * Standard update only: the build ignores conservative update.
 */

/* Row row's narrow cell for u's flow and slot (u->hash set), its column
 * without a division (fs_cms_nitro_column()). */
FS_INLINE __u32 *fs_cms_one_cell(struct fs_update_env *env,
				 const struct fs_sketch_params *p,
				 const struct fs_packet_update *u, __u32 row)
{
	struct fs_cms_narrow_chunk *nc;
	__u64 n;

	if (p->cms_log2_width > FS_CMS_MAX_LOG2W)	/* fs_params_check() rules it out */
		return 0;
	n = fs_cms_narrow_number(p, u->slot, row,
				 fs_cms_nitro_column(u->hash, p->cms_log2_width, row));
	nc = fs_env_chunk(env, FS_DP_CMS_NARROW, (__u32)(n >> FS_CMSN_CHUNK_SHIFT));
	return nc ? &nc->cells[n & FS_CMSN_CHUNK_MASK] : 0;
}

FS_INLINE int fs_cms_one_update(struct fs_update_env *env,
				const struct fs_sketch_params *p,
				struct fs_packet_update *u, __u32 depth,
				__u64 packets)
{
	__u64 mp = 0x7fffffffffffffffULL, mb = 0x7fffffffffffffffULL, dp, db;
	__u32 flags = FS_CMSN_REPORTED, want = 0, row, r, *cell;
	struct fs_cms_nitro *ns = fs_env_nitro(env);
	struct fs_cms_cell *w;

	if (!ns)
		return FS_UPDATE_ENOENT;
	row = fs_cms_nitro_one_row(ns, depth);
	cell = fs_cms_one_cell(env, p, u, row);
	if (!cell)
		return FS_UPDATE_ENOENT;
	dp = fs_cms_nitro_scale_d(packets, depth);
	db = fs_cms_nitro_scale_d(u->bytes, depth);
	if (fs_cmsn_fits(*cell, dp, db)) {
		fs_cmsn_add_in(cell, dp, db);
	} else {
		w = fs_cms_wide_cell(env, p, u, row);
		if (!w)
			return FS_UPDATE_ENOENT;
		fs_cmsn_spill(cell, w, dp, db, u->thresh_packets, u->thresh_bytes);
	}
	/* The report rule (cms.h), from the sampled row first: the
	 * estimate is at most its cell (fs_cms_nitro_may_reach()).  A
	 * spilled cell whose maybe bit is set is read whole here, one wide
	 * line, and its maybe bit set again from it (as the default does
	 * after its scan): the d rows are looked at only when this cell's
	 * whole count has reached a threshold. */
	if (!fs_cms_nitro_may_reach_v(*cell, u->thresh_packets, u->thresh_bytes))
		return 0;
	if (!fs_cms_nitro_whole_reaches(env, p, u, row, cell))
		return 0;
	if (u->thresh_packets)
		want |= FS_CMSN_REPORTED_PACKETS;
	if (u->thresh_bytes)
		want |= FS_CMSN_REPORTED_BYTES;
FS_UNROLL
	for (r = 0; r < FS_CMS_MAX_DEPTH; r++) {
		__u32 *x;

		if (r >= depth)
			continue;
		x = fs_cms_one_cell(env, p, u, r);
		if (!x)
			return FS_UPDATE_ENOENT;
		flags &= *x;
	}
	if ((flags & want) == want)	/* reported already */
		return 0;
FS_UNROLL
	for (r = 0; r < FS_CMS_MAX_DEPTH; r++) {
		__u64 pk, by;
		__u32 *x, v;

		if (r >= depth)
			continue;
		x = fs_cms_one_cell(env, p, u, r);
		if (!x)
			return FS_UPDATE_ENOENT;
		v = *x;
		pk = fs_cmsn_packets(v);
		by = fs_cmsn_bytes(v);
		if (v & FS_CMSN_SPILLED) {
			w = fs_cms_wide_cell(env, p, u, r);
			if (!w)
				return FS_UPDATE_ENOENT;
			fs_cmsn_count_add(w, &pk, &by);
		}
		mp = fs_min_u63(pk, mp);
		mb = fs_min_u63(by, mb);
	}
	if (fs_cms_reaches(mp, u->thresh_packets, !!(flags & FS_CMSN_REPORTED_PACKETS)))
		u->report |= FS_REPORT_PACKETS;
	if (fs_cms_reaches(mb, u->thresh_bytes, !!(flags & FS_CMSN_REPORTED_BYTES)))
		u->report |= FS_REPORT_BYTES;
	if (!u->report)
		return 0;
FS_UNROLL
	for (r = 0; r < FS_CMS_MAX_DEPTH; r++) {
		__u32 *x;

		if (r >= depth)
			continue;
		x = fs_cms_one_cell(env, p, u, r);
		if (!x)
			return FS_UPDATE_ENOENT;
		if (u->report & FS_REPORT_PACKETS)
			*x |= FS_CMSN_REPORTED_PACKETS;
		if (u->report & FS_REPORT_BYTES)
			*x |= FS_CMSN_REPORTED_BYTES;
	}
	return 0;
}
#endif

/*
 * Count 1 + u->extra_packets packets (one, a GSO skb's segments, or none) of
 * u->bytes bytes in all for flow u->key in slot u->slot:
 * Count-Min packets and bytes, distinct flows, sources and destinations,
 * and decide whether the flow is to be reported (cms.h, "Heavy-hitter
 * reporting": u->thresh_* come from fs_hh_threshold() of the window's
 * running totals, the cells' flags keep a flow to one report).
 * k is the hash key derived from p->secret (fs_hash_key_derive()), passed
 * separately because it is expanded once at load, not per packet.
 * Returns 0 or FS_UPDATE_ENOENT; sets u->hash and u->report.
 *
 * The row minimum (the flow's estimate before this packet) is needed by
 * conservative update, before it writes, and by the report decision.
 * Standard update adds first and takes the minimum only when row 0 says
 * a report is possible (fs_cms_may_reach()), which for most packets it
 * is not.
 */
FS_INLINE int fs_sketch_update(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_hash_key *k,
			       struct fs_packet_update *u)
{
#ifdef __bpf__
	/* The frozen .rodata itself: a copy would cost 32 bytes of a stack
	 * that has none to spare (fs_cms_refs), and the reloads it saves
	 * are of one line every packet reads anyway. */
	const struct fs_sketch_params *p = params;
#else
	/* A private copy: the byte-sized fields may alias the cells and
	 * registers this function stores to, so through the caller's pointer
	 * every store would force them to be loaded again. */
	const struct fs_sketch_params copy = *params, *p = &copy;
#endif
	struct fs_hll_refs reg = {};
	struct fs_packet_hashes h;
#ifndef FS_CMS_NITRO_ONE
	struct fs_cms_refs c;
#endif
	/* The flow's estimate after this packet, and its cells' flags. */
	struct fs_cms_scan sc = { 0, 0, 0, 0 };
	__u32 depth = p->cms_depth, row;
	int conservative = p->flags & FS_PARAM_F_CONSERVATIVE;
	__u64 packets = (__u64)(1 + (__s64)u->extra_packets);

#ifdef FS_MUTANT_SEGS_ONE	/* `make mutants` only: every update one packet */
	packets = 1;
#endif

	fs_packet_hash(&u->key, k, &h);
	u->hash = h.flow;
	u->report = 0;
#ifdef FS_MUTANT_CMS_UNDERCOUNT	/* `make mutants` only: a quarter of the
				 * flows lose their odd-sized packets */
	if (!(h.flow & 3) && (u->bytes & 1))
		return 0;
#endif

	/* Find every cell and register first, then update: nothing is
	 * written unless all of them exist, and the lines can be fetched
	 * together (fs_env_prefetch above). */
#ifdef FS_CMS_NITRO_ONE
	/* One row's cell, found by fs_cms_one_update() (no refs kept). */
	if (fs_hll_find(env, p, u->slot, FS_HLL_FLOWS, h.flow, &reg) ||
#else
	if (fs_cms_find(env, p, u->slot, h.flow, &c) ||
	    fs_hll_find(env, p, u->slot, FS_HLL_FLOWS, h.flow, &reg) ||
#endif
	    fs_hll_find(env, p, u->slot, FS_HLL_SOURCES, h.src, &reg) ||
	    fs_hll_find(env, p, u->slot, FS_HLL_DESTS, h.dst, &reg))
		return FS_UPDATE_ENOENT;

#ifdef FS_CMS_NITRO_ONE
	(void)conservative, (void)sc, (void)row;
	if (fs_cms_one_update(env, p, u, depth, packets))
		return FS_UPDATE_ENOENT;
#else
	if (conservative) {
		/* The minimum before the packet decides what each row gets:
		 * a row below min + increment is raised to it, per metric. */
		fs_cms_rows_scan(env, p, u, &c, depth, &sc);
FS_UNROLL
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
			__u64 cp, cb, dp = 0, db = 0;

			if (row >= depth)
				continue;
			fs_cms_row_count(env, p, u, &c, row, &cp, &cb);
			if (cp < sc.min_packets + packets)
				dp = sc.min_packets + packets - cp;
			if (cb < sc.min_bytes + u->bytes)
				db = sc.min_bytes + u->bytes - cb;
			if (dp || db)
				fs_cms_row_add(env, p, &c, row, dp, db, u);
		}
		/* Both update rules raise the row minimum by exactly the
		 * increment. */
		sc.min_packets += packets;
		sc.min_bytes += u->bytes;
	} else {
#if defined(FS_CMS_NITRO)
		/* Sampled rows only, each by q = 2^k times the increment
		 * (cms_sampled.h); the lines of the others are not touched. */
		struct fs_cms_nitro *ns = fs_env_nitro(env);
		__u32 mask, last = 0, *lastcell = 0;

		if (!ns)
			return FS_UPDATE_ENOENT;
		mask = fs_cms_nitro_rows(ns, depth, FS_CMS_NITRO_K);
FS_UNROLL
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
			if (row >= depth || !(mask & (1U << row)))
				continue;
			fs_cms_row_add(env, p, &c, row,
				       fs_cms_nitro_scale(packets, FS_CMS_NITRO_K),
				       fs_cms_nitro_scale(u->bytes, FS_CMS_NITRO_K), u);
			last = row;
			lastcell = c.narrow[row];
		}
		/* A spilled cell with its maybe bit is read whole first, one
		 * wide line, and its maybe bit set again from it (as the
		 * default does after its scan): the d rows are looked at only
		 * when the cell's whole count has reached a threshold. */
		if (lastcell && fs_cms_nitro_may_reach_v(*lastcell, u->thresh_packets,
							 u->thresh_bytes) &&
		    fs_cms_nitro_whole_reaches(env, p, u, last, lastcell) &&
		    fs_cms_nitro_may_reach(&c, *lastcell, depth, u->thresh_packets,
					   u->thresh_bytes))
			fs_cms_rows_scan(env, p, u, &c, depth, &sc);
#else
FS_UNROLL
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
			if (row >= depth)
				continue;
			fs_cms_row_add(env, p, &c, row, packets, u->bytes, u);
		}
		/* The estimate after the packet is at most row 0's cell, so
		 * while that cell cannot have reached a threshold no report
		 * is due and the minimum is not needed: the common packet, of
		 * a flow far below phi of its window, stops here.  min = 0
		 * then decides "no report" too: a threshold row 0 has not
		 * reached exceeds this update's increment, which row 0
		 * holds.  Adding leaves the flags as they were, so the scan
		 * after the add sees them as before. */
		if (fs_cms_may_reach(&c, depth, u->thresh_packets,
				     u->thresh_bytes)) {
			fs_cms_rows_scan(env, p, u, &c, depth, &sc);
#ifndef FS_CMS_WIDE
			/* The check read row 0's wide part: look again at
			 * whether it can be near a threshold (cms.h). */
			if (*c.narrow[0] & FS_CMSN_SPILLED) {
				struct fs_cms_cell *w0 = fs_cms_wide_cell(env, p, u, 0);

				if (w0)
					*c.narrow[0] = (*c.narrow[0] & ~FS_CMSN_MAYBE) |
						       fs_cmsn_maybe(w0, u->thresh_packets,
								     u->thresh_bytes);
			}
#endif
		}
#endif /* FS_CMS_NITRO */
	}
#ifdef FS_MUTANT_REPORT_NO_FLAGS	/* `make mutants` only */
	sc.flagged_packets = sc.flagged_bytes = 0;
#endif
#ifdef FS_MUTANT_REPORT_CROSSING	/* `make mutants` only: the old rule */
	if (sc.min_packets - packets >= u->thresh_packets)
		sc.flagged_packets = 1;
#endif
	if (fs_cms_reaches(sc.min_packets, u->thresh_packets, sc.flagged_packets))
		u->report |= FS_REPORT_PACKETS;
	if (fs_cms_reaches(sc.min_bytes, u->thresh_bytes, sc.flagged_bytes))
		u->report |= FS_REPORT_BYTES;
	if (u->report) {
FS_UNROLL
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
			if (row >= depth)
				continue;
			fs_cms_row_flag(&c, row, u->report);
		}
	}
#endif /* FS_CMS_NITRO_ONE */

	fs_hll_raise(&reg, FS_HLL_FLOWS, h.flow, p->hll_p);
	fs_hll_raise(&reg, FS_HLL_SOURCES, h.src, p->hll_p);
	fs_hll_raise(&reg, FS_HLL_DESTS, h.dst, p->hll_p);
	return 0;
}

/* ---- The detection sketches (detect.h) ---------------------------------- */

/*
 * The bucket of index i (prefix.h's or spread.h's numbering within the
 * slot) of slot in datapath map m, or NULL (a map smaller than the
 * parameters say).  m is a constant at every call.
 */
FS_INLINE void *fs_detect_bucket(struct fs_update_env *env, enum fs_dp_map m,
				 __u64 per_slot, __u32 slot, __u32 i)
{
	__u64 e = fs_detect_element(per_slot, slot, i);
	void *c = fs_env_chunk(env, m, (__u32)(e >> FS_DETECT_CHUNK_SHIFT));

	if (!c)
		return 0;
	return (__u8 *)c + (e & FS_DETECT_CHUNK_MASK) * 64;
}

/*
 * One update of the spread sketch: prefix.h's and spread.h's updates
 * with each bucket found through the map (fs_spread_update() there, over
 * one flat slot, is the same arithmetic).
 */
FS_INLINE int fs_detect_spread(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_flow_key *key,
			       const struct fs_packet_hashes *h, __u32 slot)
{
	struct fs_spread_params p;
	__u64 per_slot = fs_spread_buckets_per_slot(params);
	__u32 side, r;

	fs_params_spread(params, &p);
FS_UNROLL
	for (side = 0; side < FS_SPREAD_NSIDES; side++) {
#ifdef FS_MUTANT_SPREAD_NO_PORT	/* `make mutants` only: a source's element
				 * is its destination without the port */
		__u64 e = fs_spread_element(side, h->src, h->dst, 0);
#else
		__u64 e = fs_spread_element(side, h->src, h->dst, key->dport);
#endif
		__u64 hk = side == FS_SPREAD_SRC ? h->src : h->dst;
		const __u8 *k = side == FS_SPREAD_SRC ? key->src : key->dst;

		if (!fs_spread_sampled(e, p.sample_shift))
			continue;
FS_UNROLL
		for (r = 0; r < FS_SPREAD_MAX_DEPTH; r++) {
			struct fs_spread_bucket *b;

			if (r >= p.depth)
				continue;
			b = fs_detect_bucket(env, FS_DP_SPREAD, per_slot, slot,
					     fs_spread_bucket_index(&p, side, r, hk));
			if (!b)
				return FS_UPDATE_ENOENT;
			fs_spread_bucket_add(b, e, k, key->family);
		}
	}
	return 0;
}

FS_INLINE int fs_detect_prefix(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_hash_key *k,
			       const struct fs_flow_key *key,
			       const struct fs_packet_hashes *h, __u64 n,
			       __u64 packets, __u64 bytes, __u32 slot)
{
	struct fs_prefix_params p;
	__u64 per_slot = fs_prefix_buckets_per_slot(params);
	__u8 masked[16] __attribute__((aligned(8)));
	__u64 hx;
	__u8 tag;
	__u32 r;

	fs_params_prefix(params, &p);
	if (!fs_prefix_pick(k, key, h->flow, n, p.skip_shift, &tag, masked, &hx))
		return 0;
FS_UNROLL
	for (r = 0; r < FS_PREFIX_MAX_DEPTH; r++) {
		struct fs_prefix_bucket *b;

		if (r >= p.depth)
			continue;
		b = fs_detect_bucket(env, FS_DP_PREFIX, per_slot, slot,
				     fs_prefix_bucket_index(&p, r, hx));
		if (!b)
			return FS_UPDATE_ENOENT;
		fs_prefix_bucket_add_n(b, tag, masked, packets, bytes);
	}
	return 0;
}

/*
 * Both, for one update of packets (0 or more) of bytes in all, of the
 * flow key with packet hashes h, the n-th of its CPU's window, in slot.
 * 0 or FS_UPDATE_ENOENT.
 */
FS_INLINE int fs_detect_update(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_hash_key *k,
			       const struct fs_flow_key *key,
			       const struct fs_packet_hashes *h, __u64 n,
			       __u64 packets, __u64 bytes, __u32 slot)
{
	int err = 0;

	if (params->spread_log2w)
		err = fs_detect_spread(env, params, key, h, slot);
	if (!err && params->prefix_log2w)
		err = fs_detect_prefix(env, params, k, key, h, n, packets, bytes, slot);
	return err;
}

/* ---- The keyed sample (sample.h) --------------------------------------- */

/*
 * packets (0 or more) of bytes in all of flow key, keyed flow hash h_flow,
 * into the sample of slot: nothing for the flows above the rate's limit
 * (all but 1 in R), one bucket of one chunk for the others.  0 or
 * FS_UPDATE_ENOENT.
 */
FS_INLINE int fs_sample_update(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_flow_key *key, __u64 h_flow,
			       __u64 packets, __u64 bytes, __u32 slot)
{
	__u64 s = fs_sample_value(h_flow), e;
	struct fs_sample_bucket *b;

	if (!fs_sample_maybe(s, params->sample_shift))
		return 0;
	e = fs_sample_element(params, slot, fs_sample_bucket_index(s, params->sample_log2b));
	b = fs_env_chunk(env, FS_DP_SAMPLE, (__u32)(e >> FS_SAMPLE_CHUNK_SHIFT));
	if (!b)
		return FS_UPDATE_ENOENT;
	fs_sample_add(b + (e & FS_SAMPLE_CHUNK_MASK), params->sample_shift, key, s,
		      packets, bytes);
	return 0;
}

#endif /* FLOWSKETCH_UPDATE_H */
