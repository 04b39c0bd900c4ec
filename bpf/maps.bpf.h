/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * maps.bpf.h - BPF definitions of the maps described in
 * include/flowsketch/maps.h, and the sketch parameters set before load.
 *
 * Sizes here are placeholders: the daemon sets max_entries of each
 * datapath map from the parameters (fs_dp_chunks(), sketch_kind.h) and the
 * ring buffer size from its options before it loads the object.
 */
#ifndef FLOWSKETCH_MAPS_BPF_H
#define FLOWSKETCH_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "flowsketch/maps.h"
#include "flowsketch/params.h"
#include "flowsketch/hash.h"
#include "flowsketch/sketch_kind.h"

/*
 * Set by the loader before load; .rodata is frozen, so the verifier treats
 * these as constants and prunes the branches they rule out.
 *
 * fs_params is deliberately not `const`: the update takes it as a plain
 * `const struct fs_sketch_params *` (the shared core knows no volatile),
 * and through such a pointer clang may fold the loads of a const object
 * into its initializer, i.e. run with the defaults below whatever the
 * loader wrote.  A non-const object in the .rodata section cannot be
 * folded, yet libbpf still maps the section read-only and freezes it.
 */
volatile struct fs_sketch_params fs_params SEC(".rodata") = {
	.magic = FS_PARAMS_MAGIC,
	.version = FS_PARAMS_VERSION,
	.cms_depth = FS_DEFAULT_CMS_DEPTH,
	.cms_log2_width = FS_DEFAULT_CMS_LOG2W,
	.hll_p = FS_DEFAULT_HLL_P,
	.nslots = FS_NSLOTS,
};
/* The per-packet hash key, fs_hash_key_derive(&fs_params.secret): the
 * loader expands it once so that the datapath never runs SipHash.  Not
 * const, for the same reason as fs_params; on a line of its own, so that
 * an IPv4 packet reads two lines of it (hash.h, "IPv4"). */
volatile struct fs_hash_key fs_hash_key SEC(".rodata") __attribute__((aligned(64)));
/* The blocklist filter's hash keys, fs_bloom_key_derive(&fs_params.secret)
 * (bloom.h), expanded by the loader like fs_hash_key. */
volatile struct fs_bloom_key fs_bloom_key SEC(".rodata") __attribute__((aligned(64)));
/* 1: call the flowsketch kernel module's kfuncs (kmod/); 0: pure BPF. */
const volatile __u32 fs_use_kfunc = 0;
/* fs_bfilter's blocks less one (a power of two less one): every block
 * index is masked with it, which is what lets the verifier see each
 * access inside the map's one value (fs_bfilter_size(), cidr.h). */
const volatile __u32 fs_bfilter_mask = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_ctl);
} fs_ctl SEC(".maps");

/* Each datapath map of sketch state: fs_cms, fs_cms_narrow, fs_hll,
 * fs_hll_packed (sketch_kind.h, FS_DP_MAPS). */
#define FS_DP_BPF_MAP(NAME, name, KIND)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);		\
		__uint(max_entries, 1);					\
		__type(key, __u32);					\
		__type(value, struct fs_##name##_chunk);		\
	} fs_##name SEC(".maps");
FS_DP_MAPS(FS_DP_BPF_MAP)
#undef FS_DP_BPF_MAP

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_hot_line);
} fs_hot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FS_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} fs_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} fs_reports SEC(".maps");

/* The blocklist (maps.h): two filters in one map, the summary of /16s,
 * the exact set, per-entry drops and the verdict's counters.  The loader
 * sizes them from its options. */
/* One value holding both filters, so that a packet looks the map up once
 * and its probes index into it (no helper call between them); its size is
 * the loader's (fs_bfilter_size()), hence no BTF type for the value. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct fs_bloom_block));
} fs_bfilter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_block_summary);
} fs_bsummary SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct fs_block_key4);
	__type(value, __u32);
} fs_block4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct fs_block_key6);
	__type(value, __u32);
} fs_block6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct fs_block_hits);
} fs_block_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_block_stats);
} fs_block_stats SEC(".maps");

/* Per-interface counts (maps.h, "Per-interface counts"). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_ifslots);
} fs_ifslot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FS_IFSLOTS + 1);
	__type(key, __u32);
	__type(value, struct fs_if_counts);
} fs_ifcount SEC(".maps");

/* Only ever updated from user space, for the RCU grace period that a
 * map-in-map update waits for (see maps.h, "Windows and slots"). */
struct fs_barrier_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} fs_barrier_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct fs_barrier_inner);
} fs_barrier SEC(".maps") = {
	.values = { [0] = &fs_barrier_inner },
};

/* The environment of include/flowsketch/update.h in the BPF build. */
struct fs_update_env {
	int unused;
};

/* A lookup must name its map: m is a constant at every call (update.h),
 * and the switch folds into the one lookup. */
static __always_inline void *fs_env_chunk(struct fs_update_env *env,
					  enum fs_dp_map m, __u32 chunk)
{
#define FS_DP_LOOKUP(NAME, name, KIND)					\
	case FS_DP_##NAME:						\
		return bpf_map_lookup_elem(&fs_##name, &chunk);
	switch (m) {
	FS_DP_MAPS(FS_DP_LOOKUP)
	default:
		return 0;
	}
#undef FS_DP_LOOKUP
}

/* This CPU's fs_hot line; NULL cannot happen (one element). */
static __always_inline struct fs_hot_line *fs_hot_line(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&fs_hot, &zero);
}

/* A cold counter of fs_stats (maps.h): not FS_STAT_RX or
 * FS_STAT_SKETCHED, which are fs_hot's. */
static __always_inline void fs_stat_inc(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&fs_stats, &stat);

	if (v)
		*v += 1;
}

/* This CPU's counts of interface slot (maps.h, "Per-interface counts");
 * NULL only for a slot past FS_IFSLOT_OTHER. */
static __always_inline struct fs_if_counts *fs_ifcount_of(__u32 slot)
{
	return bpf_map_lookup_elem(&fs_ifcount, &slot);
}

/*
 * The counts of the interface XDP runs on: a scan of the slots in use,
 * FS_IFSLOT_OTHER's if none has it.  A pointer, not the slot: each slot
 * the scan can end at is a constant on its own verifier path, and a key
 * the verifier must keep exact would keep the paths apart through all of
 * the parser (past the million-instruction limit); the pointers are the
 * same state whatever the slot.
 */
static __always_inline struct fs_if_counts *fs_xdp_ifcount(__u32 ifindex)
{
	struct fs_ifslots *t;
	__u32 zero = 0, i, n;

	t = bpf_map_lookup_elem(&fs_ifslot, &zero);
	if (!t)		/* an array element always exists */
		return fs_ifcount_of(FS_IFSLOT_OTHER);
	n = *(volatile __u32 *)&t->n;
	for (i = 0; i < FS_IFSLOTS && i < n; i++)
		if (*(volatile __u32 *)&t->ifindex[i] == ifindex)
			return fs_ifcount_of(i);
	return fs_ifcount_of(FS_IFSLOT_OTHER);
}

/* Add a counted frame's packets and bytes to its interface's counts. */
static __always_inline void fs_ifcount_add(struct fs_if_counts *c,
					   __u64 packets, __u64 bytes)
{
	if (c) {
		c->packets += packets;
		c->bytes += bytes;
	}
}

#endif /* FLOWSKETCH_MAPS_BPF_H */
