/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bloom.h - the blocklist's filter: a summary of /16s, a blocked Bloom
 * filter of expanded source prefixes and a per-CPU verdict cache; their
 * keys, layout, probe, update and sizing.
 *
 * Question: is this packet's source blocked?  The list holds CIDR prefixes
 * (IPv4 and IPv6, up to a million).  The filter answers "definitely not"
 * or "maybe"; only a "maybe" goes on to the exact confirm (the LPM tries
 * of maps.h), and only a confirmed match is dropped, so a false positive
 * costs one exact lookup and never a packet.
 *
 * Groups of prefix lengths, each keyed on its LONGEST length (controlled
 * prefix expansion, Srinivasan and Varghese 1999).  A filter answers
 * membership of exact keys, and a source may be covered by a prefix of any
 * length, so a packet would need one probe per length present (33 for
 * IPv4, 129 for IPv6).  Instead:
 *
 *   - lengths 0..16 (group 0, "cover"): the summary (below) marks every
 *     /16 such an entry covers; an entry of length L marks 2^(16 - L) of
 *     them (an IPv4 /8 256, an IPv6 /0 all 65536), in a fixed array;
 *   - lengths 17..128 in groups of FS_BLOOM_WIDTH = 4, group b >= 1
 *     holding lengths 16 + 4(b - 1) + 1 .. 16 + 4b and keyed on its end
 *     e_b = 16 + 4b: IPv4 groups 1..4 (/20 /24 /28 /32), IPv6 1..28
 *     (/20 .. /128).  An entry of length L in group b goes into the
 *     filter as the 2^(e_b - L) prefixes of length e_b it covers, each as
 *     the key (b, prefix); a packet probes group b with its source masked
 *     to e_b.
 *
 * Why the longest length: a source matches a key (b, p) exactly when p is
 * its own first e_b bits, and p is an expansion of entry E only if E's L
 * bits begin it, so a key matches only sources E covers.  A source that
 * no entry covers holds no key of any group: each of its probes is a
 * "maybe" only by a false positive of the filter, at the design rate,
 * wherever it sits (next to an entry or far from all).  Keying on the
 * shortest length instead (as flowsketch did before) made every source of
 * a /16 holding a /20 entry a "maybe" and an exact lookup.
 *
 * What it costs, in memory (the arithmetic behind the maps' sizes):
 *   - keys: an entry puts 2^(e_b - L) <= 2^(4 - 1) = 8 keys into the
 *     filter (a /17 eight /20s, a /20 one); one on a group's end (IPv4
 *     /24 /32, IPv6 /32 /48 /56 /64 /128, where lists put their lengths)
 *     puts one.  Uniform lengths average (1 + 2 + 4 + 8) / 4 = 3.75 keys
 *     an entry.  fs_bloom_group_of() counts them; filters are sized in
 *     keys;
 *   - the filter: at the 1 % design rate about 10 bits a key ("False
 *     positives" below), so at most 8 x 10 = 80 bits an entry.  The
 *     daemon's map holds two filters (the live one and the one being
 *     rebuilt), each sized for the worst case, 8 keys for each of
 *     --blocklist-max entries: at 100,000 entries 800,000 keys in 2^14
 *     blocks, 1 MiB a filter, 2 MiB for both (grouping on the shortest
 *     length took 2 x 256 KiB); at 1,000,000 entries 2^18 blocks, 16 MiB
 *     a filter, 32 MiB for both.  A rebuild uses the smallest power of two
 *     that holds twice its list's keys, so a packet's probes spread over
 *     that much, not over the whole map;
 *   - the summary: a byte per IPv4 /16 and 32 bits per IPv6 /16, fixed:
 *     64 KiB + 256 KiB (struct fs_block_summary);
 *   - the verdict cache (below): 28 KiB a CPU, fixed.
 * Group width is the trade: width w costs up to 2^(w-1) keys an entry and
 * (128 - 16) / w IPv6 groups (summary bits, and probes for a /16 holding
 * them all); 4 keeps the expansion at 8 and the IPv6 mask in 32 bits.
 *
 * The summary.  One map element: for each IPv4 /16 a byte, for each IPv6
 * /16 a 32-bit word.  Bit 0: an entry of length <= 16 covers this /16 (a
 * "maybe" without a probe; the trie confirms).  Bit b >= 1: some entry of
 * group b lies inside this /16, so group b's key may be there.  A packet
 * reads its /16's word (its first two address bytes), then probes the
 * filter only for the groups whose bits are set, and none where its /16
 * holds no entry: traffic far from the list reads one summary entry and
 * no filter line.  A bit is set while an entry needs it and cleared only
 * when none does (user space, exact), so a clear bit is a certain "no"
 * for its group; a set bit is only "look".  Near traffic (a /16 that
 * holds entries) probes one line per group present there: at most 4 for
 * IPv4, and for IPv6 as many as its /16 holds lengths of (up to 28).
 *
 * Hash.  Keyed, like every hash of flowsketch (hash.h), so that nobody
 * who does not know the secret can aim sources at one block.  A key is
 * the vector of 32-bit chunks (x_0, .., group b): the masked address read
 * little-endian (one chunk for IPv4, four for IPv6) and the group, so that
 * a prefix and its extension by zero bits, keys of two groups, differ.
 * Each half of the 64-bit hash is Thorup's pair-multiply-shift over it,
 *     IPv4  half = (a_0 + (a_1 + x_0)(a_2 + b)) >> 32                (mod 2^64)
 *     IPv6  half = (c_0 + (c_1 + x_1)(c_2 + x_0) + (c_3 + x_3)(c_4 + x_2)
 *                  + c_5 (c_6 + b)) >> 32
 * (the last pair is (b, 0)), strongly universal from 32-bit chunks to
 * 32 bits with 64-bit arithmetic (Thorup, "High speed hashing for
 * integers and strings", 2015).  The two halves, with keys of their own,
 * make a 64-bit h that two distinct keys share with probability 2^-64,
 * and whose fields are independent between two keys: what the
 * false-positive analysis below needs of it.  One set of keys serves
 * every group: 6 words for IPv4, 14 for IPv6 and 2 for the verdict
 * cache's slots, 176 bytes, three lines read by every probe (keys of
 * their own per group, as the six groups keyed on their shortest length
 * had, would take 2,368 bytes for 32 groups, a probe's two lines of them
 * each a likely miss).  The keys are SipHash-2-4 of the secret in counter
 * mode, in a domain of their own (fs_bloom_key_derive()).
 *
 * Layout.  The filter is 2^log2_blocks blocks of 64 bytes (8 words, 512
 * bits: one cache line, line-aligned in its map).  A key uses block
 * h >> (64 - log2_blocks) and, in it, the k bits
 *     bit_i = top 9 bits of x_i,  x_0 = h,  x_{i+1} = x_i * C  (mod 2^64)
 * for i = 1 .. k, C = the odd golden-ratio constant (the rehash RocksDB's
 * cache-local Bloom filter uses), so a probe and an update each touch one
 * line whatever k is.  Not double hashing (h1 + i h2 mod 512): with 9-bit
 * h1 and h2, keys that share h2 and sit a few multiples of it apart share
 * most of their bits, and the rate measured 55 % above the formula below
 * (test_bloom); the multiplicative rehash measures within a few percent.
 *
 * False positives (Putze, Sanders and Singler, "Cache-, hash- and
 * space-efficient Bloom filters", 2007).  With n keys in m = 512 B bits,
 * a block receives Poisson(512 n / m) keys, and a block holding j keys is
 * a classic 512-bit Bloom filter of j keys:
 *     fpr(n, m, k) = sum_j Poisson(j; 512 n / m) * (1 - (1 - 1/512)^(j k))^k
 * which is above the classic (1 - e^(-k n / m))^k because blocks fill
 * unevenly (the price of one line per probe).  Sizing picks, for a
 * capacity and a target rate, the fewest blocks (a power of two) and the
 * k that bring fpr below the target (fs_bloom_size(), user space only: it
 * needs floating point).  For 1 % it takes about 9.9 bits a key (k = 6),
 * where a classic filter takes 9.6; for 0.01 %, 22.0 against 19.2
 * (`flowsketch size` prints both).  A source no entry covers makes one
 * exact lookup per probe with probability fpr, so at most (groups its
 * /16 holds) x fpr of them per packet, and none from the summary.
 *
 * The verdict cache (after the control word below) answers a source the
 * filter passed since the last add without probing again; it never drops.
 */
#ifndef FLOWSKETCH_BLOOM_H
#define FLOWSKETCH_BLOOM_H

#include "compat.h"
#include "flow_key.h"
#include "hash.h"

#define FS_BLOOM_SUMMARY_LEN 16	/* the summary's prefix length */
#define FS_BLOOM_WIDTH 4		/* lengths a filter group holds */
#define FS_BLOOM_MAX_EXPAND 8		/* keys an entry, at most: 2^(WIDTH - 1) */
#define FS_BLOOM_GROUPS4 4		/* filter groups: (32 - 16) / 4 */
#define FS_BLOOM_GROUPS6 28		/* (128 - 16) / 4 */
#define FS_BLOOM_BLOCK_BITS 512
#define FS_BLOOM_MAX_K 16
#define FS_BLOOM_MAX_LOG2_BLOCKS 22	/* 256 MiB: far beyond a million entries'
					   worst case; the base field holds 2 * 2^22 */

/* One filter block: one cache line. */
struct fs_bloom_block {
	__u64 w[8];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct fs_bloom_block) == 64, "a block is a line");

