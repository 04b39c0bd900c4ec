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
 *   2. The source's /16 in the summary (include/flowsketch/bloom.h): its
 *      cover bit set, "maybe"; else one filter probe per group whose bit
 *      is set, with the source masked to the group's longest length, each
 *      one line.  No bit set (the /16 holds no entry), or every probe
 *      "definitely not": pass.
 *   3. A "maybe": the exact confirm, one longest-prefix lookup in the
 *      family's LPM trie (fs_block4 / fs_block6).  No match: a false
 *      positive, pass.  A match: count it against the entry
 *      (fs_block_hits[id], atomically: every CPU may drop for one entry)
 *      and drop.
 *
 * The filter never decides a drop, so a false positive costs one trie
 * lookup and a false "definitely not" cannot happen (every entry's keys
 * are in the filter the control word names, and its summary bits set,
 * before the entry counts as added, see user space).  A filter block that
 * cannot be found (a control word naming a size larger than its map,
 * which the daemon never writes), or a control word of another layout
 * (bloom.h, "Compatibility"), counts as "maybe": the trie still decides.
 *
 * The control word is read once per packet from fs_ctl, which the packet
 * reads anyway: the filter it names, its size and k belong together, and
 * a switch to a rebuilt filter is one store.
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
 * one verdict step (the summary in front of either).  Not in the daemon's
 * object.
 */
struct fs_kbloom_key {
	__u32 group;		/* family << 8 | group */
	__u8 addr[16];		/* the source masked to the group's end */
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

/*
 * Where the verdict stops early, for fs-livebench --verdict-stop (the
 * breakdown of what near traffic costs; the benchmark's object only, 0
 * everywhere else, and a constant the verifier folds away):
 *   1 after the per-CPU work copy, 2 after the summary word, 3 after the
 *   verdict cache (a miss passes without probing), 4 after the probes'
 *   hashes (no filter line read), 5 the whole verdict but no counters for
 *   a pass.
 */
#ifdef FS_BENCH_KERNEL_BLOOM
const volatile __u32 fs_bench_block_stop = 0;
#define FS_BLOCK_STOP(n) (fs_bench_block_stop == (n))
#else
#define FS_BLOCK_STOP(n) 0
#endif

/*
 * A prototype measured before it changes a pinned layout (fs-livebench
 * --fine4; the benchmark's object only): the IPv4 summary as 16 bits a
 * /16, bits 0..4 as fs_block_summary's byte and bits 8..15 the /19 bits
 * of bloom.h's finer IPv4 level (fs_bloom_fine4_bits()).  A source whose
 * /19 no entry longer than /16 meets is a "no" without a probe: a source
 * that shares only a /16 with its entries reads one word.
 */
#ifdef FS_BENCH_KERNEL_BLOOM
struct fs_bench_sum4 {
	__u16 v4[65536];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_bench_sum4);
} fs_bench_sum4 SEC(".maps");

const volatile __u32 fs_bench_fine4 = 0;
#define FS_BLOCK_FINE4 fs_bench_fine4
#else
#define FS_BLOCK_FINE4 0
#endif

/* How fs_block_verdict_with() probes: our filter, or in the benchmark
 * the kernel's, or none (every probe "no": the summary and the counters
 * alone, what the two share). */
#define FS_PROBE_OURS 0
#define FS_PROBE_KERNEL 1
#define FS_PROBE_NONE 2

/*
 * The verdict's working copy of what it judges, per CPU: the source as
 * the keys of both tries (the confirm looks up from here), its family,
 * the frame's bytes and the control word.  In a map value, not on the
 * stack, for two reasons.  The datapath's stack has a few bytes to spare.
 * And the verifier, which knows the stack's contents path by path but not
 * a map value's, then walks the verdict once for all the ways a packet
 * reaches it (fs_block_verdict_with() hides everything else from it),
 * not once for each: with the IPv6 group loop that was more than its
 * million instructions.
 */
