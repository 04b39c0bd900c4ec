/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bloom.h - the blocklist's filter: a blocked Bloom filter of source
 * prefixes, its keys, layout, probe, update and sizing.
 *
 * Question: is this packet's source blocked?  The list holds CIDR prefixes
 * (IPv4 and IPv6, up to a million).  The filter answers "definitely not"
 * or "maybe"; only a "maybe" goes on to the exact confirm (the LPM tries
 * of maps.h), and only a confirmed match is dropped, so a false positive
 * costs one exact lookup and never a packet.
 *
 * Groups of prefix lengths.  A filter answers membership of exact keys,
 * and a source may be covered by a prefix of any length, so a packet
 * would need one probe per length present (33 for IPv4, 129 for IPv6).
 * Instead the lengths are cut into a few groups, each keyed on its
 * shortest length (its base):
 *
 *     IPv4  bases 8, 16, 24, 32            (4 probes at most)
 *     IPv6  bases 16, 32, 48, 56, 64, 128  (6 probes at most)
 *
 * An entry of length L goes into the filter as its address masked to the
 * base b <= L of its group: (group, addr / b).  A packet probes each group
 * that holds an entry (fs_bloom_ctl's masks) with its source masked to
 * that group's base, so the probe count never grows with the lengths in
 * the list.  What it costs:
 *   - extra confirms: a source inside an entry's base-length prefix but
 *     outside the entry itself (a /20 keys its /16, so the other 15/16 of
 *     that /16 are "maybe" and go to the trie, which says no).  They cost
 *     a trie lookup, never a drop, and only traffic that shares a base
 *     prefix with an entry pays it;
 *   - memory: entries shorter than the first base (IPv4 /0 - /7, IPv6
 *     /0 - /15) are expanded into the 2^(base - L) base prefixes they
 *     cover, so that no group is keyed on /0 (which would make every
 *     packet a "maybe"): up to 256 keys for an IPv4 /0, 65536 for an IPv6
 *     /0.  fs_bloom_keys_of() counts them; the filter is sized in keys.
 * The bases follow where lists put their lengths: IPv4 /8 /16 /24 /32
 * boundaries; IPv6 allocations /32, sites /48, /56 customer blocks, /64
 * subnets and /128 hosts.
 *
 * Hash.  Keyed, like every hash of flowsketch (hash.h), so that nobody
 * who does not know the secret can aim sources at one block: per group g
 * and half h, two 64-bit keys (IPv4, one 32-bit chunk x = the masked
 * address read little-endian)
 *     half = (a_{g,h} * x + b_{g,h}) >> 32                    (mod 2^64)
 * Dietzfelbinger's multiply-add-shift, strongly universal from 32 to 32
 * bits; for IPv6 (four chunks x_0..x_3) Thorup's pair-multiply-shift,
 *     half = (c_0 + (c_1 + x_1)(c_2 + x_0) + (c_3 + x_3)(c_4 + x_2)) >> 32
 * also strongly universal.  The two halves make a 64-bit h that two
 * distinct keys share with probability 2^-64, and whose fields are
 * independent between two keys: what the false-positive analysis below
 * needs of it.  The keys are SipHash-2-4 of the secret in counter mode,
 * in a domain of their own (fs_bloom_key_derive()).
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
 * (`flowsketch size` prints both).  A packet probes up to 4 (IPv4) or 6 (IPv6)
 * keys, so its chance of one needless confirm is at most 4 or 6 times fpr.
 */
#ifndef FLOWSKETCH_BLOOM_H
#define FLOWSKETCH_BLOOM_H

#include "compat.h"
#include "flow_key.h"
#include "hash.h"

#define FS_BLOOM_GROUPS4 4
#define FS_BLOOM_GROUPS6 6
#define FS_BLOOM_BLOCK_BITS 512
#define FS_BLOOM_MAX_K 16
#define FS_BLOOM_MAX_LOG2_BLOCKS 22	/* 256 MiB: far beyond a million keys; the
					   base field holds 2 * 2^22 */

/* One filter block: one cache line. */
struct fs_bloom_block {
	__u64 w[8];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct fs_bloom_block) == 64, "a block is a line");