/* The longest length of filter group b (1 .. FS_BLOOM_GROUPS6). */
FS_INLINE __u32 fs_bloom_group_end(__u32 b)
{
	return FS_BLOOM_SUMMARY_LEN + FS_BLOOM_WIDTH * b;
}

/* The length group b's keys, and a packet's probe of it, are masked to:
 * its longest (the expansion above). */
FS_INLINE __u32 fs_bloom_key_len(__u32 b)
{
#ifdef FS_MUTANT_BLOOM_SHORTEST	/* `make mutants` only: the old keying */
	return fs_bloom_group_end(b) - FS_BLOOM_WIDTH + 1;
#endif
	return fs_bloom_group_end(b);
}

/*
 * The summary (see "The summary" above): one map element, read by the
 * datapath, written in place by the daemon (atomic ORs and ANDs, exact).
 */
struct fs_block_summary {
	__u8 v4[65536];		/* per IPv4 /16: bit 0 cover, bits 1..4 groups */
	__u32 v6[65536];	/* per IPv6 /16: bit 0 cover, bits 1..28 groups */
};

/* A source's summary index: its /16, the first two address bytes. */
FS_INLINE __u32 fs_block_summary_index(const __u8 *addr)
{
	return ((__u32)addr[0] << 8) | addr[1];
}

