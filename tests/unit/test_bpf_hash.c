// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_bpf_hash.c - the keyed hashes are the same functions in every build.
 *
 * The sketches of the datapath, the kernel module and user space can only
 * be merged and queried together if a key hashes to the same 64 bits in
 * all of them.  Two checks (the published SipHash-2-4 vectors, for
 * fs_siphash_words() and for the reference, are in test_hash.c):
 *   1. the independent reference of ref_hash.h (byte-oriented SipHash,
 *      the pair-multiply-shift formula of hash.h's comment) agrees with
 *      fs_hash_key_derive() and fs_packet_hash() on random inputs and on a
 *      handful of pinned outputs;
 *   2. bpf/test_hash.bpf.c, compiled by clang -target bpf and run with
 *      BPF_PROG_TEST_RUN, returns bit for bit the user-space flow, source
 *      and destination hashes for many random flow keys and hash keys.
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
#include "ref_hash.h"
#include "rng.h"
#include "test_hash.skel.h"

/* xorshift64*: reproducible random keys and secrets. */
static __u64 rng_state = 0x9e3779b97f4a7c15ULL;

static void rng_hash_key(struct fs_hash_key *k)
{
	int half, i;

	for (half = 0; half < 2; half++)
		for (i = 0; i < FS_HASH_KEY_WORDS; i++)
			k->a[half][i] = rng_next(&rng_state);
	fs_hash_key_ipv4_terms(k);
}

/*
 * A flow key of shape n % 4: random bytes; IPv4 as the parser writes it
 * (the hash's IPv4 path); family 4 with junk in the high address bytes
 * (must take the general path); IPv6.
 */
static void rng_flow_key(struct fs_flow_key *k, int n)
{
	rng_fill(&rng_state, k, sizeof(*k));
	switch (n % 4) {
	case 1:
		memset(k->src + 4, 0, 12);
		memset(k->dst + 4, 0, 12);
		/* fall through */
	case 2:
		k->family = FS_FAMILY_IPV4;
		break;
	case 3:
		k->family = FS_FAMILY_IPV6;
		break;
	}
}

/* --- 1. user space against the reference and pins ------------------------ */

static const struct fs_flow_key pinned_zero_key;

static const struct fs_flow_key pinned_tcp_key = {
	.family = FS_FAMILY_IPV4,
	.proto = 6,
	.sport = __builtin_bswap16(49152),
	.dport = __builtin_bswap16(443),
	.src = { 10, 0, 0, 1 },
	.dst = { 192, 0, 2, 7 },
};

static const struct fs_flow_key pinned_udp6_key = {
	.family = FS_FAMILY_IPV6,
	.proto = 17,
	.sport = __builtin_bswap16(5353),
	.dport = __builtin_bswap16(53),
	.src = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
	.dst = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0xab, [15] = 0xcd },
};

static const struct fs_hash_secret pin_secret_a = {
	0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL,
};
static const struct fs_hash_secret pin_secret_b = {
	0x0123456789abcdefULL, 0xfedcba9876543210ULL,
};

/*
 * fs_packet_hash() outputs under the key derived from a pinned secret,
 * computed with ref_hash.h and pinned, so that any change to the key
 * derivation, the key layout or the hash (which would silently make old
 * exports unmergeable) fails here.
 */
static const struct pinned_vector {
	const char *name;
	const struct fs_hash_secret *secret;
	const struct fs_flow_key *key;
	struct ref_hashes want;
} pinned[] = {
	{ "zero key, secret a", &pin_secret_a, &pinned_zero_key,
	  { 0xd0631f6952e3a6dcULL, 0x9e43c16fe7b029caULL,
	    0x387d5c91c746615dULL } },
	{ "tcp4, secret a", &pin_secret_a, &pinned_tcp_key,
	  { 0xd3d551583269125dULL, 0x0586ae082b12da65ULL,
	    0x7ab73ae5f7d6a02aULL } },
	{ "tcp4, secret b", &pin_secret_b, &pinned_tcp_key,
	  { 0xcec0de63db090908ULL, 0x994c50144cf8de13ULL,
	    0x6e29e3bc62876b24ULL } },
	{ "udp6, secret b", &pin_secret_b, &pinned_udp6_key,
	  { 0x074ec7e0cd4bd742ULL, 0x527f1a6a8d990e26ULL,
	    0x451ffedebed05020ULL } },
};

static void check_hashes(const char *what, const struct fs_packet_hashes *got,
			 const struct ref_hashes *want)
{
	if (got->flow != want->flow || got->src != want->src ||
	    got->dst != want->dst)
		fail_msg("%s: flow/src/dst 0x%016llx 0x%016llx 0x%016llx, want 0x%016llx 0x%016llx 0x%016llx",
			 what, (unsigned long long)got->flow,
			 (unsigned long long)got->src,
			 (unsigned long long)got->dst,
			 (unsigned long long)want->flow,
			 (unsigned long long)want->src,
			 (unsigned long long)want->dst);
}

