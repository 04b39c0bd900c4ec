// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_bloom.c - the blocklist filter of include/flowsketch/bloom.h.
 *
 * Oracles that do not come from bloom.h:
 *   - groups: the group and key count of every length from the header
 *     comment's rule (/0../16 the summary, then groups of four lengths
 *     keyed on their longest), computed here;
 *   - masks: built byte by byte from the prefix length;
 *   - the filter as a whole (summary, expansion, probes), on random lists:
 *     a brute-force "does any entry cover it" over every entry, byte by
 *     byte; no covered source may get a "no", and uncovered sources next
 *     to entries (sharing their /16, /24, ...) may get a "maybe" only at
 *     the rate ref_fpr() gives for the distinct keys the test itself
 *     expands the list into, the filter's size and k;
 *   - false positives: a filter sized for n keys is filled with n random
 *     keys and probed with a million others; the measured rate must be
 *     within 20 % of Putze, Sanders and Singler's formula, computed here by
 *     a separate implementation (ref_fpr(), summing the Poisson terms in
 *     log space), and above the classic formula (blocks fill unevenly);
 *   - sizing: the size chosen meets the target by ref_fpr() and half of it
 *     does not, for any k.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "flowsketch/bloom.h"
#include "cidr.h"
#include "ref_bloom.h"

static const struct fs_hash_secret secret = {
	.k0 = 0x243f6a8885a308d3ULL,
	.k1 = 0x13198a2e03707344ULL,
};

static __u64 rng_next(__u64 *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s ^ (*s >> 29);
}

/* The header's rule: /0../16 are the summary's (group 0), then /17../20
 * group 1, /21../24 group 2, ... each keyed on its longest length. */
static unsigned int expected_group(unsigned int len)
{
	unsigned int g = 0, end = 16;

	while (len > end) {
		g++;
		end += 4;
	}
	return g;
}

static __u64 expected_keys(unsigned int len)
{
	unsigned int g = expected_group(len), end = 16 + 4 * g;

	return 1ULL << (end - len);	/* the /16s, or the keys of length end */
}

static void test_groups(void **state)
{
	unsigned int len;
	__u64 keys;

	for (len = 0; len <= 32; len++) {
		assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV4, len, &keys),
				 (int)expected_group(len));
		assert_int_equal(keys, expected_keys(len));
		assert_true(len <= 16 || keys <= FS_BLOOM_MAX_EXPAND);
	}
	assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV4, 24, &keys), 2);
	assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV4, 32, &keys), FS_BLOOM_GROUPS4);
	assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV4, 33, &keys), -1);
	for (len = 0; len <= 128; len++) {
		assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV6, len, &keys),
				 (int)expected_group(len));
		assert_int_equal(keys, expected_keys(len));
		assert_true(len <= 16 || keys <= FS_BLOOM_MAX_EXPAND);
	}
	assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV6, 128, &keys), FS_BLOOM_GROUPS6);
	assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV6, 129, &keys), -1);
	assert_int_equal(fs_bloom_group_of(5, 8, &keys), -1);
}

static void test_masks(void **state)
{
	unsigned int len, i, b;

	for (len = 0; len <= 32; len++) {
		__u8 bytes[4] = { 0 };
		__u32 want;

		for (i = 0; i < len; i++)
			bytes[i / 8] |= 0x80 >> (i % 8);
		memcpy(&want, bytes, 4);
		assert_int_equal(fs_bloom_mask32(len), want);
	}
	/* IPv6 groups' chunk masks: the group's end length, byte by byte */
	for (b = 1; b <= FS_BLOOM_GROUPS6; b++) {
		__u8 bytes[16] = { 0 };
		__u32 want[4];

		for (i = 0; i < 16 + 4 * b; i++)
			bytes[i / 8] |= 0x80 >> (i % 8);
		memcpy(want, bytes, 16);
		for (i = 0; i < 4; i++)
			assert_int_equal(fs_bloom_mask6_chunk(b, i), want[i]);
	}
}