/*
 * A finer IPv4 level, measured as a prototype (fs-livebench --fine4, the
 * benchmark's object) and not yet in the pinned summary.  Per IPv4 /16,
 * eight bits: bit j set when an entry longer than /16 meets the /16's
 * /19 number j (the third address byte's top three bits).  An entry of
 * length 17 meets 4 of them, 18 two, longer ones the one holding it.  A
 * source whose /19 bit is clear is covered by no entry longer than /16
 * (such an entry would meet its /19), so none of its groups needs a probe:
 * a source that shares only a /16 with the list reads one word.  Bits are
 * set and cleared as the summary's are (an entry's bits in place before it
 * counts as added), so a clear bit stays a certain "no".  Memory: 8 bits
 * a /16, 64 KiB; read in one word with the summary's byte (bits 8..15 of
 * a 16-bit word, as the prototype does), the IPv4 summary grows from 64 to
 * 128 KiB (a change of the pinned summary's value size).
 */
#define FS_BLOOM_FINE4_LEN 19

/* The /19 bits (0..7) an IPv4 entry of length len at addr (network
 * order, bits past len zero) sets in its /16's word: 0 for len <= 16. */
FS_INLINE __u32 fs_bloom_fine4_bits(__u32 len, const __u8 *addr)
{
	__u32 first = addr[2] >> (24 - FS_BLOOM_FINE4_LEN), n;

	if (len <= FS_BLOOM_SUMMARY_LEN || len > 32)
		return 0;
	n = len < FS_BLOOM_FINE4_LEN ? 1U << (FS_BLOOM_FINE4_LEN - len) : 1;
#ifdef FS_MUTANT_BLOOM_FINE4_SPAN	/* `make mutants` only: a /17 or /18 marks one /19 */
	n = 1;
#endif
	return (((1U << n) - 1) << first) & 0xff;
}