struct fs_block_work {
	struct fs_block_key6 k6;	/* prefixlen 128, the IPv6 source */
	struct fs_block_key4 k4;	/* prefixlen 32, the IPv4 source */
	__u32 family;
	__u64 ctl;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_block_work);
} fs_block_work SEC(".maps");

/* The verdict cache (bloom.h), per CPU; not pinned: a program's own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_block_cache);
} fs_block_cache SEC(".maps");

/* One probe of the filters (fs_bfilter's value): 1 "maybe", 0 "no".  A
 * block index past the map (a control word the daemon never writes)
 * wraps round: a wrong block can only say "maybe" or "no" for a source
 * the trie still judges. */
static __always_inline int fs_block_probe(void *filters, __u32 base, __u64 h,
					  __u32 log2_blocks, __u32 k)
{
	__u32 idx = (base + fs_bloom_block_index(h, log2_blocks)) & fs_bfilter_mask;

	return fs_bloom_block_test((struct fs_bloom_block *)filters + idx, h, k);
}

/* One group's probe of source src (4 or 16 bytes): 1 "maybe", 0 "no";
 * the caller counts it.  mode as fs_block_verdict_with()'s. */
static __always_inline int fs_block_probe_group(const __u8 *src, void *filters,
						__u64 ctl, int mode, __u32 family,
						__u32 b)
{
	const struct fs_bloom_key *bk = (const struct fs_bloom_key *)&fs_bloom_key;
	const fs_alias_u32 *x = (const fs_alias_u32 *)src;
	__u64 h;

#ifdef FS_BENCH_KERNEL_BLOOM
	if (mode == FS_PROBE_KERNEL)
		return fs_kbloom_probe(family, b, fs_bloom_key_len(b), src);
	if (mode == FS_PROBE_NONE)
		return 0;
#endif
	/* Opaque here, each probe: the compiler would otherwise load the
	 * keys and decode the word once before the group loop and keep
	 * them in spill slots; reloaded from their hot line instead, and
	 * the verifier walks a third fewer instructions. */
	asm volatile("" : "+r"(bk), "+r"(ctl));
	h = family == FS_FAMILY_IPV4 ? fs_bloom_hash4(bk, b, x[0]) :
				       fs_bloom_hash6(bk, b, (const __u32 *)x);
	if (FS_BLOCK_STOP(4)) {
		asm volatile("" : : "r"(h));
		return 0;
	}
	return fs_block_probe(filters, FS_BLOOM_CTL_BASE(ctl), h,
			      FS_BLOOM_CTL_LOG2(ctl), FS_BLOOM_CTL_K(ctl));
}

/* What fs_block_probe_family() returns: the probes made, and whether
 * the cache answered or the answer is "maybe". */
#define FS_BLOCK_R_MAYBE 1U
#define FS_BLOCK_R_CACHED 2U
#define FS_BLOCK_R_PROBES(r) ((r) >> 2)

/*
 * The verdict cache's slot for src (bloom.h, "The verdict cache"): 1 if
 * it holds src under gen (the filter passed it since the last add), else
 * 0 and *slot where a pass is to be written (NULL: no cache).
 */
static __always_inline int fs_block_cached(const __u8 *src, __u32 family, __u32 gen,
					   struct fs_block_cache *c, void **slot)
{
	const struct fs_bloom_key *bk = (const struct fs_bloom_key *)&fs_bloom_key;
	const fs_alias_u64 *a = (const fs_alias_u64 *)src;

	if (family == FS_FAMILY_IPV4) {
		__u32 x = *(const fs_alias_u32 *)src;
		__u64 *v = &c->v4[fs_block_cache4_slot(bk, x) & ((1U << FS_BLOCK_CACHE4_LOG2) - 1)];

		*slot = v;
		return *v == ((__u64)gen << 32 | x);
	} else {
		struct fs_block_cache6_slot *v;

		v = &c->v6[fs_block_cache6_slot(bk, a[0], a[1]) &
			   ((1U << FS_BLOCK_CACHE6_LOG2) - 1)];
		*slot = v;
		return v->gen == gen && v->a[0] == a[0] && v->a[1] == a[1];
	}
}

