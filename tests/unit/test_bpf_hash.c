// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_bpf_hash.c - the keyed hash is the same function in every build.
 *
 * The sketches of the datapath, the kernel module and user space can only
 * be merged and queried together if a key hashes to the same 64 bits in
 * all of them.  Three checks:
 *   1. fs_siphash_words() with 2-4 rounds reproduces the published
 *      SipHash-2-4 vectors (Aumasson & Bernstein, key 00..0f, message
 *      00 01 02 ...), so the round function and padding are SipHash's;
 *   2. a byte-oriented SipHash written here from the paper, independent of
 *      hash.h, agrees with fs_flow_hash/fs_addr_hash and with a handful of
 *      pinned SipHash-1-3 outputs;
 *   3. bpf/test_hash.bpf.c, compiled by clang -target bpf and run with
 *      BPF_PROG_TEST_RUN, returns bit for bit the user-space hash for many
 *      random keys and secrets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsketch/hash.h"
#include "test_hash.skel.h"

/* --- independent reference: SipHash-c-d over bytes, from the paper ----- */

static uint64_t ref_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void ref_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ref_rotl(v[1], 13); v[1] ^= v[0];
	v[0] = ref_rotl(v[0], 32);
	v[2] += v[3]; v[3] = ref_rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ref_rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ref_rotl(v[1], 17); v[1] ^= v[2];
	v[2] = ref_rotl(v[2], 32);
}

static uint64_t ref_le64(const uint8_t *p, size_t n)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < n; i++)
		x |= (uint64_t)p[i] << (8 * i);
	return x;
}

static uint64_t ref_siphash(const uint8_t key[16], const uint8_t *msg,
			    size_t len, int c, int d)
{
	uint64_t k0 = ref_le64(key, 8), k1 = ref_le64(key + 8, 8);
	uint64_t v[4] = {
		k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
		k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL,
	};
	size_t off;
	uint64_t m;
	int r;

	/* Whole blocks, then the last block: the len % 8 remaining bytes
	 * with len mod 256 in the top byte. */
	for (off = 0; off + 8 <= len; off += 8) {
		m = ref_le64(msg + off, 8);
		v[3] ^= m;
		for (r = 0; r < c; r++)
			ref_round(v);
		v[0] ^= m;
	}
	m = ref_le64(msg + off, len - off) | ((uint64_t)(len & 0xff) << 56);
	v[3] ^= m;
	for (r = 0; r < c; r++)
		ref_round(v);
	v[0] ^= m;
	v[2] ^= 0xff;
	for (r = 0; r < d; r++)
		ref_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static void secret_bytes(const struct fs_hash_secret *s, uint8_t out[16])
{
	int i;

	for (i = 0; i < 8; i++) {
		out[i] = (uint8_t)(s->k0 >> (8 * i));
		out[8 + i] = (uint8_t)(s->k1 >> (8 * i));
	}
}

/* xorshift64*: reproducible random keys and secrets. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void rng_fill(void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(rng_next() >> 56);
}

/* --- 1. the published SipHash-2-4 vectors -------------------------------- */

static void test_siphash24_reference_vectors(void **state)
{
	/* Key 00..0f, message 00 01 .. (n-1), output as a little-endian u64. */
	static const uint64_t expect[] = {
		0x726fdb47dd0e0e31ULL, /* 0 bytes */
		0x93f5f5799a932462ULL, /* 8 */
		0x3f2acc7f57c29bdbULL, /* 16 */
		0xb8ad50c6f649af94ULL, /* 24 */
		0x7127512f72f27cceULL, /* 32 */
		0x0e3ea96b5304a7d0ULL, /* 40 */
	};
	struct fs_hash_secret s;
	uint8_t key[16], msg[40];
	__u64 words[5];
	unsigned int n, i;

	for (i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < 40; i++)
		msg[i] = (uint8_t)i;
	s.k0 = ref_le64(key, 8);
	s.k1 = ref_le64(key + 8, 8);
	for (i = 0; i < 5; i++)
		words[i] = ref_le64(msg + 8 * i, 8);

	for (n = 0; n < FS_ARRAY_SIZE(expect); n++) {
		assert_int_equal(fs_siphash_words(words, n, &s, 2, 4),
				 expect[n]);
		assert_int_equal(ref_siphash(key, msg, 8 * n, 2, 4), expect[n]);
	}
	/* Lengths that are not whole words only exist in the reference; the
	 * published vector for 7 bytes checks its tail handling. */
	assert_int_equal(ref_siphash(key, msg, 7, 2, 4), 0xab0200f58b01d137ULL);
}

/* --- 2. SipHash-1-3 in user space against the reference and pins ---------- */

struct pinned_vector {
	struct fs_hash_secret secret;
	struct fs_flow_key key;
	__u64 hash;
};

static struct fs_flow_key pinned_tcp_key(void)
{
	struct fs_flow_key k = {
		.family = FS_FAMILY_IPV4,
		.proto = 6,
		.sport = __builtin_bswap16(49152),
		.dport = __builtin_bswap16(443),
		.src = { 10, 0, 0, 1 },
		.dst = { 192, 0, 2, 7 },
	};

	return k;
}

static struct fs_flow_key pinned_udp6_key(void)
{
	struct fs_flow_key k = {
		.family = FS_FAMILY_IPV6,
		.proto = 17,
		.sport = __builtin_bswap16(5353),
		.dport = __builtin_bswap16(53),
		.src = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
		.dst = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0xab, [15] = 0xcd },
	};

	return k;
}