/* Addresses that agree on their group's first end bits share a key;
 * others, and the same address in another group, do not. */
static void test_hash_masks_to_the_end(void **state)
{
	struct fs_bloom_key key;
	__u64 s = 1;
	unsigned int g, i;

	fs_bloom_key_derive(&secret, &key);
	for (g = 1; g <= FS_BLOOM_GROUPS4; g++)
		for (i = 0; i < 1000; i++) {
			__u32 a = (__u32)rng_next(&s), b = (__u32)rng_next(&s);
			__u32 m = fs_bloom_mask32(16 + 4 * g);
			__u32 same = (a & m) | (b & ~m);

			assert_int_equal(fs_bloom_hash4(&key, g, a),
					 fs_bloom_hash4(&key, g, same));
			if ((a & m) != (b & m))
				assert_int_not_equal(fs_bloom_hash4(&key, g, a),
						     fs_bloom_hash4(&key, g, b));
			if (g > 1)	/* a & m of group g - 1's mask: a key of both */
				assert_int_not_equal(fs_bloom_hash4(&key, g, a & fs_bloom_mask32(12 + 4 * g)),
						     fs_bloom_hash4(&key, g - 1, a));
		}
	for (g = 1; g <= FS_BLOOM_GROUPS6; g++)
		for (i = 0; i < 1000; i++) {
			__u32 a[4], b[4], c[4];
			unsigned int w, bit, len = 16 + 4 * g;
			int differs = 0;

			for (w = 0; w < 4; w++) {
				a[w] = (__u32)rng_next(&s);
				b[w] = (__u32)rng_next(&s);
				c[w] = b[w];
			}
			/* c: a's first len bits, b's others (bits in packet
			 * order: byte by byte, high bit first). */
			for (bit = 0; bit < len; bit++) {
				__u8 *pa = (__u8 *)a, *pc = (__u8 *)c;
				__u8 mb = 0x80 >> (bit % 8);

				pc[bit / 8] = (__u8)((pc[bit / 8] & ~mb) | (pa[bit / 8] & mb));
				if ((pa[bit / 8] ^ ((__u8 *)b)[bit / 8]) & mb)
					differs = 1;
			}
			assert_int_equal(fs_bloom_hash6(&key, g, a),
					 fs_bloom_hash6(&key, g, c));
			if (differs)
				assert_int_not_equal(fs_bloom_hash6(&key, g, a),
						     fs_bloom_hash6(&key, g, b));
		}
}

