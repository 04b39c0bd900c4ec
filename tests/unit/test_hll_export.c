// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_hll_export.c - Redis and postgresql-hll register packing.
 *
 * Layout checks are written from the formats' own documentation (Redis's
 * hyperloglog.c register diagram, postgresql-hll's STORAGE.markdown FULL
 * example), round trips cover every register position, and the unpacked
 * registers must estimate the same cardinality.  Neither engine is needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "hll_export.h"
#include "hll_estimate.h"
#include "flowsketch/hash.h"
#include "flowsketch/hll.h"
#include "ref_hll.h"
#include "rng.h"

/* Registers of n distinct flows (IPv6 sources 2001:db8::i, i < 2^32)
 * hashed as the datapath hashes them, placed by the register definition
 * (ref_hll.h), not by hll.h's fs_hll_index/fs_hll_rank. */
static void fill_registers(__u8 *regs, __u32 p, __u64 n)
{
	const struct fs_hash_secret s = { 0x1234, 0x5678 };
	struct fs_flow_key k = {
		.family = FS_FAMILY_IPV6,
		.proto = 17,
		.src = { 0x20, 0x01, 0x0d, 0xb8 },
		.dst = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
	};
	struct fs_hash_key key;
	__u32 addr;
	__u64 i, h;

	fs_hash_key_derive(&s, &key);
	memset(regs, 0, 1U << p);
	for (i = 0; i < n; i++) {
		addr = htonl((__u32)i);
		memcpy(&k.src[12], &addr, sizeof(addr));
		h = fs_flow_hash(&k, &key);
		ref_hll_insert(regs, p, h);
	}
}

static void test_redis_layout(void **state)
{
	__u8 regs[1U << FS_REDIS_HLL_P] = { 0 };
	__u8 *out = malloc(FS_REDIS_HLL_BYTES);
	const __u8 *d = out + FS_REDIS_HLL_HDR;

	assert_non_null(out);
	assert_int_equal(FS_REDIS_HLL_BYTES, 12304);
	/* Redis's diagram: byte 0 = 11000000 (register 0 in the low six
	 * bits, register 1's low two bits on top), byte 1 = 22221111. */
	regs[0] = 1;
	regs[1] = 0x3f;
	regs[2] = 0x2a;		/* 101010: low 4 bits 1010 in byte 1's top */
	regs[16383] = 51;	/* the last register ends the blob exactly */
	assert_int_equal(fs_hll_export_redis(regs, 14, out, FS_REDIS_HLL_BYTES), 0);
	assert_memory_equal(out, "HYLL", 4);
	assert_int_equal(out[4], 0);			/* dense */
	assert_int_equal(out[5] | out[6] | out[7], 0);
	assert_int_equal(out[8] | out[9] | out[10] | out[11] | out[12] |
			 out[13] | out[14], 0);
	assert_int_equal(out[15], 0x80);		/* cached card stale */
	assert_int_equal(d[0], 0xc1);			/* 11 000001 */
	assert_int_equal(d[1], 0xaf);			/* 1010 1111 */
	assert_int_equal(d[2], 0x02);			/* 000000 10 */
	/* Register 16383 = bits 98298..98303 = top six bits of the last
	 * byte: 51 << 2. */
	assert_int_equal(d[12287], 51 << 2);
	free(out);
}

static void test_pg_layout(void **state)
{
	__u8 regs[16] = { 0, 1, 2, 3 };
	__u8 out[64];
	size_t len = fs_hll_pg_bytes(4);

	/* 16 registers of 5 bits = 80 bits = 10 bytes, plus 3 of header. */
	assert_int_equal(len, 13);
	assert_int_equal(fs_hll_export_pg(regs, 4, out, sizeof(out)), 0);
	assert_int_equal(out[0], 0x14);			/* v1, FULL */
	assert_int_equal(out[1], (4 << 5) | 4);		/* regwidth 5, log2m 4 */
	assert_int_equal(out[2], 0x7f);			/* sparse, auto cutoff */
	/* STORAGE.markdown's FULL example: registers 0, 1, 2, 3 of
	 * width 5 are the bytes 0x00 0x44 0x30. */
	assert_int_equal(out[3], 0x00);
	assert_int_equal(out[4], 0x44);
	assert_int_equal(out[5], 0x30);

	/* p = 14: 16384 * 5 / 8 = 10240 data bytes; 17 is the largest. */
	assert_int_equal(fs_hll_pg_bytes(14), 3 + 10240);
	assert_int_equal(fs_hll_pg_bytes(17), 3 + (5U << 17) / 8);
}

