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
 *   static void *fs_env_chunk(struct fs_update_env *, enum fs_kind k, __u32 chunk);
 *
 * (always-inline, returning NULL when the chunk does not exist; chunk
 * `chunk` of kind k's map, a struct fs_KIND_chunk, sketch_kind.h).  k is a
 * constant at every call, so each build's choice by kind folds away.  In
 * BPF it is bpf_map_lookup_elem() on the kind's per-CPU map, in the module
 * the same lookup written out, in user space plain arrays.
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

/* The register of flow hash h in HyperLogLog `sketch` of slot, or NULL
 * when its chunk does not exist. */
FS_INLINE __u8 *fs_hll_register(struct fs_update_env *env,
				const struct fs_sketch_params *p, __u32 slot,
				__u32 sketch, __u64 h)
{
	__u64 reg = fs_hll_register_number(p, slot, sketch,
					   fs_hll_index(h, p->hll_p));
	struct fs_hll_chunk *chunk;

	chunk = fs_env_chunk(env, FS_KIND_HLL,
			     (__u32)(reg >> FS_HLL_CHUNK_SHIFT));
	if (!chunk)
		return 0;
	return &chunk->regs[reg & FS_HLL_CHUNK_MASK];
}

/*
 * The row minimum of a flow's cells (its estimate) and the AND of their
 * raw counters (bit 63 set iff every cell carries the report flag), for
 * packets and bytes.  Branch-free (fs_min_u63): cells are random, so a
 * compare-and-branch would mispredict about every other row.
 */
FS_INLINE void fs_cms_rows_scan(struct fs_cms_cell *const *cell, __u32 depth,
				__u64 *min_packets, __u64 *min_bytes,
				__u64 *flagged_packets, __u64 *flagged_bytes)
{
	/* Counters stay below 2^63, as fs_min_u63 requires. */
	__u64 mp = 0x7fffffffffffffffULL, mb = 0x7fffffffffffffffULL;
	__u64 fp = ~0ULL, fb = ~0ULL;
	__u32 row;

FS_UNROLL
	for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
		const struct fs_cms_cell *c;

		if (row >= depth)
			continue;
		c = cell[row];
		fp &= c->packets;
		fb &= c->bytes;
		mp = fs_min_u63(fs_cms_count(c->packets), mp);
		mb = fs_min_u63(fs_cms_count(c->bytes), mb);
	}
	*min_packets = mp;
	*min_bytes = mb;
	*flagged_packets = fp;
	*flagged_bytes = fb;
}

/* Whether a flow whose row-0 cell is c (after this packet) can have
 * reached a non-zero threshold: its estimate is at most that cell. */
FS_INLINE int fs_cms_may_reach(const struct fs_cms_cell *c, __u64 thresh_packets,
			       __u64 thresh_bytes)
{
#ifdef FS_MUTANT_REPORT_SKIP_AT	/* `make mutants` only: skips the report
					   of a flow that just reached T */
	return (thresh_packets && fs_cms_count(c->packets) > thresh_packets) ||
	       (thresh_bytes && fs_cms_count(c->bytes) > thresh_bytes);
#endif
	return (thresh_packets && fs_cms_count(c->packets) >= thresh_packets) ||
	       (thresh_bytes && fs_cms_count(c->bytes) >= thresh_bytes);
}

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
	/* A private copy: the byte-sized fields may alias the cells and
	 * registers this function stores to, so through the caller's pointer
	 * every store would force them to be loaded again. */
	const struct fs_sketch_params copy = *params, *p = &copy;
	struct fs_cms_cell *cell[FS_CMS_MAX_DEPTH];
	__u8 *reg[FS_HLL_NSKETCH];
	struct fs_packet_hashes h;
	struct fs_cms_columns cols;
	/* The flow's estimate before this packet, and the AND of its cells'
	 * raw counters (fs_cms_rows_scan()). */
	__u64 min_packets, min_bytes;
	__u64 flagged_packets = 0, flagged_bytes = 0;
	__u32 depth = p->cms_depth, row;
	int conservative = p->flags & FS_PARAM_F_CONSERVATIVE;
	__u64 packets = (__u64)(1 + (__s64)u->extra_packets);

#ifdef FS_MUTANT_SEGS_ONE	/* `make mutants` only: every update one packet */
	packets = 1;
#endif

	fs_packet_hash(&u->key, k, &h);
	u->hash = h.flow;
	u->report = 0;

	/* Find every cell and register first, then update: nothing is
	 * written unless all of them exist, and the lines can be fetched
	 * together (fs_env_prefetch above). */
	fs_cms_columns_init(&cols, h.flow, p->cms_log2_width);