/* The keys derive from the secret, and only from it. */
static void test_key_is_keyed(void **state)
{
	struct fs_bloom_key a, b;
	struct fs_hash_secret other = secret;

	fs_bloom_key_derive(&secret, &a);
	fs_bloom_key_derive(&secret, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	other.k1 ^= 1;
	fs_bloom_key_derive(&other, &b);
	assert_int_not_equal(a.v4[0][0], b.v4[0][0]);
	assert_int_not_equal(a.v6[1][6], b.v6[1][6]);
}

/*
 * The k bits are the ones the header's "Layout" defines (the top 9 bits
 * of h times C, C^2, ..., computed here), set then test finds every key,
 * and clearing any one of its bits makes it "definitely not".
 */
static void test_set_then_test(void **state)
{
	struct fs_bloom_block b, want;
	__u64 s = 7;
	unsigned int k, i, j;

	for (k = 1; k <= FS_BLOOM_MAX_K; k++)
		for (i = 0; i < 2000; i++) {
			__u64 h = rng_next(&s), x = h;

			memset(&want, 0, sizeof(want));
			for (j = 0; j < k; j++) {
				unsigned int bit;

				x *= 0x9e3779b97f4a7c15ULL;
				bit = (unsigned int)(x >> 55);
				want.w[bit / 64] |= 1ULL << (bit % 64);
			}
			memset(&b, 0, sizeof(b));
			fs_bloom_block_set(&b, h, k);
			assert_memory_equal(&b, &want, sizeof(b));
			assert_true(fs_bloom_block_test(&b, h, k));
			for (j = 0; j < 8; j++)
				if (b.w[j]) {
					struct fs_bloom_block c = b;

					c.w[j] &= c.w[j] - 1;	/* one bit fewer */
					assert_false(fs_bloom_block_test(&c, h, k));
					break;
				}
		}
}

/*
 * A filter sized for n keys at 1 %: no false negative, and a measured
 * rate within 20 % of ref_fpr() at its size and k.
 */
static void fill_and_measure(double target, unsigned int n)
{
	struct fs_bloom_block *f;
	unsigned int log2b = 0, k = 0, i, fp = 0, probes = 1000000;
	double want, classic, got;
	__u64 s = 99, *keys;

	assert_int_equal(fs_bloom_size(n, target, &log2b, &k), 0);
	f = calloc(1U << log2b, sizeof(*f));
	keys = calloc(n, sizeof(*keys));
	assert_non_null(f);
	assert_non_null(keys);
	for (i = 0; i < n; i++) {
		keys[i] = rng_next(&s) * 0x9e3779b97f4a7c15ULL;
		fs_bloom_block_set(&f[fs_bloom_block_index(keys[i], log2b)],
				   keys[i], k);
	}
	for (i = 0; i < n; i++)
		assert_true(fs_bloom_block_test(&f[fs_bloom_block_index(keys[i], log2b)],
						keys[i], k));
	for (i = 0; i < probes; i++) {
		__u64 h = rng_next(&s) * 0xc2b2ae3d27d4eb4fULL;

		fp += (unsigned int)fs_bloom_block_test(&f[fs_bloom_block_index(h, log2b)],
							h, k);
	}
	want = ref_fpr(n, ldexp(1, (int)log2b), k);
	classic = pow(1 - exp(-(double)k * n / ldexp(512, (int)log2b)), k);
	got = (double)fp / probes;
	print_message("# %u keys, 2^%u blocks, k %u: measured %.5f, PSS %.5f, classic %.5f, %.2f bits a key\n",
		      n, log2b, k, got, want, classic, ldexp(512, (int)log2b) / n);
	assert_true(want <= target);
	assert_true(want > classic);
	assert_true(fabs(got - want) <= 0.2 * want);
	free(f);
	free(keys);
}

static void test_false_positive_rate(void **state)
{
	fill_and_measure(0.01, 10000);
	fill_and_measure(0.01, 100000);
	fill_and_measure(0.001, 50000);
}

/* The fewest blocks: the size meets the target, half of it cannot. */
static void test_sizing_is_minimal(void **state)
{
	static const double caps[] = { 1, 100, 10000, 123457, 1000000 };
	static const double targets[] = { 0.05, 0.01, 0.001 };
	unsigned int c, t, log2b = 0, k = 0, kk;

	for (c = 0; c < FS_ARRAY_SIZE(caps); c++)
		for (t = 0; t < FS_ARRAY_SIZE(targets); t++) {
			assert_int_equal(fs_bloom_size(caps[c], targets[t], &log2b, &k), 0);
			assert_true(ref_fpr(caps[c], ldexp(1, (int)log2b), k) <=
				    targets[t] * (1 + 1e-9));
			if (!log2b)
				continue;
			for (kk = 1; kk <= FS_BLOOM_MAX_K; kk++)
				assert_true(ref_fpr(caps[c], ldexp(1, (int)log2b - 1), kk) >
					    targets[t]);
		}
}

/* Bits a key with the block count free: the least that reaches the
 * target by ref_fpr(), to the 0.05-bit step. */
static void test_bits_per_key(void **state)
{
	static const double targets[] = { 0.1, 0.01, 0.001, 0.0001 };
	unsigned int t, k = 0, kk;

	for (t = 0; t < FS_ARRAY_SIZE(targets); t++) {
		double c = fs_bloom_bits_per_key(targets[t], &k);

		assert_true(c > 0);
		assert_true(ref_fpr(512 / c, 1, k) <= targets[t] * (1 + 1e-9));
		for (kk = 1; kk <= FS_BLOOM_MAX_K; kk++)
			assert_true(ref_fpr(512 / (c - 0.05), 1, kk) > targets[t]);
		/* never fewer bits than the classic formula needs */
		assert_true(c >= -log(targets[t]) / (M_LN2 * M_LN2) - 0.05);
	}
}

/* ---- the filter as a whole, against a brute-force oracle ------------- */

#define NEAR_ENTRIES 6000
#define NEAR_COVERED 10000
#define NEAR_SOURCES 30000

/* Whether entry c covers (family, addr): its first len bits, byte by byte. */
static int oracle_covers(const struct fs_cidr *c, __u8 family, const __u8 *addr)
{
	unsigned int full = c->len / 8, rest = c->len % 8, i;

	if (c->family != family)
		return 0;
	for (i = 0; i < full; i++)
		if (c->addr[i] != addr[i])
			return 0;
	return !rest || !((c->addr[full] ^ addr[full]) & (0xff00 >> rest));
}

static int oracle_covered(const struct fs_cidr *e, size_t n, __u8 family,
			  const __u8 *addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (oracle_covers(&e[i], family, addr))
			return 1;
	return 0;
}

/* bits from..to-1 of dst set from src (the rest of dst kept). */
static void copy_bits(__u8 *dst, const __u8 *src, unsigned int to)
{
	unsigned int b;

	for (b = 0; b < to; b++) {
		__u8 m = (__u8)(0x80 >> (b % 8));

		dst[b / 8] = (__u8)((dst[b / 8] & ~m) | (src[b / 8] & m));
	}
}

static void random_entry(struct fs_cidr *c, __u64 *s)
{
	unsigned int i, len, b;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < 16; i++)
		c->addr[i] = (__u8)rng_next(s);
	if (rng_next(s) & 1) {
		c->family = FS_FAMILY_IPV4;
		len = rng_next(s) % 100 == 0 ? 8 + (unsigned int)(rng_next(s) % 8) :
					       16 + (unsigned int)(rng_next(s) % 17);
		memset(c->addr + 4, 0, 12);
	} else {
		c->family = FS_FAMILY_IPV6;
		len = rng_next(s) % 100 == 0 ? 8 + (unsigned int)(rng_next(s) % 8) :
					       16 + (unsigned int)(rng_next(s) % 113);
	}
	for (b = len; b < 128; b++)
		c->addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
	c->len = (__u8)len;
}