/* Remember src as passed under gen in its slot. */
static __always_inline void fs_block_cache_put(const __u8 *src, __u32 family,
					       __u32 gen, void *slot)
{
	const fs_alias_u64 *a = (const fs_alias_u64 *)src;

	if (family == FS_FAMILY_IPV4) {
		*(__u64 *)slot = (__u64)gen << 32 | *(const fs_alias_u32 *)src;
	} else {
		struct fs_block_cache6_slot *v = slot;

		v->a[0] = a[0];
		v->a[1] = a[1];
		v->gen = gen;
	}
}

/*
 * The source's summary word; where it names groups, the verdict cache,
 * then a filter probe per group, in order, until one says "maybe"
 * (FS_BLOCK_R_*).  One lookup of each map, none in the loop (fs_bfilter
 * holds both filters in one value).  family is a constant at each call:
 * IPv4's four groups are unrolled, their masks constants; IPv6's 28 take
 * the lowest set bit each round.
 */
static __always_inline __u32 fs_block_probe_family(const __u8 *src, __u64 ctl,
						   int mode, __u32 family)
{
	__u32 idx = fs_block_summary_index(src), i, zero = 0, gen = FS_BLOOM_CTL_GEN(ctl);
	struct fs_block_summary *sum;
	struct fs_block_cache *cache = 0;
	void *filters, *slot = 0;
	__u64 mask;

#ifdef FS_BENCH_KERNEL_BLOOM
	if (FS_BLOCK_FINE4 && family == FS_FAMILY_IPV4) {
		struct fs_bench_sum4 *s4 = bpf_map_lookup_elem(&fs_bench_sum4, &zero);
		__u32 w;

		if (!s4)
			return 1;
		w = s4->v4[idx & 0xffff];
		mask = fs_bloom_fine4_mask(w, src);
	} else
#endif
	{
		sum = bpf_map_lookup_elem(&fs_bsummary, &zero);
		if (!sum)	/* cannot happen: one element */
			return 1;
		mask = family == FS_FAMILY_IPV4 ? sum->v4[idx & 0xffff] : sum->v6[idx & 0xffff];
	}
	if (FS_BLOCK_STOP(2)) {
		asm volatile("" : : "r"(mask));
		return 0;
	}
	if (mask & 1)		/* an entry of length <= 16 covers the /16 */
		return FS_BLOCK_R_MAYBE;
	if (!mask)
		return 0;
	if (gen && mode == FS_PROBE_OURS) {
		cache = bpf_map_lookup_elem(&fs_block_cache, &zero);
		if (cache && fs_block_cached(src, family, gen, cache, &slot))
			return FS_BLOCK_R_CACHED;
	}
	if (FS_BLOCK_STOP(3))
		return 0;
	filters = bpf_map_lookup_elem(&fs_bfilter, &zero);
	if (!filters)	/* cannot happen: one element */
		return FS_BLOCK_R_MAYBE;
	if (family == FS_FAMILY_IPV4) {
		__u32 n = 0;

FS_UNROLL
		for (i = 1; i <= FS_BLOOM_GROUPS4; i++) {
			if (!((mask >> i) & 1))
				continue;
			n++;
			if (fs_block_probe_group(src, filters, ctl, mode, family, i))
				return n << 2 | FS_BLOCK_R_MAYBE;
		}
		if (slot)
			fs_block_cache_put(src, family, gen, slot);
		return n << 2;
	}
FS_NO_UNROLL
	for (i = 0; i < FS_BLOOM_GROUPS6 && mask; i++) {
		__u32 b = fs_ctz64(mask);

		mask &= mask - 1;
		if (fs_block_probe_group(src, filters, ctl, mode, family, b))
			return (i + 1) << 2 | FS_BLOCK_R_MAYBE;
	}
	if (slot)
		fs_block_cache_put(src, family, gen, slot);
	return i << 2;
}

