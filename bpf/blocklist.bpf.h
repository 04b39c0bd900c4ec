/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blocklist.bpf.h - the datapath's verdict step: is this source blocked?
 *
 * fs_block_verdict() runs after the sketch update (blocked packets are
 * still counted) on every IP packet, and returns XDP_DROP only for a
 * source that an entry of the exact set covers:
 *
 *   1. fs_ctl.bloom == 0 (k = 0): no blocklist, pass.  Nothing else is
 *      read, so an empty list costs one compare.
 *   2. Probe the filter (include/flowsketch/bloom.h) once per group that
 *      holds keys, with the source masked to the group's base: at most 4
 *      probes for IPv4, 6 for IPv6, each one line.  All "definitely not":
 *      pass.
 *   3. A "maybe": the exact confirm, one longest-prefix lookup in the
 *      family's LPM trie (fs_block4 / fs_block6).  No match: a false
 *      positive, pass.  A match: count it against the entry
 *      (fs_block_hits[id], atomically: every CPU may drop for one entry)
 *      and drop.
 *
 * The filter never decides a drop, so a false positive costs one trie
 * lookup and a false "definitely not" cannot happen (every entry's key is
 * in the filter the control word names before the entry counts as added,
 * see user space).  A filter block that cannot be found (a control word
 * naming a size larger than its map, which the daemon never writes) counts
 * as "maybe": the trie still decides.
 *
 * The control word is read once per packet from fs_ctl, which the packet
 * reads anyway: the filter it names, its size and k and the groups to
 * probe belong together, and a switch to a rebuilt filter is one store.
 */
#ifndef FLOWSKETCH_BLOCKLIST_BPF_H
#define FLOWSKETCH_BLOCKLIST_BPF_H

#include "maps.bpf.h"
#include "flowsketch/bloom.h"

#ifdef FS_BENCH_KERNEL_BLOOM
/*
 * The benchmark's reference (bench/bpf/bench.bpf.c defines the macro): the same
 * keys in the kernel's own BPF_MAP_TYPE_BLOOM_FILTER, probed with
 * bpf_map_peek_elem(), so that make bench compares the two filters under
 * one verdict step.  Not in the daemon's object.
 */
struct fs_kbloom_key {
	__u32 group;		/* family << 8 | group */
	__u8 addr[16];		/* the source masked to the group's base */
};

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(max_entries, 1);
	__uint(map_extra, 7);
	__type(value, struct fs_kbloom_key);
} fs_kbloom SEC(".maps");

/* The key is built in a per-CPU map value: the datapath's stack is
 * nearly full already. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_kbloom_key);
} fs_kbloom_scratch SEC(".maps");

static __always_inline int fs_kbloom_probe(__u32 family, __u32 g, __u32 len,
					   const __u8 *src)
{
	struct fs_kbloom_key *k;
	__u32 i, zero = 0;

	k = bpf_map_lookup_elem(&fs_kbloom_scratch, &zero);
	if (!k)
		return 1;
	k->group = family << 8 | g;
FS_UNROLL
	for (i = 0; i < 16; i++) {
		__u32 first = i * 8;

		if (len >= first + 8)
			k->addr[i] = src[i];
		else if (len > first)
			k->addr[i] = src[i] & (__u8)(0xff << (8 - (len - first)));
		else
			k->addr[i] = 0;
	}
	return !bpf_map_peek_elem(&fs_kbloom, k);
}
#endif

/* One probe: 1 "maybe" (or a block that does not exist), 0 "no". */
static __always_inline int fs_block_probe(__u32 base, __u64 h, __u32 log2_blocks,
					  __u32 k)
{
	__u32 idx = base + fs_bloom_block_index(h, log2_blocks);
	struct fs_bloom_block *b;

	b = bpf_map_lookup_elem(&fs_bloom, &idx);
	if (!b)
		return 1;
	return fs_bloom_block_test(b, h, k);
}

/*
 * Probe the groups of the source's family that hold keys: an exact group
 * by its bit (bloom.h, "Exact groups"), the others in the filter.  Returns
 * the filter probes made; *maybe set on the first "maybe".  family is a
 * constant at each call, so each family gets its own unrolled copy.
 */