/* A filter key as the test expands it: family, group, prefix. */
struct tkey {
	__u8 family, group;
	__u8 addr[16];
};

static int tkey_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct tkey));
}

/* The distinct filter keys of e (n entries), expanded here by the
 * header's rule: an entry longer than /16 in group g becomes every prefix
 * of length 16 + 4g under it. */
static size_t expanded_keys(const struct fs_cidr *e, size_t n, size_t *with_repeats)
{
	struct tkey *k = NULL;
	size_t nk = 0, cap = 0, i, d;
	__u64 j;

	for (i = 0; i < n; i++) {
		unsigned int g = expected_group(e[i].len), end = 16 + 4 * g;

		if (!g)
			continue;
		for (j = 0; j < 1ULL << (end - e[i].len); j++) {
			unsigned int b;

			if (nk == cap) {
				cap = cap ? 2 * cap : 4096;
				k = realloc(k, cap * sizeof(*k));
				assert_non_null(k);
			}
			memset(&k[nk], 0, sizeof(*k));
			k[nk].family = e[i].family;
			k[nk].group = (__u8)g;
			memcpy(k[nk].addr, e[i].addr, 16);
			for (b = e[i].len; b < end; b++)
				if ((j >> (end - 1 - b)) & 1)
					k[nk].addr[b / 8] |= (__u8)(0x80 >> (b % 8));
			nk++;
		}
	}
	*with_repeats = nk;
	qsort(k, nk, sizeof(*k), tkey_cmp);
	for (i = 0, d = 0; i < nk; i++)
		if (!d || tkey_cmp(&k[d - 1], &k[i]))
			k[d++] = k[i];
	free(k);
	return d;
}