FS_UNROLL
	for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
		struct fs_cms_chunk *chunk;
		__u64 n;

		/* continue, not break: clang cannot fully unroll a loop with
		 * an early exit on a value it does not know (the depth from
		 * .rodata); the verifier prunes the rows the depth rules out. */
		if (row >= depth)
			continue;
		n = fs_cms_cell_number(p, u->slot, row,
				       fs_cms_next_column(&cols));
		chunk = fs_env_chunk(env, FS_KIND_CMS,
				     (__u32)(n >> FS_CMS_CHUNK_SHIFT));
		if (!chunk)
			return FS_UPDATE_ENOENT;
		cell[row] = &chunk->cells[n & FS_CMS_CHUNK_MASK];
		fs_env_prefetch(cell[row]);
	}
	reg[FS_HLL_FLOWS] = fs_hll_register(env, p, u->slot, FS_HLL_FLOWS, h.flow);
	reg[FS_HLL_SOURCES] = fs_hll_register(env, p, u->slot, FS_HLL_SOURCES, h.src);
	reg[FS_HLL_DESTS] = fs_hll_register(env, p, u->slot, FS_HLL_DESTS, h.dst);
	if (!reg[FS_HLL_FLOWS] || !reg[FS_HLL_SOURCES] || !reg[FS_HLL_DESTS])
		return FS_UPDATE_ENOENT;
	fs_env_prefetch(reg[FS_HLL_FLOWS]);
	fs_env_prefetch(reg[FS_HLL_SOURCES]);
	fs_env_prefetch(reg[FS_HLL_DESTS]);

	if (conservative) {
		/* The minimum before the packet decides what each row gets. */
		fs_cms_rows_scan(cell, depth, &min_packets, &min_bytes,
				 &flagged_packets, &flagged_bytes);
FS_UNROLL
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
			if (row >= depth)
				continue;
			fs_cms_cell_add(cell[row], packets, u->bytes,
					min_packets, min_bytes, 1);
		}
	} else {
FS_UNROLL
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
			if (row >= depth)
				continue;
			fs_cms_cell_add(cell[row], packets, u->bytes, 0, 0, 0);
		}
		/* The estimate after the packet is at most row 0's cell, so
		 * while that cell is below both thresholds no report is due
		 * and the minimum is not needed: the common packet, of a flow
		 * far below phi of its window, stops here.  min = 0 then
		 * decides "no report" too: row 0 holds this update, so a
		 * packets threshold above it exceeds packets = 0 + packets,
		 * and a bytes threshold above it exceeds 0 + u->bytes.  Adding
		 * leaves bit 63 as it was (counts stay below 2^63), so the
		 * scan after the add sees the flags as they were before. */
		if (fs_cms_may_reach(cell[0], u->thresh_packets,
				     u->thresh_bytes)) {
			fs_cms_rows_scan(cell, depth, &min_packets, &min_bytes,
					 &flagged_packets, &flagged_bytes);
			min_packets -= packets;
			min_bytes -= u->bytes;
		} else {
			min_packets = min_bytes = 0;
		}
	}
	/* Both update rules raise the row minimum by exactly the increment,
	 * so min + inc is the estimate after this packet. */
#ifdef FS_MUTANT_REPORT_NO_FLAGS	/* `make mutants` only */
	flagged_packets = flagged_bytes = 0;
#endif
#ifdef FS_MUTANT_REPORT_CROSSING	/* `make mutants` only: the old rule */
	if (min_packets >= u->thresh_packets)
		flagged_packets = FS_CMS_REPORTED;
#endif
	if (fs_cms_reaches(min_packets + packets, u->thresh_packets,
			   flagged_packets & FS_CMS_REPORTED))
		u->report |= FS_REPORT_PACKETS;
	if (fs_cms_reaches(min_bytes + u->bytes, u->thresh_bytes,
			   flagged_bytes & FS_CMS_REPORTED))
		u->report |= FS_REPORT_BYTES;
	if (u->report) {
		__u64 flag_packets = u->report & FS_REPORT_PACKETS ?
				     FS_CMS_REPORTED : 0;
		__u64 flag_bytes = u->report & FS_REPORT_BYTES ?
				   FS_CMS_REPORTED : 0;

FS_UNROLL
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++) {
			if (row >= depth)
				continue;
			cell[row]->packets |= flag_packets;
			cell[row]->bytes |= flag_bytes;
		}
	}

	fs_hll_register_max(reg[FS_HLL_FLOWS], fs_hll_rank(h.flow, p->hll_p));
	fs_hll_register_max(reg[FS_HLL_SOURCES], fs_hll_rank(h.src, p->hll_p));
	fs_hll_register_max(reg[FS_HLL_DESTS], fs_hll_rank(h.dst, p->hll_p));
	return 0;
}

#endif /* FLOWSKETCH_UPDATE_H */