/* The summary bits a source still needs from its /16's word (bits 0..4
 * the summary byte, 8..15 the /19 bits): the cover bit, and the groups
 * only when an entry longer than /16 meets the source's /19. */
FS_INLINE __u32 fs_bloom_fine4_mask(__u32 word, const __u8 *src)
{
	if (!((word >> (8 + (src[2] >> (24 - FS_BLOOM_FINE4_LEN)))) & 1))
		return word & 1;
	return word & 0x1f;
}

/*
 * The filter's hash keys (see "Hash" above), in the datapath's .rodata
 * beside fs_hash_key (line-aligned there): 6 + 14 words.
 */
struct fs_bloom_key {
	__u64 v4[2][3];		/* [half]{a_0, a_1, a_2} */
	__u64 v6[2][7];		/* [half]{c_0 .. c_6} */
	__u64 cache[2];		/* the verdict cache's slot (below) */
};

/*
 * fs_ctl.bloom: which filter the datapath probes, packed in one word so
 * that the daemon switches filters with one 64-bit store (a packet reads
 * it once: it sees the old filter or the new one, never a mix).
 *
 *   bits  0..7   k, bits per key (0: no blocklist, nothing probed)
 *   bits  8..15  log2 of the number of blocks
 *   bits 16..31  FS_BLOOM_CTL_COMPAT's bits 18 and 25, else 0
 *   bits 32..39  the verdict cache's generation (below; 0: no cache)
 *   bits 40..62  the filter's first block in fs_bfilter, which holds two
 *                filters (the live one and the one being rebuilt) in one
 *                map: one map, so that the verifier inlines its lookup
 *                (a lookup that may see either of two maps is a helper
 *                call, measured at about 15 ns a probe)
 *   bit  63      set in every word of this layout (FS_BLOOM_CTL_COMPAT)
 *
 * Compatibility.  A daemon adopting a datapath pinned by the release that
 * keyed groups on their shortest length (the word had groups in bits
 * 16..31 and the base in 40..63) writes this word while that release's
 * program still runs, until the attach moves the link to the new one.
 * Read the old way, bit 63 puts the base past any filter that release
 * could size (2 x 2^22 blocks), so every filter lookup fails, which it
 * takes for "maybe"; bits 18 and 25 name one filter group per family
 * (its /24 and IPv6 /32), so every packet looks there: that program sends
 * every packet to the trie, which the adopting daemon keeps exact, and
 * drops exactly what the list covers until the link moves.  This
 * datapath in turn takes a word without bit 63 (non-zero) for "maybe".
 */
#define FS_BLOOM_CTL_COMPAT ((1ULL << 63) | (1ULL << 18) | (1ULL << 25))
#define FS_BLOOM_CTL_K(c) ((__u32)(c) & 0xff)
#define FS_BLOOM_CTL_LOG2(c) ((__u32)((c) >> 8) & 0xff)
#define FS_BLOOM_CTL_BASE(c) ((__u32)((c) >> 40) & 0x7fffff)
#define FS_BLOOM_CTL_GEN(c) ((__u32)((c) >> 32) & 0xff)
#define FS_BLOOM_CTL_OURS(c) (((c) & FS_BLOOM_CTL_COMPAT) == FS_BLOOM_CTL_COMPAT)