/*
 * A source next to entry e, inside nothing the oracle knows of: e's first
 * `keep` bits, random after them.  keep: the allocation boundary below
 * e's length (/16 or /24; IPv6 /16, /32, /48, /56, /64), or its sibling
 * (e's first len - 1 bits and the other value of bit len - 1, the nearest
 * a source outside e can be).  0, or -1 if it came out covered.
 */
static int near_source(const struct fs_cidr *list, size_t n, const struct fs_cidr *e,
		       int sibling, __u64 *s, __u8 out[16])
{
	static const unsigned int bound4[] = { 24, 16 }, bound6[] = { 64, 56, 48, 32, 16 };
	const unsigned int *bound = e->family == FS_FAMILY_IPV4 ? bound4 : bound6;
	unsigned int nb = e->family == FS_FAMILY_IPV4 ? 2 : 5, keep = 16, i;

	for (i = 0; i < nb; i++)
		if (bound[i] < e->len) {
			keep = bound[i];
			break;
		}
	if (sibling)
		keep = e->len;
	memset(out, 0, 16);
	for (i = 0; i < (e->family == FS_FAMILY_IPV4 ? 4U : 16U); i++)
		out[i] = (__u8)rng_next(s);
	copy_bits(out, e->addr, keep);
	if (sibling)
		out[(e->len - 1) / 8] ^= (__u8)(0x80 >> ((e->len - 1) % 8));
	return oracle_covered(list, n, e->family, out) ? -1 : 0;
}

/*
 * Random lists, the filter and summary built as the daemon builds them
 * (cidr.c), asked as the datapath asks (fs_bloom_source_maybe()):
 *   (1) every source inside an entry gets "maybe";
 *   (2) uncovered sources next to entries get "maybe" per probe at most
 *       at the design rate of the filter's size and k for the keys the
 *       test expands, by ref_fpr() (and a fifth, for this one filter's
 *       block loads), plus four standard deviations: the
 *       rate that keying groups on their shortest length breaks (a /16
 *       holding a /20 made every source of the /16 a "maybe");
 * and they do probe (a near source's /16 always holds its entry's group).
 */
