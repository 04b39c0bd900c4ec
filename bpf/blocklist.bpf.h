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

/* One probe: 1 "maybe" (or a block that does not exist), 0 "no". */
static __always_inline int fs_block_probe(__u32 map, __u64 h, __u32 log2_blocks,
					  __u32 k)
{
	__u32 idx = fs_bloom_block_index(h, log2_blocks);
	struct fs_bloom_block *b;

	b = map ? bpf_map_lookup_elem(&fs_bloom1, &idx) :
		  bpf_map_lookup_elem(&fs_bloom0, &idx);
	if (!b)
		return 1;
	return fs_bloom_block_test(b, h, k);
}

/* Probe the IPv4 groups in `groups`; returns the probes made, *maybe set
 * on the first "maybe". */
static __always_inline __u32 fs_block_probe4(const struct fs_flow_key *key,
					     __u64 ctl, int *maybe)
{
	const struct fs_bloom_key *bk = (const struct fs_bloom_key *)&fs_bloom_key;
	__u32 groups = FS_BLOOM_CTL_GROUPS4(ctl), probes = 0, g;
	__u32 x = *(const fs_alias_u32 *)key->src;

FS_UNROLL
	for (g = 0; g < FS_BLOOM_GROUPS4; g++) {
		if (!(groups & (1U << g)) || *maybe)
			continue;
		probes++;
		*maybe = fs_block_probe(FS_BLOOM_CTL_MAP(ctl),
					fs_bloom_hash4(bk, g, x),
					FS_BLOOM_CTL_LOG2(ctl),
					FS_BLOOM_CTL_K(ctl));
	}
	return probes;
}

static __always_inline __u32 fs_block_probe6(const struct fs_flow_key *key,
					     __u64 ctl, int *maybe)
{
	const struct fs_bloom_key *bk = (const struct fs_bloom_key *)&fs_bloom_key;
	__u32 groups = FS_BLOOM_CTL_GROUPS6(ctl), probes = 0, g;
	const fs_alias_u32 *x = (const fs_alias_u32 *)key->src;

FS_UNROLL
	for (g = 0; g < FS_BLOOM_GROUPS6; g++) {
		if (!(groups & (1U << g)) || *maybe)
			continue;
		probes++;
		*maybe = fs_block_probe(FS_BLOOM_CTL_MAP(ctl),
					fs_bloom_hash6(bk, g, (const __u32 *)x),
					FS_BLOOM_CTL_LOG2(ctl),
					FS_BLOOM_CTL_K(ctl));
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

static __always_inline int fs_block_verdict(const struct fs_flow_key *key,
					    __u64 bytes, __u64 ctl)
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
	st->checked += 1;
	if (key->family == FS_FAMILY_IPV4)
		st->probes += fs_block_probe4(key, ctl, &maybe);
	else
		st->probes += fs_block_probe6(key, ctl, &maybe);
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

#endif /* FLOWSKETCH_BLOCKLIST_BPF_H */