FS_INLINE __u64 fs_bloom_ctl(__u32 k, __u32 log2_blocks, __u32 base, __u32 gen)
{
	return (__u64)(k & 0xff) | (__u64)(log2_blocks & 0xff) << 8 |
	       (__u64)(gen & 0xff) << 32 | (__u64)(base & 0x7fffff) << 40 |
	       FS_BLOOM_CTL_COMPAT;
}

/*
 * The verdict cache: per CPU, the last sources the filter let pass, so
 * that a source seen again reads one line instead of its summary word
 * and a filter line per group.  Consulted only for a source whose /16
 * holds entries (one that holds none costs its summary word alone); it
 * holds "pass" only, never a drop, so it can only be wrong by passing a
 * source an entry now covers, which the generation rules out:
 *
 *   - a slot holds a full address and the generation it was written
 *     under; it answers only when both match the packet's source and the
 *     control word the packet read;
 *   - the daemon moves to the next generation (1..255, 0 is "no cache")
 *     with the same store that publishes an add, after the entry is in
 *     the tries, the filter and the summary: a packet that reads the new
 *     word finds none of the old slots, and one that read the old word
 *     writes its slot under the old generation;
 *   - before a generation comes round again (every 255 adds), the daemon
 *     waits for an RCU grace period (no packet still holds a word older
 *     than the current one) and zeroes every CPU's cache, so that no slot
 *     of the generation it is about to publish is left; a packet writing
 *     meanwhile writes the current one.  A slot zeroed half-way holds a
 *     zero or an old generation: never the next.
 * A delete needs nothing: what passed still passes.  Slots are direct
 * mapped by a keyed hash of the source (fs_bloom_key.cache): nobody
 * without the secret can choose sources that evict each other.  IPv4 in
 * one 64-bit word (address, generation), written with one store; IPv6 in
 * three.  2048 + 512 slots, 28 KiB a CPU: a per-CPU value holds 32 KiB.
 */
#define FS_BLOCK_CACHE4_LOG2 11
#define FS_BLOCK_CACHE6_LOG2 9

struct fs_block_cache6_slot {
	__u64 a[2];		/* the address, as two 64-bit words */
	__u64 gen;
};

struct fs_block_cache {
	__u64 v4[1U << FS_BLOCK_CACHE4_LOG2];	/* gen << 32 | address */
	struct fs_block_cache6_slot v6[1U << FS_BLOCK_CACHE6_LOG2];
};

/* The slot of an IPv4 source (x, read little-endian) and of an IPv6 one
 * (two 64-bit words). */
FS_INLINE __u32 fs_block_cache4_slot(const struct fs_bloom_key *k, __u32 x)
{
	return (__u32)(((k->cache[0] + x) * (k->cache[1] | 1)) >> (64 - FS_BLOCK_CACHE4_LOG2));
}

FS_INLINE __u32 fs_block_cache6_slot(const struct fs_bloom_key *k, __u64 a0, __u64 a1)
{
	return (__u32)(((k->cache[0] + a0) * (k->cache[1] + a1)) >> (64 - FS_BLOCK_CACHE6_LOG2));
}

/*
 * The first `len` bits of an address, as the little-endian 32-bit chunk
 * the hash reads: a network-order prefix mask of len bits (0..32), loaded
 * the way the address bytes are.
 */
FS_INLINE __u32 fs_bloom_mask32(__u32 len)
{
	if (!len)
		return 0;
	if (len >= 32)
		return 0xffffffffU;
	return __builtin_bswap32(0xffffffffU << (32 - len));
}

/*
 * The four chunk masks of IPv6 group b (1..28): its end length cut into
 * 32-bit pieces.  A table, so that a probe of a group known only at run
 * time loads them instead of branching on the length; padded to 32 rows
 * (row 0 and 29..31 unused) so that an index masked with 31 is in range.
 */
#define FS_BLOOM_M32(l) __builtin_bswap32((__u32)(0xffffffff00000000ULL >>	\
			 ((l) < 0 ? 0 : (l) > 32 ? 32 : (l))))