static const struct fs_hash_secret pin_secret_a = {
	0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL,
};
static const struct fs_hash_secret pin_secret_b = {
	0x0123456789abcdefULL, 0xfedcba9876543210ULL,
};

/* SipHash-1-3 outputs computed with ref_siphash() above and pinned, so
 * that any change to the hash (which would silently make old exports
 * unmergeable) fails here. */
#define PIN_ZERO_A   0xb9a7f69a424642adULL
#define PIN_TCP_A    0x430544fca921b871ULL
#define PIN_TCP_B    0xf92dd1c163755c62ULL
#define PIN_UDP6_B   0x640094d4a28b976eULL
#define PIN_ADDR4_B  0x32b1b35107488855ULL

static __u64 ref_flow_hash(const struct fs_flow_key *k,
			   const struct fs_hash_secret *s)
{
	uint8_t key[16];

	secret_bytes(s, key);
	return ref_siphash(key, (const uint8_t *)k, sizeof(*k), 1, 3);
}

static __u64 ref_addr_hash(const struct fs_addr_key *k,
			   const struct fs_hash_secret *s)
{
	uint8_t key[16];

	secret_bytes(s, key);
	return ref_siphash(key, (const uint8_t *)k, sizeof(*k), 1, 3);
}

static void test_siphash13_pinned_vectors(void **state)
{
	struct fs_flow_key zero = { 0 }, tcp = pinned_tcp_key(),
			   udp6 = pinned_udp6_key();
	struct fs_addr_key addr4 = { .family = FS_FAMILY_IPV4,
				     .addr = { 10, 0, 0, 1 } };
	struct {
		const char *name;
		__u64 user, ref, pinned;
	} v[] = {
		{ "zero key, secret a", fs_flow_hash(&zero, &pin_secret_a),
		  ref_flow_hash(&zero, &pin_secret_a), PIN_ZERO_A },
		{ "tcp4, secret a", fs_flow_hash(&tcp, &pin_secret_a),
		  ref_flow_hash(&tcp, &pin_secret_a), PIN_TCP_A },
		{ "tcp4, secret b", fs_flow_hash(&tcp, &pin_secret_b),
		  ref_flow_hash(&tcp, &pin_secret_b), PIN_TCP_B },
		{ "udp6, secret b", fs_flow_hash(&udp6, &pin_secret_b),
		  ref_flow_hash(&udp6, &pin_secret_b), PIN_UDP6_B },
		{ "addr 10.0.0.1, secret b", fs_addr_hash(&addr4, &pin_secret_b),
		  ref_addr_hash(&addr4, &pin_secret_b), PIN_ADDR4_B },
	};
	unsigned int i;

	for (i = 0; i < FS_ARRAY_SIZE(v); i++) {
		if (v[i].user != v[i].ref || v[i].user != v[i].pinned)
			fail_msg("%s: user 0x%016llx, reference 0x%016llx, pinned 0x%016llx",
				 v[i].name, (unsigned long long)v[i].user,
				 (unsigned long long)v[i].ref,
				 (unsigned long long)v[i].pinned);
	}
}

