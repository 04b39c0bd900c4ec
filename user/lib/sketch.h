/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sketch.h - one window's sketches in user space, merged over CPUs.
 *
 * The datapath keeps, per CPU, FS_NSLOTS copies of a Count-Min sketch and
 * FS_HLL_NSKETCH HyperLogLogs, chunked into per-CPU map values (cms.h,
 * hll.h, maps.h).  A struct fs_sketch holds one such copy in the same
 * numbering with slot 0 only, unchunked:
 *
 *     cms[(row << log2w) | column]             depth << log2w cells
 *     hll[(sketch << p) | index]               FS_HLL_NSKETCH << p registers
 *     prefix[(row << L) | column]              prefix buckets (prefix.h)
 *     spread[((side d + row) << L) | column]   spread buckets (spread.h)
 *     sample[s mod 2^b]                        sample buckets (sample.h)
 *
 * and is what the daemon folds CPUs and windows into and queries.  Both
 * sketches merge exactly (cells add, registers take the max), so the sum
 * of per-CPU copies is the sketch of all packets, and a sum of windows is
 * the sketch of their span.
 */
#ifndef FLOWSKETCH_SKETCH_H
#define FLOWSKETCH_SKETCH_H

#include <stddef.h>
#include "flowsketch/params.h"
#include "flowsketch/cms.h"
#include "flowsketch/hll.h"
#include "flowsketch/maps.h"
#include "flowsketch/sketch_kind.h"

/* One window (or a sum of windows), merged over CPUs. */
struct fs_sketch {
	struct fs_sketch_params params;
	union {
		struct {
			struct fs_cms_cell *cms;	/* cms_depth << cms_log2_width cells */
			__u8 *hll;	/* FS_HLL_NSKETCH << hll_p registers */
			/* The detection sketches (detect.h); no bytes when
			 * the parameters leave them off. */
			struct fs_prefix_bucket *prefix;	/* depth << log2w */
			struct fs_spread_bucket *spread;	/* 2 sides of depth << log2w */
			/* The keyed sample (sample.h): 2^b buckets, none when
			 * off; exported cut (sample.h, "Exports"). */
			struct fs_sample_bucket *sample;
		};
		void *part[FS_NKINDS];	/* the same by kind (sketch_kind.h) */
	};
	struct fs_window_totals totals;
};

_Static_assert(__builtin_offsetof(struct fs_sketch, hll) ==
	       __builtin_offsetof(struct fs_sketch, part[FS_KIND_HLL]), "parts by kind");
_Static_assert(__builtin_offsetof(struct fs_sketch, sample) ==
	       __builtin_offsetof(struct fs_sketch, part[FS_KIND_SAMPLE]), "parts by kind");

/* Allocate an empty sketch: 0, -EINVAL (bad params) or -ENOMEM. */
int fs_sketch_init(struct fs_sketch *s, const struct fs_sketch_params *p);
void fs_sketch_free(struct fs_sketch *s);
/* Zero every cell, register and total; keeps the params and memory. */
void fs_sketch_reset(struct fs_sketch *s);
/* Memory of every kind's part (the Count-Min cells plus the HyperLogLog
 * registers). */
size_t fs_sketch_bytes(const struct fs_sketch_params *p);

/*
 * Fold one CPU's copy of one datapath slot into s: every datapath map
 * into its kind's part (sketch_kind.h, FS_DP_MAPS: cells add, narrow
 * cells add their fields, registers and packed registers take the max).
 * chunks[m] points at that CPU's nchunks[m] chunks of map m as the map
 * holds them (all slots, chunked: chunk.h); slot picks which slot.
 * -EINVAL when the slot is out of range or an array is too short to hold
 * it.  The slot's totals live in another map: add them with
 * fs_sketch_add_totals().
 */
int fs_sketch_add_slot(struct fs_sketch *s, void *const chunks[FS_NDPMAPS],
		       const __u32 nchunks[FS_NDPMAPS], __u32 slot);
/*
 * Fold one CPU's copy of one chunk of datapath map m (map element
 * `chunk`, as the map holds it) into s: the elements of slot that the
 * chunk holds, none if it holds none.  What a rotation does with each
 * element it reads, so that it never needs an image of all chunks.
 * -EINVAL for a bad slot.
 */
int fs_sketch_add_chunk(struct fs_sketch *s, enum fs_dp_map m, __u32 slot,
			__u32 chunk, const void *c);
/* s->totals += t, e.g. one CPU's totals of the window (fs_hot, maps.h). */
void fs_sketch_add_totals(struct fs_sketch *s, const struct fs_window_totals *t);

/* s += o (cms add, hll max, totals add); -EINVAL if fs_params_mergeable() says no. */
int fs_sketch_merge(struct fs_sketch *s, const struct fs_sketch *o);

/* Count-Min point query for the flow with this hash: min over rows
 * (packets and bytes independently). */
void fs_sketch_query(const struct fs_sketch *s, __u64 flow_hash,
		     struct fs_cms_cell *est);
/* The same, by the flow's column in each row (cols[0 .. depth)): how an
 * export's reader queries, holding columns and no hash (export_perm.h). */
void fs_sketch_query_columns(const struct fs_sketch *s, const __u32 *cols,
			     struct fs_cms_cell *est);

/* Error bound the params imply: eps = e / w, delta = exp(-d). */
double fs_cms_epsilon(const struct fs_sketch_params *p);
double fs_cms_delta(const struct fs_sketch_params *p);
/* fs_ctl.hh_phi_q32 for a report fraction phi in [0, 1]: floor(phi * 2^32),
 * rounded down so that no flow above phi goes unreported (cms.h). */
__u64 fs_hh_phi_q32(double phi);

/* Estimated distinct flows/sources/destinations (FS_HLL_FLOWS/SOURCES/DESTS);
 * NaN for another value of which. */
double fs_sketch_distinct(const struct fs_sketch *s, enum fs_hll_sketch which);

#endif /* FLOWSKETCH_SKETCH_H */