#define FS_BLOOM_M6(e) { FS_BLOOM_M32(e), FS_BLOOM_M32((e) - 32),		\
			 FS_BLOOM_M32((e) - 64), FS_BLOOM_M32((e) - 96) }
static const __u32 fs_bloom_mask6[32][4] __attribute__((aligned(64))) = {
	{ 0 }, FS_BLOOM_M6(20), FS_BLOOM_M6(24), FS_BLOOM_M6(28),
	FS_BLOOM_M6(32), FS_BLOOM_M6(36), FS_BLOOM_M6(40), FS_BLOOM_M6(44),
	FS_BLOOM_M6(48), FS_BLOOM_M6(52), FS_BLOOM_M6(56), FS_BLOOM_M6(60),
	FS_BLOOM_M6(64), FS_BLOOM_M6(68), FS_BLOOM_M6(72), FS_BLOOM_M6(76),
	FS_BLOOM_M6(80), FS_BLOOM_M6(84), FS_BLOOM_M6(88), FS_BLOOM_M6(92),
	FS_BLOOM_M6(96), FS_BLOOM_M6(100), FS_BLOOM_M6(104), FS_BLOOM_M6(108),
	FS_BLOOM_M6(112), FS_BLOOM_M6(116), FS_BLOOM_M6(120), FS_BLOOM_M6(124),
	FS_BLOOM_M6(128),
};

/* Chunk i (0..3) of IPv6 group b's key mask. */
FS_INLINE __u32 fs_bloom_mask6_chunk(__u32 b, __u32 i)
{
#ifdef FS_MUTANT_BLOOM_SHORTEST
	__s32 l = (__s32)fs_bloom_key_len(b) - 32 * (__s32)i;

	return fs_bloom_mask32(l < 0 ? 0 : (__u32)l);
#endif
	return fs_bloom_mask6[b & 31][i & 3];
}

/* The 64-bit hash of an IPv4 address masked to group b's end (b 1..4);
 * x is the address as it sits in the packet, read little-endian. */
FS_INLINE __u64 fs_bloom_hash4(const struct fs_bloom_key *k, __u32 b, __u32 x)
{
	const __u64 *a = k->v4[0], *d = k->v4[1];
	__u64 m = x & fs_bloom_mask32(fs_bloom_key_len(b));

	return ((a[0] + (a[1] + m) * (a[2] + b)) & 0xffffffff00000000ULL) |
	       ((d[0] + (d[1] + m) * (d[2] + b)) >> 32);
}

/* The same for IPv6 (b 1..28): x is the address as four little-endian
 * chunks. */
FS_INLINE __u64 fs_bloom_hash6(const struct fs_bloom_key *k, __u32 b,
			       const __u32 *x)
{
	const __u64 *c = k->v6[0], *d = k->v6[1];
	__u64 m0 = x[0] & fs_bloom_mask6_chunk(b, 0), m1 = x[1] & fs_bloom_mask6_chunk(b, 1);
	__u64 m2 = x[2] & fs_bloom_mask6_chunk(b, 2), m3 = x[3] & fs_bloom_mask6_chunk(b, 3);

	return ((c[0] + (c[1] + m1) * (c[2] + m0) + (c[3] + m3) * (c[4] + m2) +
		 c[5] * (c[6] + b)) & 0xffffffff00000000ULL) |
	       ((d[0] + (d[1] + m1) * (d[2] + m0) + (d[3] + m3) * (d[4] + m2) +
		 d[5] * (d[6] + b)) >> 32);
}

/* The block of hash h in a filter of 2^log2_blocks blocks. */
FS_INLINE __u32 fs_bloom_block_index(__u64 h, __u32 log2_blocks)
{
	return log2_blocks ? (__u32)(h >> (64 - log2_blocks)) : 0;
}

/* The next bit of a key in its block (see "Layout" above). */
FS_INLINE __u32 fs_bloom_next_bit(__u64 *x)
{
	*x *= 0x9e3779b97f4a7c15ULL;
	return (__u32)(*x >> 55);
}