static void test_packet_hash_pinned_vectors(void **state)
{
	const struct pinned_vector *v = pinned;
	unsigned int i;

	for (i = 0; i < FS_ARRAY_SIZE(pinned); i++) {
		struct fs_hash_key key, ref_key;
		struct fs_packet_hashes got;
		struct ref_hashes ref;
		char what[64];

		fs_hash_key_derive(v[i].secret, &key);
		ref_hash_key_derive(v[i].secret, &ref_key);
		assert_memory_equal(key.a, ref_key.a, sizeof(key.a));
		fs_packet_hash(v[i].key, &key, &got);
		ref = ref_packet_hash(v[i].key, &ref_key);
		snprintf(what, sizeof(what), "%s, against the reference",
			 v[i].name);
		check_hashes(what, &got, &ref);
		snprintf(what, sizeof(what), "%s, against the pin", v[i].name);
		check_hashes(what, &got, &v[i].want);
		assert_int_equal(fs_flow_hash(v[i].key, &key), v[i].want.flow);
	}
}

static void test_packet_hash_random_vs_reference(void **state)
{
	struct fs_hash_secret s;
	struct fs_hash_key key, ref_key;
	struct fs_packet_hashes got;
	struct ref_hashes ref;
	struct fs_flow_key fk;
	int i;

	for (i = 0; i < 10000; i++) {
		s.k0 = rng_next(&rng_state);
		s.k1 = rng_next(&rng_state);
		fs_hash_key_derive(&s, &key);
		ref_hash_key_derive(&s, &ref_key);
		assert_memory_equal(key.a, ref_key.a, sizeof(key.a));
		/* Half the runs under a raw random key: every key word,
		 * whatever its value, enters the hash as the formula says. */
		if (i & 1)
			rng_hash_key(&key);
		rng_flow_key(&fk, i);
		fs_packet_hash(&fk, &key, &got);
		ref = ref_packet_hash(&fk, &key);
		check_hashes("random key", &got, &ref);
	}
}

/* --- 2. BPF build against user-space build ------------------------------ */

static struct test_hash *load_with_key(const struct fs_hash_key *k)
{
	struct test_hash *skel = test_hash__open();

	if (!skel)
		return NULL;
	skel->rodata->fs_test_key = *k;
	if (test_hash__load(skel)) {
		test_hash__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Run the program on a flow key; the three hashes come back over it. */
static void bpf_hash(struct test_hash *skel, const struct fs_flow_key *key,
		     struct fs_packet_hashes *h)
{
	__u8 in[64] = { 0 }, out[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = in,
		.data_size_in = sizeof(*key),
		.data_out = out,
		.data_size_out = sizeof(out),
		.repeat = 1,
	);
	int err;

	memcpy(in, key, sizeof(*key));
	err = bpf_prog_test_run_opts(
		bpf_program__fd(skel->progs.fs_test_packet_hash), &opts);
	assert_int_equal(err, 0);
	assert_int_equal(opts.retval, 2 /* XDP_PASS */);
	assert_int_equal(opts.data_size_out, sizeof(*key));
	memcpy(h, out, sizeof(*h));
}

static void check_bpf_against_user(const struct fs_hash_key *k, int nkeys)
{
	struct test_hash *skel = load_with_key(k);
	struct fs_packet_hashes bpf, user;
	struct ref_hashes want;
	struct fs_flow_key fk;
	int i;

	if (!skel)
		fail_msg("cannot load bpf/test_hash.bpf.c: %s", strerror(errno));
	for (i = 0; i < nkeys; i++) {
		rng_flow_key(&fk, i);
		bpf_hash(skel, &fk, &bpf);
		fs_packet_hash(&fk, k, &user);
		want = ref_packet_hash(&fk, k);
		check_hashes("BPF against the reference", &bpf, &want);
		want = (struct ref_hashes){ user.flow, user.src, user.dst };
		check_hashes("BPF against user space", &bpf, &want);
	}
	test_hash__destroy(skel);
}

static void test_bpf_hash_pinned(void **state)
{
	const struct pinned_vector *v = pinned;
	unsigned int i;

	for (i = 0; i < FS_ARRAY_SIZE(pinned); i++) {
		struct fs_packet_hashes got;
		struct test_hash *skel;
		struct fs_hash_key key;
		char what[64];

		fs_hash_key_derive(v[i].secret, &key);
		skel = load_with_key(&key);
		if (!skel)
			fail_msg("cannot load bpf/test_hash.bpf.c: %s",
				 strerror(errno));
		bpf_hash(skel, v[i].key, &got);
		snprintf(what, sizeof(what), "BPF, %s", v[i].name);
		check_hashes(what, &got, &v[i].want);
		test_hash__destroy(skel);
	}
}

static void test_bpf_hash_random(void **state)
{
	struct fs_hash_secret s;
	struct fs_hash_key k;
	int i;

	/* The zero and all-ones keys, then keys derived from random
	 * secrets, then raw random keys. */
	memset(&k, 0, sizeof(k));
	fs_hash_key_ipv4_terms(&k);
	check_bpf_against_user(&k, 64);
	memset(&k, 0xff, sizeof(k));
	fs_hash_key_ipv4_terms(&k);
	check_bpf_against_user(&k, 64);
	for (i = 0; i < 16; i++) {
		s.k0 = rng_next(&rng_state);
		s.k1 = rng_next(&rng_state);
		fs_hash_key_derive(&s, &k);
		check_bpf_against_user(&k, 256);
	}
	for (i = 0; i < 16; i++) {
		rng_hash_key(&k);
		check_bpf_against_user(&k, 256);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packet_hash_pinned_vectors),
		cmocka_unit_test(test_packet_hash_random_vs_reference),
		cmocka_unit_test(test_bpf_hash_pinned),
		cmocka_unit_test(test_bpf_hash_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