static void test_near_sources_model(void **state)
{
	static const __u64 seeds[] = { 11, 12, 13 };
	unsigned int si;

	for (si = 0; si < FS_ARRAY_SIZE(seeds); si++) {
		struct fs_block_summary *sum = calloc(1, sizeof(*sum));
		struct fs_cidr *e = calloc(NEAR_ENTRIES, sizeof(*e));
		struct fs_bloom_block *f;
		struct fs_bloom_key key;
		__u64 s = seeds[si], maybes = 0, probes = 0, missed = 0, near = 0;
		size_t n, i, distinct, keys;
		unsigned int log2b = 0, k = 0, kk;
		double p, bound;

		assert_non_null(sum);
		assert_non_null(e);
		fs_bloom_key_derive(&secret, &key);
		for (i = 0; i < NEAR_ENTRIES; i++)
			random_entry(&e[i], &s);
		n = fs_cidr_sort_unique(e, NEAR_ENTRIES);
		distinct = expanded_keys(e, n, &keys);
		/* Full, about 50 keys a block (a rate near 1 %), so that
		 * false positives are there to count (the daemon's filters,
		 * sized for twice their keys, have far fewer); k the best for
		 * it by ref_fpr(). */
		while (keys >> (log2b + 1) >= 40)
			log2b++;
		for (kk = 1, p = 2; kk <= FS_BLOOM_MAX_K; kk++)
			if (ref_fpr((double)keys, ldexp(1, (int)log2b), kk) < p) {
				p = ref_fpr((double)keys, ldexp(1, (int)log2b), kk);
				k = kk;
			}
		f = calloc(1U << log2b, sizeof(*f));
		assert_non_null(f);
		for (i = 0; i < n; i++) {
			fs_cidr_filter_add(&key, &e[i], f, log2b, k);
			fs_cidr_summary_set(sum, &e[i]);
		}
		/* (1) */
		for (i = 0; i < NEAR_COVERED; i++) {
			const struct fs_cidr *c = &e[rng_next(&s) % n];
			__u8 a[16] = { 0 };
			__u32 pr;
			unsigned int b;

			for (b = 0; b < (c->family == FS_FAMILY_IPV4 ? 4U : 16U); b++)
				a[b] = (__u8)rng_next(&s);
			copy_bits(a, c->addr, c->len);
			missed += !fs_bloom_source_maybe(sum, f, log2b, k, &key,
							 c->family, a, &pr);
		}
		/* (2) */
		for (i = 0; i < NEAR_SOURCES; i++) {
			const struct fs_cidr *c = &e[rng_next(&s) % n];
			__u8 a[16];
			__u32 pr;

			if (c->len <= 16 || near_source(e, n, c, (int)(i & 1), &s, a))
				continue;
			near++;
			maybes += (__u64)fs_bloom_source_maybe(sum, f, log2b, k, &key,
							       c->family, a, &pr);
			probes += pr;
		}
		/* The formula is the mean over filters; this one filter's
		 * blocks carry their own loads, whose spread moves its rate
		 * by a few percent at these sizes (the standard deviation of
		 * the rate over filters of 2^9 blocks is about 4 %): a fifth
		 * more, then four standard deviations of the count. */
		p = ref_fpr((double)distinct, ldexp(1, (int)log2b), k);
		bound = 1.2 * probes * p + 4 * sqrt(probes * p) + 4;
		print_message("# seed %llu: %zu entries, %zu keys (%zu distinct), 2^%u blocks, k %u;"
			      " covered sources missed %llu; %llu near sources, %llu probes, %llu maybe"
			      " (%.5f a probe; design %.5f, bound %.0f)\n",
			      (unsigned long long)seeds[si], n, keys, distinct, log2b, k,
			      (unsigned long long)missed, (unsigned long long)near,
			      (unsigned long long)probes, (unsigned long long)maybes,
			      probes ? (double)maybes / probes : 0, p, bound);
		assert_int_equal(missed, 0);
		assert_true(near > NEAR_SOURCES / 4);
		assert_true(probes >= near);
		assert_true((double)maybes <= bound);
		free(f);
		free(e);
		free(sum);
	}
}

/*
 * The finer IPv4 level (bloom.h, fs_bloom_fine4_*): 16-bit words built
 * from random lists the way the prototype builds them (the summary's byte,
 * the /19 bits above it), asked as the datapath asks, against brute force
 * over the list:
 *   (1) a source inside an entry keeps what reaching the trie needs: the
 *       cover bit for each entry of length <= 16 covering it, that entry's
 *       group bit for a longer one (never a false "no");
 *   (2) a source in a /16 that holds entries keeps its /16's groups when
 *       an entry longer than /16 meets its /19 (their first min(len, 19)
 *       bits agree), and only the cover bit when none does: the level is
 *       as fine as it says;
 * and both outcomes of (2) occur.  The mutant that marks a /17's or /18's
 * first /19 alone fails (1).
 */
#define FINE4_ENTRIES 4000
#define FINE4_SOURCES 20000

static int oracle_meets19(const struct fs_cidr *e, size_t n, const __u8 *src)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct fs_cidr c = e[i];
		unsigned int b;

		if (c.family != FS_FAMILY_IPV4 || c.len <= 16)
			continue;
		/* e[i] meets src's /19: e[i] cut to min(len, 19) covers src */
		if (c.len > 19) {
			c.len = 19;
			for (b = 19; b < 32; b++)
				c.addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
		}
		if (oracle_covers(&c, FS_FAMILY_IPV4, src))
			return 1;
	}
	return 0;
}