/*
 * Whether all k bits of h are set in block b: 1 "maybe", 0 "definitely
 * not".  It stops at the first clear bit: a key that is not in the filter
 * meets one after two bits on average at the design fill (about half the
 * bits set), so a loop beats a branch-free pass over all k.
 *
 * The end (i >= k) is tested on i - k, kept opaque to the compiler: a
 * compare of i with k would teach the verifier a range of k at each exit
 * (k > 0, k > 1, ...), and with k live across the groups a packet probes,
 * no two exits would be the same state: 16 exits a probe, compounded over
 * the IPv6 group loop, took it past its million instructions.
 */
FS_INLINE int fs_bloom_block_test(const struct fs_bloom_block *b, __u64 h,
				  __u32 k)
{
	__u64 x = h;
	__u32 i;

FS_NO_UNROLL
	for (i = 0; i < FS_BLOOM_MAX_K; i++) {
		__u32 bit = fs_bloom_next_bit(&x);
		__u64 d = (__u64)i - k;		/* top bit set while i < k */

#if defined(__bpf__)
		asm volatile("" : "+r"(d));
#endif
		if (!(d >> 63))
			return 1;
		if (!((b->w[(bit >> 6) & 7] >> (bit & 63)) & 1))
			return 0;
	}
	return 1;
}

/* Set the k bits of h in block b (user space builds filters; the
 * datapath only tests them). */
FS_INLINE void fs_bloom_block_set(struct fs_bloom_block *b, __u64 h, __u32 k)
{
	__u64 x = h;
	__u32 i;

	for (i = 0; i < k && i < FS_BLOOM_MAX_K; i++) {
		__u32 bit = fs_bloom_next_bit(&x);

		b->w[bit >> 6] |= 1ULL << (bit & 63);
	}
}

/* Expand the 128-bit secret into the filter's keys (a domain of its own:
 * counters with bit 63 set, which fs_hash_key_derive() never uses). */
FS_INLINE void fs_bloom_key_derive(const struct fs_hash_secret *s,
				   struct fs_bloom_key *key)
{
	__u64 *w = (__u64 *)key, ctr;
	__u32 i;

	for (i = 0; i < sizeof(*key) / 8; i++) {
		ctr = (1ULL << 63) | i;
		w[i] = fs_siphash_words(&ctr, 1, s, 2, 4);
	}
}

/*
 * The group of a prefix of length len (0..32 or 0..128): 0 for the
 * summary's cover group, with *keys the /16s it marks (2^(16 - len)), or
 * b >= 1 for filter group b, with *keys its expanded keys (2^(e_b - len),
 * at most FS_BLOOM_MAX_EXPAND).  -1 for a length or family out of range.
 */
FS_INLINE int fs_bloom_group_of(__u32 family, __u32 len, __u64 *keys)
{
	__u32 max = family == FS_FAMILY_IPV4 ? 32 : 128, b;

	if ((family != FS_FAMILY_IPV4 && family != FS_FAMILY_IPV6) || len > max)
		return -1;
	if (len <= FS_BLOOM_SUMMARY_LEN) {
		*keys = 1ULL << (FS_BLOOM_SUMMARY_LEN - len);
		return 0;
	}
	b = (len - FS_BLOOM_SUMMARY_LEN + FS_BLOOM_WIDTH - 1) / FS_BLOOM_WIDTH;
	*keys = 1ULL << (fs_bloom_key_len(b) - len);
#ifdef FS_MUTANT_BLOOM_SHORTEST
	*keys = 1;	/* its address, masked to the group's shortest */
#endif
	return (int)b;
}

/*
 * The filter's answer for a source (16 bytes, IPv4 in 0..3) over plain
 * memory, as the datapath gives it (bpf/blocklist.bpf.h, the same steps
 * with map lookups): its /16's summary word; the cover bit, "maybe";
 * else a probe of each group the word names, lowest first, until one
 * says "maybe".  1 "maybe", 0 "no"; *probes counts the probes.  For user
 * space (the tests' model of the filter); no verdict cache here.
 */