static const __u8 fs_bloom_base4[FS_BLOOM_GROUPS4] = { 8, 16, 24, 32 };
static const __u8 fs_bloom_base6[FS_BLOOM_GROUPS6] = { 16, 32, 48, 56, 64, 128 };

/*
 * The filter's hash keys (see "Hash" above), in the datapath's .rodata
 * beside fs_hash_key: 64 + 240 words.
 */
struct fs_bloom_key {
	__u64 v4[FS_BLOOM_GROUPS4][2][2];	/* [group][half]{a, b} */
	__u64 v6[FS_BLOOM_GROUPS6][2][5];	/* [group][half]{c_0 .. c_4} */
};

/*
 * fs_ctl.bloom: which filter the datapath probes, packed in one word so
 * that the daemon switches filters with one 64-bit store (a packet reads
 * it once: it sees the old filter or the new one, never a mix).
 *
 *   bits  0..7   k, bits per key (0: no blocklist, nothing probed)
 *   bits  8..15  log2 of the number of blocks
 *   bits 16..23  IPv4 groups holding keys (bit g: base fs_bloom_base4[g])
 *   bits 24..31  IPv6 groups holding keys
 *   bits 40..63  the filter's first block in fs_bloom, which holds two
 *                filters (the live one and the one being rebuilt) in one
 *                map: one map, so that the verifier inlines its lookup
 *                (a lookup that may see either of two maps is a helper
 *                call, measured at about 15 ns a probe)
 */
#define FS_BLOOM_CTL_K(c) ((__u32)(c) & 0xff)
#define FS_BLOOM_CTL_LOG2(c) ((__u32)((c) >> 8) & 0xff)
#define FS_BLOOM_CTL_GROUPS4(c) ((__u32)((c) >> 16) & 0xf)
#define FS_BLOOM_CTL_GROUPS6(c) ((__u32)((c) >> 24) & 0x3f)
#define FS_BLOOM_CTL_BASE(c) ((__u32)((c) >> 40))