static void test_siphash13_random_vs_reference(void **state)
{
	struct fs_hash_secret s;
	struct fs_flow_key fk;
	struct fs_addr_key ak;
	int i;

	for (i = 0; i < 10000; i++) {
		s.k0 = rng_next();
		s.k1 = rng_next();
		rng_fill(&fk, sizeof(fk));
		rng_fill(&ak, sizeof(ak));
		assert_int_equal(fs_flow_hash(&fk, &s), ref_flow_hash(&fk, &s));
		assert_int_equal(fs_addr_hash(&ak, &s), ref_addr_hash(&ak, &s));
	}
}

/* --- 3. BPF build against user-space build ------------------------------ */

static struct test_hash *load_with_secret(const struct fs_hash_secret *s)
{
	struct test_hash *skel = test_hash__open();

	if (!skel)
		return NULL;
	skel->rodata->fs_test_secret = *s;
	if (test_hash__load(skel)) {
		test_hash__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Run prog on the key bytes; the hash comes back in the first 8 bytes. */
static __u64 bpf_hash(struct bpf_program *prog, const void *key, size_t len)
{
	__u8 in[64] = { 0 }, out[64] = { 0 };
	__u64 h;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = in,
		.data_size_in = (__u32)len,
		.data_out = out,
		.data_size_out = sizeof(out),
		.repeat = 1,
	);
	int err;

	memcpy(in, key, len);
	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
	assert_int_equal(err, 0);
	assert_int_equal(opts.retval, 2 /* XDP_PASS */);
	assert_int_equal(opts.data_size_out, len);
	memcpy(&h, out, sizeof(h));
	return h;
}

static void check_bpf_against_user(const struct fs_hash_secret *s, int nkeys)
{
	struct test_hash *skel = load_with_secret(s);
	struct fs_flow_key fk;
	struct fs_addr_key ak;
	int i;

	if (!skel)
		fail_msg("cannot load bpf/test_hash.bpf.c: %s", strerror(errno));
	for (i = 0; i < nkeys; i++) {
		rng_fill(&fk, sizeof(fk));
		rng_fill(&ak, sizeof(ak));
		assert_int_equal(bpf_hash(skel->progs.fs_test_flow_hash, &fk,
					  sizeof(fk)),
				 fs_flow_hash(&fk, s));
		assert_int_equal(bpf_hash(skel->progs.fs_test_addr_hash, &ak,
					  sizeof(ak)),
				 fs_addr_hash(&ak, s));
	}
	test_hash__destroy(skel);
}

static void test_bpf_hash_pinned(void **state)
{
	struct fs_flow_key tcp = pinned_tcp_key(), udp6 = pinned_udp6_key();
	struct fs_addr_key addr4 = { .family = FS_FAMILY_IPV4,
				     .addr = { 10, 0, 0, 1 } };
	struct test_hash *skel = load_with_secret(&pin_secret_b);

	if (!skel)
		fail_msg("cannot load bpf/test_hash.bpf.c: %s", strerror(errno));
	assert_int_equal(bpf_hash(skel->progs.fs_test_flow_hash, &tcp,
				  sizeof(tcp)), PIN_TCP_B);
	assert_int_equal(bpf_hash(skel->progs.fs_test_flow_hash, &udp6,
				  sizeof(udp6)), PIN_UDP6_B);
	assert_int_equal(bpf_hash(skel->progs.fs_test_addr_hash, &addr4,
				  sizeof(addr4)), PIN_ADDR4_B);
	test_hash__destroy(skel);
}

static void test_bpf_hash_random(void **state)
{
	struct fs_hash_secret s;
	int i;

	/* The zero secret and all-ones secret, then random ones. */
	s.k0 = 0;
	s.k1 = 0;
	check_bpf_against_user(&s, 64);
	s.k0 = ~0ULL;
	s.k1 = ~0ULL;
	check_bpf_against_user(&s, 64);
	for (i = 0; i < 16; i++) {
		s.k0 = rng_next();
		s.k1 = rng_next();
		check_bpf_against_user(&s, 256);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash24_reference_vectors),
		cmocka_unit_test(test_siphash13_pinned_vectors),
		cmocka_unit_test(test_siphash13_random_vs_reference),
		cmocka_unit_test(test_bpf_hash_pinned),
		cmocka_unit_test(test_bpf_hash_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
