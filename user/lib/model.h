/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * model.h - the datapath's sketch state, kept in user-space memory.
 *
 * A model holds exactly what one CPU's elements of every datapath map
 * hold (all FS_NSLOTS slots, chunked the same way) and updates it with the same
 * fs_sketch_update() from include/flowsketch/update.h.  Tests feed the same
 * packets to a model and to the BPF programs (or the kernel module's kfunc)
 * and compare the bytes: the three builds must agree bit for bit.
 */
#ifndef FLOWSKETCH_MODEL_H
#define FLOWSKETCH_MODEL_H

#include <stddef.h>
#include "flowsketch/flow_key.h"
#include "flowsketch/hash.h"
#include "flowsketch/params.h"
#include "flowsketch/sketch_kind.h"
#include "flowsketch/maps.h"

/* Each datapath map's chunks and their count, by map (sketch_kind.h,
 * FS_DP_MAPS); the names are for the tests that read cells and
 * registers.  The model counts in the layout update.h is built with (the
 * narrow one, unless FS_CMS_WIDE), so some maps stay zero. */
struct fs_update_env {
	union {
		struct {
			struct fs_cms_chunk *cms;
			struct fs_cms_narrow_chunk *cms_narrow;
			struct fs_hll_chunk *hll;
			struct fs_hll_packed_chunk *hll_packed;
			struct fs_prefix_chunk *prefix;
			struct fs_spread_chunk *spread;
			struct fs_sample_chunk *sample;
		};
		void *chunks[FS_NDPMAPS];
	};
	union {
		struct {
			__u32 cms_chunks;
			__u32 cms_narrow_chunks;
			__u32 hll_chunks;
			__u32 hll_packed_chunks;
			__u32 prefix_chunks;
			__u32 spread_chunks;
			__u32 sample_chunks;
		};
		__u32 nchunks[FS_NDPMAPS];
	};
};

_Static_assert(__builtin_offsetof(struct fs_update_env, sample_chunks) ==
	       __builtin_offsetof(struct fs_update_env, nchunks[FS_DP_SAMPLE]),
	       "chunks by map");

struct fs_model {
	struct fs_sketch_params params;
	struct fs_hash_key key;		/* derived from params.secret */
	struct fs_update_env env;
	/* One CPU's fs_hot line (maps.h), for fs_model_packet(). */
	struct fs_hot_line hot;
};

/* 0, -EINVAL for bad params, -ENOMEM. */
int fs_model_init(struct fs_model *m, const struct fs_sketch_params *p);
void fs_model_free(struct fs_model *m);
/* Count one packet; returns the FS_REPORT_* bits or a negative errno. */
int fs_model_update(struct fs_model *m, const struct fs_flow_key *key,
		    __u64 bytes, __u32 slot, __u64 thresh_packets,
		    __u64 thresh_bytes, __u64 *hash);
/* Count packets (0 .. FS_EXTRA_PACKETS_MAX + 1: none, one, a GSO skb's
 * segments) of bytes bytes in all, as one update; same returns. */
int fs_model_update_segs(struct fs_model *m, const struct fs_flow_key *key,
			 __u32 packets, __u64 bytes, __u32 slot,
			 __u64 thresh_packets, __u64 thresh_bytes, __u64 *hash);
/*
 * What the datapath does with one keyed packet of window seq
 * (bpf/datapath.bpf.h): the slot's running totals, restarted from zero
 * when tagged with another window (maps.h, "Totals reset by epoch"), the
 * thresholds from them and phi_q32 (fs_ctl), the update, the totals and
 * their tag, and the sketched count (m->hot; rx is the caller's, it counts
 * frames before they are keyed).  Returns the FS_REPORT_* bits or a
 * negative errno.
 */
int fs_model_packet(struct fs_model *m, const struct fs_flow_key *key,
		    __u64 bytes, __u64 seq, __u64 phi_q32, __u64 *hash);
/* Zero one slot's cells and registers, as rotation does (the totals are
 * never zeroed: fs_model_packet() restarts them by their tag). */
void fs_model_zero_slot(struct fs_model *m, __u32 slot);

#endif /* FLOWSKETCH_MODEL_H */