static void test_redis_round_trip(void **state)
{
	const __u32 m = 1U << FS_REDIS_HLL_P;
	__u8 *regs = malloc(m), *back = malloc(m);
	__u8 *blob = malloc(FS_REDIS_HLL_BYTES);
	__u64 rng = 99;
	__u32 i;

	assert_non_null(regs);
	assert_non_null(back);
	assert_non_null(blob);
	/* Every value 0..63 at every bit alignment. */
	for (i = 0; i < m; i++)
		regs[i] = (__u8)(rng_next(&rng) % 64);
	assert_int_equal(fs_hll_export_redis(regs, 14, blob, FS_REDIS_HLL_BYTES), 0);
	assert_int_equal(fs_hll_import_redis(blob, FS_REDIS_HLL_BYTES, back), 0);
	assert_memory_equal(regs, back, m);

	/* Real registers: same estimate after the trip. */
	fill_registers(regs, 14, 200000);
	assert_int_equal(fs_hll_export_redis(regs, 14, blob, FS_REDIS_HLL_BYTES), 0);
	assert_int_equal(fs_hll_import_redis(blob, FS_REDIS_HLL_BYTES, back), 0);
	assert_true(fs_hll_estimate(back, 14) == fs_hll_estimate(regs, 14));

	/* Refusals: wrong precision, a value that does not fit, a short
	 * buffer, a blob that is not dense HYLL. */
	assert_int_equal(fs_hll_export_redis(regs, 12, blob, FS_REDIS_HLL_BYTES), -EINVAL);
	assert_int_equal(fs_hll_export_redis(regs, 14, blob, FS_REDIS_HLL_BYTES - 1), -ENOSPC);
	regs[5] = 64;
	assert_int_equal(fs_hll_export_redis(regs, 14, blob, FS_REDIS_HLL_BYTES), -EINVAL);
	blob[4] = 1;	/* sparse encoding */
	assert_int_equal(fs_hll_import_redis(blob, FS_REDIS_HLL_BYTES, back), -EINVAL);
	assert_int_equal(fs_hll_import_redis(blob, 100, back), -EINVAL);
	free(regs);
	free(back);
	free(blob);
}

static void test_pg_round_trip(void **state)
{
	const __u32 max_m = 1U << FS_PG_HLL_MAX_LOG2M;
	__u8 *regs = malloc(max_m), *back = malloc(max_m);
	__u8 *blob = malloc(fs_hll_pg_bytes(FS_PG_HLL_MAX_LOG2M));
	__u64 rng = 7;
	__u32 p, i, got_p;

	assert_non_null(regs);
	assert_non_null(back);
	assert_non_null(blob);
	for (p = FS_PG_HLL_MIN_LOG2M; p <= FS_PG_HLL_MAX_LOG2M; p++) {
		size_t len = fs_hll_pg_bytes(p);

		for (i = 0; i < (1U << p); i++)
			regs[i] = (__u8)(rng_next(&rng) % 32);
		assert_int_equal(fs_hll_export_pg(regs, p, blob, len), 0);
		assert_int_equal(fs_hll_import_pg(blob, len, back, &got_p), 0);
		assert_int_equal(got_p, p);
		assert_memory_equal(regs, back, 1U << p);
	}

	/* Ranks above 31 are capped, nothing else changes. */
	memset(regs, 0, 1U << 10);
	regs[0] = 32;
	regs[1] = 54;
	regs[2] = 31;
	regs[3] = 9;
	assert_int_equal(fs_hll_export_pg(regs, 10, blob, fs_hll_pg_bytes(10)), 0);
	assert_int_equal(fs_hll_import_pg(blob, fs_hll_pg_bytes(10), back, &got_p), 0);
	assert_int_equal(back[0], 31);
	assert_int_equal(back[1], 31);
	assert_int_equal(back[2], 31);
	assert_int_equal(back[3], 9);

	/* Real registers at p = 14: a rank above 31 has probability 2^-31
	 * per key, so 200000 keys give the same registers and estimate. */
	fill_registers(regs, 14, 200000);
	assert_int_equal(fs_hll_export_pg(regs, 14, blob, fs_hll_pg_bytes(14)), 0);
	assert_int_equal(fs_hll_import_pg(blob, fs_hll_pg_bytes(14), back, &got_p), 0);
	assert_memory_equal(regs, back, 1U << 14);

	assert_int_equal(fs_hll_export_pg(regs, 3, blob, 1000), -EINVAL);
	assert_int_equal(fs_hll_export_pg(regs, 18, blob, fs_hll_pg_bytes(17)), -EINVAL);
	assert_int_equal(fs_hll_export_pg(regs, 14, blob, fs_hll_pg_bytes(14) - 1), -ENOSPC);
	blob[0] = 0x13;	/* SPARSE */
	assert_int_equal(fs_hll_import_pg(blob, fs_hll_pg_bytes(14), back, &got_p), -EINVAL);
	free(regs);
	free(back);
	free(blob);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redis_layout),
		cmocka_unit_test(test_pg_layout),
		cmocka_unit_test(test_redis_round_trip),
		cmocka_unit_test(test_pg_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