/* The entry id covering the source in w, 0 for none (ids start at 1). */
static __always_inline __u32 fs_block_confirm(struct fs_block_work *w, int v4)
{
	__u32 *id;

	if (v4)
		id = bpf_map_lookup_elem(&fs_block4, &w->k4);
	else
		id = bpf_map_lookup_elem(&fs_block6, &w->k6);
	return id ? *id : 0;
}

/* The verdict on what w holds (fs_block_verdict_with()). */
static __always_inline int fs_block_judge(struct fs_block_work *w, int mode)
{
	struct fs_block_stats *st;
	struct fs_block_hits *hits;
	__u32 zero = 0, id, r = 0, family = w->family;
	__u64 ctl = w->ctl;

	/* A word of another layout (bloom.h, "Compatibility"): the trie
	 * decides. */
	if (!FS_BLOOM_CTL_OURS(ctl))
		r = FS_BLOCK_R_MAYBE;
	else if (family == FS_FAMILY_IPV4)
		r = fs_block_probe_family(w->k4.addr, ctl, mode, FS_FAMILY_IPV4);
	else if (family == FS_FAMILY_IPV6)
		r = fs_block_probe_family(w->k6.addr, ctl, mode, FS_FAMILY_IPV6);
	if (FS_BLOCK_STOP(5) && !(r & FS_BLOCK_R_MAYBE) && family != FS_FAMILY_UNJUDGED)
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
	if (w->family == FS_FAMILY_UNJUDGED) {
		st->unjudged += 1;
		st->unjudged_bytes += w->bytes;
		return XDP_DROP;
	}
	st->checked += 1;
	st->probes += FS_BLOCK_R_PROBES(r);
	st->cached += (r & FS_BLOCK_R_CACHED) >> 1;
	if (!(r & FS_BLOCK_R_MAYBE))
		return XDP_PASS;
	st->maybe += 1;
	if (w->family == FS_FAMILY_IPV4)
		id = fs_block_confirm(w, 1);
	else
		id = fs_block_confirm(w, 0);
	if (!id)
		return XDP_PASS;
	st->dropped += 1;
	st->dropped_bytes += w->bytes;
	hits = bpf_map_lookup_elem(&fs_block_hits, &id);
	if (hits) {
		__sync_fetch_and_add(&hits->packets, 1);
		__sync_fetch_and_add(&hits->bytes, w->bytes);
	}
	return XDP_DROP;
}

/* mode: FS_PROBE_* (the benchmark's references; the daemon's is 0). */
static __always_inline int fs_block_verdict_with(const struct fs_flow_key *key,
						 __u64 bytes, __u64 ctl, int mode)
{
	struct fs_block_work *w;
	__u32 zero = 0;

	if (!FS_BLOOM_CTL_K(ctl))
		return XDP_PASS;
	w = bpf_map_lookup_elem(&fs_block_work, &zero);
	if (!w)		/* one element always exists */
		return XDP_PASS;
	w->k4.prefixlen = 32;
	w->k6.prefixlen = 128;
	__builtin_memcpy(w->k4.addr, key->src, sizeof(w->k4.addr));
	__builtin_memcpy(w->k6.addr, key->src, sizeof(w->k6.addr));
	w->family = key->family;
	w->ctl = ctl;
	w->bytes = bytes;
	/* From here on the verdict reads w alone, and the compiler must
	 * load it back: the verifier, to which a map value is only "some
	 * bytes", sees the same state whichever way the packet came. */
	asm volatile("" : "+r"(w) : : "memory");
	if (FS_BLOCK_STOP(1))
		return XDP_PASS;
	return fs_block_judge(w, mode);
}

static __always_inline int fs_block_verdict(const struct fs_flow_key *key,
					    __u64 bytes, __u64 ctl)
{
	return fs_block_verdict_with(key, bytes, ctl, 0);
}

#endif /* FLOWSKETCH_BLOCKLIST_BPF_H */