FS_INLINE __u64 fs_bloom_ctl(__u32 k, __u32 log2_blocks, __u32 base,
			     __u32 groups4, __u32 groups6)
{
	return (__u64)(k & 0xff) | (__u64)(log2_blocks & 0xff) << 8 |
	       (__u64)(groups4 & 0xf) << 16 | (__u64)(groups6 & 0x3f) << 24 |
	       (__u64)(base & 0xffffff) << 40;
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

/* Chunk i (0..3) of a 16-byte address masked to len bits. */
FS_INLINE __u32 fs_bloom_chunk6(const __u32 *x, __u32 i, __u32 len)
{
	__u32 first = i * 32;

	if (len <= first)
		return 0;
	return x[i] & fs_bloom_mask32(len - first);
}

/* The 64-bit hash of an IPv4 address masked to group g's base; x is the
 * address as it sits in the packet, read little-endian. */
FS_INLINE __u64 fs_bloom_hash4(const struct fs_bloom_key *k, __u32 g, __u32 x)
{
	const __u64 *h0 = k->v4[g][0], *h1 = k->v4[g][1];
	__u64 m = x & fs_bloom_mask32(fs_bloom_base4[g]);

	return ((h0[0] * m + h0[1]) & 0xffffffff00000000ULL) |
	       ((h1[0] * m + h1[1]) >> 32);
}

/* The same for IPv6: x is the address as four little-endian chunks. */
FS_INLINE __u64 fs_bloom_hash6(const struct fs_bloom_key *k, __u32 g,
			       const __u32 *x)
{
	__u32 len = fs_bloom_base6[g];
	__u64 m0 = fs_bloom_chunk6(x, 0, len), m1 = fs_bloom_chunk6(x, 1, len);
	__u64 m2 = fs_bloom_chunk6(x, 2, len), m3 = fs_bloom_chunk6(x, 3, len);
	__u64 out[2];
	__u32 half;

FS_UNROLL
	for (half = 0; half < 2; half++) {
		const __u64 *c = k->v6[g][half];

		out[half] = (c[0] + (c[1] + m1) * (c[2] + m0) +
			     (c[3] + m3) * (c[4] + m2)) >> 32;
	}
	return out[0] << 32 | out[1];
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
 */
FS_INLINE int fs_bloom_block_test(const struct fs_bloom_block *b, __u64 h,
				  __u32 k)
{
	__u64 x = h;
	__u32 i;

FS_NO_UNROLL
	for (i = 0; i < FS_BLOOM_MAX_K; i++) {
		__u32 bit = fs_bloom_next_bit(&x);

		if (i >= k)
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
 * The group of a prefix of length len (0..32 or 0..128), and how many
 * base-length keys it takes: 1, or 2^(base - len) below the first base.
 * Returns -1 for a length out of range.
 */
FS_INLINE int fs_bloom_group_of(__u32 family, __u32 len, __u64 *keys)
{
	const __u8 *base = family == FS_FAMILY_IPV4 ? fs_bloom_base4 : fs_bloom_base6;
	__u32 n = family == FS_FAMILY_IPV4 ? FS_BLOOM_GROUPS4 : FS_BLOOM_GROUPS6;
	__u32 g;

	if ((family != FS_FAMILY_IPV4 && family != FS_FAMILY_IPV6) ||
	    len > base[n - 1])
		return -1;
	if (len < base[0]) {
		*keys = 1ULL << (base[0] - len);
		return 0;
	}
	*keys = 1;
	for (g = n - 1; g > 0 && base[g] > len; g--)
		;
	return (int)g;
}

/*
 * Exact groups.  The shortest groups have few possible keys: 256 IPv4 /8s,
 * 65536 IPv4 /16s and 65536 IPv6 /16s.  Those are kept as exact bitmaps
 * (struct fs_block_exact, 16 KiB, one map element) instead of filter keys:
 * a bit test in a small, hot array instead of a probe of a random line of
 * the filter, no false positive, and no filter keys for them (an IPv6 /0
 * is one bit per /16 here, not 65536 keys).  A set bit is a "maybe" like a
 * filter's: the trie still decides.  So a packet touches the filter at
 * most twice for IPv4 (/24, /32 groups) and five times for IPv6.
 */
#define FS_BLOOM_EXACT4 0x3	/* groups 0 (/8) and 1 (/16) */
#define FS_BLOOM_EXACT6 0x1	/* group 0 (/16) */

struct fs_block_exact {
	__u64 v4_8[4];		/* bit b: some entry keys IPv4 /8 b */
	__u64 v4_16[1024];	/* bit b: IPv4 /16 (a0 << 8 | a1) */
	__u64 v6_16[1024];	/* bit b: IPv6 /16 (a0 << 8 | a1) */
};

FS_INLINE int fs_bloom_group_exact(__u32 family, __u32 g)
{
	return family == FS_FAMILY_IPV4 ? (FS_BLOOM_EXACT4 >> g) & 1 :
					  (FS_BLOOM_EXACT6 >> g) & 1;
}

/* The word and bit of an exact group's key: the address's first bytes. */
FS_INLINE __u64 *fs_block_exact_word(struct fs_block_exact *x, __u32 family,
				     __u32 g, const __u8 *addr, __u32 *bit)
{
	__u32 b = family == FS_FAMILY_IPV4 && g == 0 ? addr[0] :
		  ((__u32)addr[0] << 8) | addr[1];

	*bit = b & 63;
	if (family == FS_FAMILY_IPV4)
		return g == 0 ? &x->v4_8[(b >> 6) & 3] : &x->v4_16[(b >> 6) & 1023];
	return &x->v6_16[(b >> 6) & 1023];
}

FS_INLINE int fs_block_exact_test(const struct fs_block_exact *x, __u32 family,
				  __u32 g, const __u8 *addr)
{
	__u32 bit;
	const __u64 *w = fs_block_exact_word((struct fs_block_exact *)x, family,
					     g, addr, &bit);

	return (int)((*w >> bit) & 1);
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