FS_INLINE int fs_bloom_source_maybe(const struct fs_block_summary *s,
				    const struct fs_bloom_block *filter,
				    __u32 log2_blocks, __u32 k,
				    const struct fs_bloom_key *key, __u32 family,
				    const __u8 *src, __u32 *probes)
{
	__u32 idx = fs_block_summary_index(src), x[4], b;
	__u64 mask = family == FS_FAMILY_IPV4 ? s->v4[idx] : s->v6[idx];

	*probes = 0;
	if (mask & 1)
		return 1;
	__builtin_memcpy(x, src, sizeof(x));
	for (b = 1; b <= FS_BLOOM_GROUPS6; b++) {
		__u64 h;

		if (!((mask >> b) & 1))
			continue;
		h = family == FS_FAMILY_IPV4 ? fs_bloom_hash4(key, b, x[0]) :
					       fs_bloom_hash6(key, b, x);
		(*probes)++;
		if (fs_bloom_block_test(&filter[fs_bloom_block_index(h, log2_blocks)], h, k))
			return 1;
	}
	return 0;
}

#if !defined(__bpf__) && !defined(__KERNEL__)
/* ---- Sizing, user space only (floating point) ----------------------- */
#include <math.h>

/* fpr(n, m, k) of "False positives" above, for m = 512 * blocks bits.
 * The Poisson terms are taken in log space (e^-lambda underflows for a
 * full filter of one block), over lambda +- 12 standard deviations,
 * which hold all but 1e-30 of the mass. */
static inline double fs_bloom_fpr(double n, double blocks, unsigned int k)
{
	double lambda = n / blocks, sd = sqrt(lambda), sum = 0;
	double lo = floor(lambda - 12 * sd - 12), hi = ceil(lambda + 12 * sd + 12);
	double j;

	if (n <= 0)
		return 0;
	for (j = lo > 0 ? lo : 0; j <= hi; j++) {
		double logp = -lambda + j * log(lambda) - lgamma(j + 1);
		double fill = 1 - pow(1 - 1.0 / FS_BLOOM_BLOCK_BITS, j * k);

		sum += exp(logp) * pow(fill, k);
	}
	return sum;
}

/*
 * Bits a key the blocked layout needs for a rate of at most target, with
 * the number of blocks free (not a power of two) and the best k: fpr()
 * depends on the keys per block, 512 / bits_per_key, alone.  -1 when no
 * k up to FS_BLOOM_MAX_K gets there below 64 bits a key.
 */
static inline double fs_bloom_bits_per_key(double target, unsigned int *k)
{
	double c;
	unsigned int kk;

	for (c = 1; c <= 64; c += 0.05)
		for (kk = 1; kk <= FS_BLOOM_MAX_K; kk++)
			if (fs_bloom_fpr(FS_BLOOM_BLOCK_BITS / c, 1, kk) <= target) {
				*k = kk;
				return c;
			}
	return -1;
}

/*
 * The fewest blocks (2^log2, at least 1) and the best k for `capacity`
 * keys at a false-positive rate of at most `target`.  0, or -1 when no
 * size up to FS_BLOOM_MAX_LOG2_BLOCKS reaches it.
 */
static inline int fs_bloom_size(double capacity, double target,
				unsigned int *log2_blocks, unsigned int *k)
{
	unsigned int l, kk;

	for (l = 0; l <= FS_BLOOM_MAX_LOG2_BLOCKS; l++) {
		double best = 2;
		unsigned int best_k = 1;

		for (kk = 1; kk <= FS_BLOOM_MAX_K; kk++) {
			double f = fs_bloom_fpr(capacity, ldexp(1, (int)l), kk);

			if (f < best) {
				best = f;
				best_k = kk;
			}
		}
		if (best <= target) {
			*log2_blocks = l;
			*k = best_k;
			return 0;
		}
	}
	return -1;
}
#endif

#endif /* FLOWSKETCH_BLOOM_H */