static void test_fine4_model(void **state)
{
	static const __u64 seeds[] = { 21, 22, 23 };
	unsigned int si;

	(void)state;
	for (si = 0; si < FS_ARRAY_SIZE(seeds); si++) {
		struct fs_block_summary *sum = calloc(1, sizeof(*sum));
		struct fs_cidr *e = calloc(FINE4_ENTRIES, sizeof(*e));
		__u16 *w = calloc(65536, sizeof(*w));
		__u64 s = seeds[si], lost = 0, met = 0, skipped = 0, wrong = 0;
		size_t n, i, j;

		assert_non_null(sum);
		assert_non_null(e);
		assert_non_null(w);
		/* IPv4 only, clustered in 64 /8s so that /16s hold several
		 * entries and /19s meet: a sparse list would not test much. */
		for (i = 0; i < FINE4_ENTRIES; i++) {
			do
				random_entry(&e[i], &s);
			while (e[i].family != FS_FAMILY_IPV4);
			e[i].addr[0] &= 0x3f;
			e[i].addr[1] &= 0x0f;
		}
		n = fs_cidr_sort_unique(e, FINE4_ENTRIES);
		for (i = 0; i < n; i++)
			fs_cidr_summary_set(sum, &e[i]);
		for (i = 0; i < 65536; i++)
			w[i] = sum->v4[i];
		for (i = 0; i < n; i++)
			w[fs_block_summary_index(e[i].addr)] |=
				(__u16)(fs_bloom_fine4_bits(e[i].len, e[i].addr) << 8);
		/* (1) */
		for (i = 0; i < FINE4_SOURCES; i++) {
			const struct fs_cidr *c = &e[rng_next(&s) % n];
			__u8 a[16] = { 0 };
			__u32 m;

			for (j = 0; j < 4; j++)
				a[j] = (__u8)rng_next(&s);
			copy_bits(a, c->addr, c->len);
			m = fs_bloom_fine4_mask(w[fs_block_summary_index(a)], a);
			for (j = 0; j < n; j++) {
				if (!oracle_covers(&e[j], FS_FAMILY_IPV4, a))
					continue;
				if (e[j].len <= 16)
					lost += !(m & 1);
				else
					lost += !((m >> expected_group(e[j].len)) & 1);
			}
		}
		/* (2) */
		for (i = 0; i < FINE4_SOURCES; i++) {
			const struct fs_cidr *c = &e[rng_next(&s) % n];
			__u8 a[16] = { 0 };
			__u32 word, m;
			int meets;

			if (c->len <= 16) {
				skipped++;
				continue;
			}
			for (j = 0; j < 4; j++)
				a[j] = (__u8)rng_next(&s);
			copy_bits(a, c->addr, 16);
			word = w[fs_block_summary_index(a)];
			m = fs_bloom_fine4_mask(word, a);
			meets = oracle_meets19(e, n, a);
			met += (__u64)meets;
			wrong += m != (meets ? word & 0x1f : word & 1);
		}
		print_message("# seed %llu: %zu entries; covered sources' lost bits %llu; /16 neighbours"
			      " %llu, of which %llu meet an entry in their /19, %llu answered wrong\n",
			      (unsigned long long)seeds[si], n, (unsigned long long)lost,
			      (unsigned long long)(FINE4_SOURCES - skipped), (unsigned long long)met,
			      (unsigned long long)wrong);
		assert_int_equal(lost, 0);
		assert_int_equal(wrong, 0);
		assert_true(met > (FINE4_SOURCES - skipped) / 10);
		assert_true(met < (FINE4_SOURCES - skipped) * 9 / 10);
		free(w);
		free(e);
		free(sum);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_hash_masks_to_the_end),
		cmocka_unit_test(test_key_is_keyed),
		cmocka_unit_test(test_set_then_test),
		cmocka_unit_test(test_false_positive_rate),
		cmocka_unit_test(test_sizing_is_minimal),
		cmocka_unit_test(test_bits_per_key),
		cmocka_unit_test(test_near_sources_model),
		cmocka_unit_test(test_fine4_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