static __always_inline __u32 fs_block_probe_family(const struct fs_flow_key *key,
						   __u64 ctl, int *maybe,
						   int kernel, __u32 family)
{
	const struct fs_bloom_key *bk = (const struct fs_bloom_key *)&fs_bloom_key;
	const int v4 = family == FS_FAMILY_IPV4;
	const __u32 ngroups = v4 ? FS_BLOOM_GROUPS4 : FS_BLOOM_GROUPS6;
	const __u32 exact = v4 ? FS_BLOOM_EXACT4 : FS_BLOOM_EXACT6;
	__u32 groups = v4 ? FS_BLOOM_CTL_GROUPS4(ctl) : FS_BLOOM_CTL_GROUPS6(ctl);
	const fs_alias_u32 *x = (const fs_alias_u32 *)key->src;
	struct fs_block_exact *ex = 0;
	__u32 probes = 0, g, zero = 0;

	if (groups & exact) {
		ex = bpf_map_lookup_elem(&fs_block_exact, &zero);
		if (!ex) {	/* cannot happen: one element */
			*maybe = 1;
			return 0;
		}
	}
FS_UNROLL
	for (g = 0; g < FS_BLOOM_GROUPS6; g++) {
		__u64 h;

		if (g >= ngroups || !(groups & (1U << g)) || *maybe)
			continue;
		if ((exact >> g) & 1) {
			if (ex)
				*maybe = fs_block_exact_test(ex, family, g, key->src);
			continue;
		}
		probes++;
#ifdef FS_BENCH_KERNEL_BLOOM
		if (kernel) {
			*maybe = fs_kbloom_probe(family, g, v4 ? fs_bloom_base4[g] :
							  fs_bloom_base6[g], key->src);
			continue;
		}
#endif
		h = v4 ? fs_bloom_hash4(bk, g, x[0]) :
			 fs_bloom_hash6(bk, g, (const __u32 *)x);
		*maybe = fs_block_probe(FS_BLOOM_CTL_BASE(ctl), h,
					FS_BLOOM_CTL_LOG2(ctl), FS_BLOOM_CTL_K(ctl));
	}
	return probes;
}

/* The entry id covering key's source, 0 for none (ids start at 1). */
static __always_inline __u32 fs_block_confirm(const struct fs_flow_key *key)
{
	__u32 *id;

	if (key->family == FS_FAMILY_IPV4) {
		struct fs_block_key4 k4 = { .prefixlen = 32 };

		__builtin_memcpy(k4.addr, key->src, sizeof(k4.addr));
		id = bpf_map_lookup_elem(&fs_block4, &k4);
	} else {
		struct fs_block_key6 k6 = { .prefixlen = 128 };

		__builtin_memcpy(k6.addr, key->src, sizeof(k6.addr));
		id = bpf_map_lookup_elem(&fs_block6, &k6);
	}
	return id ? *id : 0;
}

/* kernel: probe fs_kbloom instead (the benchmark's reference only). */
static __always_inline int fs_block_verdict_with(const struct fs_flow_key *key,
						 __u64 bytes, __u64 ctl, int kernel)
{
	struct fs_block_stats *st;
	struct fs_block_hits *hits;
	__u32 zero = 0, id;
	int maybe = 0;

	if (!FS_BLOOM_CTL_K(ctl))
		return XDP_PASS;
	st = bpf_map_lookup_elem(&fs_block_stats, &zero);
	if (!st)	/* one element always exists */
		return XDP_PASS;
	/*
	 * A frame whose source the parser could not reach (more VLAN tags
	 * than it walks, parse.bpf.h "Deep VLAN stacks").  The stack may
	 * still deliver it, so while a list is in force it is dropped
	 * (counted apart from the entries' drops, since no entry matched):
	 * failing closed costs only frames no real network sends, failing
	 * open would let any blocked source through.
	 */
	if (key->family == FS_FAMILY_UNJUDGED) {
		st->unjudged += 1;
		st->unjudged_bytes += bytes;
		return XDP_DROP;
	}
	st->checked += 1;
	if (key->family == FS_FAMILY_IPV4)
		st->probes += fs_block_probe_family(key, ctl, &maybe, kernel,
						    FS_FAMILY_IPV4);
	else
		st->probes += fs_block_probe_family(key, ctl, &maybe, kernel,
						    FS_FAMILY_IPV6);
	if (!maybe)
		return XDP_PASS;
	st->maybe += 1;
	id = fs_block_confirm(key);
	if (!id)
		return XDP_PASS;
	st->dropped += 1;
	st->dropped_bytes += bytes;
	hits = bpf_map_lookup_elem(&fs_block_hits, &id);
	if (hits) {
		__sync_fetch_and_add(&hits->packets, 1);
		__sync_fetch_and_add(&hits->bytes, bytes);
	}
	return XDP_DROP;
}

static __always_inline int fs_block_verdict(const struct fs_flow_key *key,
					    __u64 bytes, __u64 ctl)
{
	return fs_block_verdict_with(key, bytes, ctl, 0);
}

#endif /* FLOWSKETCH_BLOCKLIST_BPF_H */
