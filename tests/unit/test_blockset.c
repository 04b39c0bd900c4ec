// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_blockset.c - the blocklist's merges (user/flowsketchd/blocklist/blockset.h)
 * at a million entries: right, and in linear time.
 *
 * Oracle: membership by the entry's own construction (entry i is host i
 * of 100.64.0.0/10; which ones are added or dropped follows from i), not
 * by the merge under test.  The time bound: a million entries merged or
 * taken out in one pass take milliseconds; the bound (2 s of CPU for all
 * of it) is far above that and far below what one linear search per
 * entry (10^12 steps for a clear) would take.
 *
 * The summary a list needs (what the daemon narrows the live one to after
 * a delete) and the keys it puts into the filter, on random lists, against
 * bloom.h's rule applied here entry by entry: an entry of length L <= 16
 * sets bit 0 of every /16 it covers, a longer one bit (L - 13) / 4 of its
 * own /16, and 2^(16 + 4 * that - L) filter keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "blocklist/blockset.h"

#define N 1000000U

static struct fs_cidr host(unsigned int i)
{
	struct fs_cidr c = { .family = FS_FAMILY_IPV4, .len = 32 };

	c.addr[0] = 100;
	c.addr[1] = (__u8)(64 + (i >> 16));
	c.addr[2] = (__u8)(i >> 8);
	c.addr[3] = (__u8)i;
	return c;
}

/* The list: the even hosts of 0 .. 2N, id i + 1 for host 2i. */
static struct fsd_block_entry *even_list(void)
{
	struct fsd_block_entry *e = malloc(N * sizeof(*e));
	unsigned int i;

	assert_non_null(e);
	for (i = 0; i < N; i++) {
		e[i].c = host(2 * i);
		e[i].id = i + 1;
	}
	return e;
}

static void test_merge(void **state)
{
	struct fsd_block_entry *e = even_list(), *out = malloc(2 * N * sizeof(*out));
	struct fs_cidr *add = malloc(N * sizeof(*add));
	clock_t t0;
	size_t n, i;

	(void)state;
	assert_non_null(out);
	assert_non_null(add);
	for (i = 0; i < N; i++)
		add[i] = host(2 * (unsigned int)i + 1);	/* every odd host */
	t0 = clock();
	n = fsd_blockset_merge(e, N, add, N, out);
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
	assert_int_equal(n, 2 * N);
	for (i = 0; i < n; i++) {
		struct fs_cidr want = host((unsigned int)i);

		assert_int_equal(fs_cidr_cmp(&out[i].c, &want), 0);
		/* old entries keep their ids, new ones have none yet */
		assert_int_equal(out[i].id, i % 2 ? 0 : i / 2 + 1);
	}
	/* nothing to add, or nothing listed */
	assert_int_equal(fsd_blockset_merge(e, N, add, 0, out), N);
	assert_memory_equal(out, e, N * sizeof(*e));
	assert_int_equal(fsd_blockset_merge(NULL, 0, add, 3, out), 3);
	assert_int_equal(fs_cidr_cmp(&out[2].c, &add[2]), 0);
	free(e);
	free(out);
	free(add);
}

static void test_minus(void **state)
{
	struct fsd_block_entry *e = even_list(), *out = malloc(N * sizeof(*out));
	struct fs_cidr *drop = malloc(N * sizeof(*drop));
	__u32 *ids = malloc(N * sizeof(*ids));
	size_t n, ngone, i, d;
	clock_t t0;

	(void)state;
	assert_non_null(out);
	assert_non_null(drop);
	assert_non_null(ids);
	/* clear: every entry */
	for (i = 0; i < N; i++)
		drop[i] = e[i].c;
	t0 = clock();
	n = fsd_blockset_minus(e, N, drop, N, out, ids, &ngone);
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
	assert_int_equal(n, 0);
	assert_int_equal(ngone, N);
	for (i = 0; i < N; i++)
		assert_int_equal(ids[i], i + 1);
	/* every third entry, and hosts never listed (odd ones) skipped */
	for (i = 0, d = 0; i < N; i += 3) {
		drop[d++] = host(2 * (unsigned int)i);
		drop[d++] = host(2 * (unsigned int)i + 1);
	}
	n = fsd_blockset_minus(e, N, drop, d, out, ids, &ngone);
	assert_int_equal(ngone, (N + 2) / 3);
	assert_int_equal(n, N - ngone);
	for (i = 0; i < ngone; i++)
		assert_int_equal(ids[i], 3 * i + 1);
	for (i = 0; i < n; i++) {
		size_t k = i / 2 * 3 + 1 + i % 2;	/* the i-th kept: 1, 2, 4, 5, ... */

		assert_int_equal(out[i].id, k + 1);
		assert_int_equal(fs_cidr_cmp(&out[i].c, &e[k].c), 0);
	}
	free(e);
	free(out);
	free(drop);
	free(ids);
}

static __u64 rnd(__u64 *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s ^ (*s >> 31);
}

/* The summary and keys e[0..n) need, by the rule entry by entry. */
static __u64 rule_summary(const struct fsd_block_entry *e, unsigned int n,
			  struct fs_block_summary *w)
{
	__u64 keys = 0;
	unsigned int i, j;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < n; i++) {
		const struct fs_cidr *c = &e[i].c;
		unsigned int first = ((unsigned int)c->addr[0] << 8) | c->addr[1], g;

		if (c->len <= 16) {	/* every /16 it covers: bit 0 */
			for (j = 0; j < 1U << (16 - c->len); j++) {
				if (c->family == FS_FAMILY_IPV4)
					w->v4[first + j] |= 1;
				else
					w->v6[first + j] |= 1;
			}
			continue;
		}
		g = (c->len - 13U) / 4;
		keys += 1ULL << (16 + 4 * g - c->len);
		if (c->family == FS_FAMILY_IPV4)
			w->v4[first] |= (__u8)(1U << g);
		else
			w->v6[first] |= 1U << g;
	}
	return keys;
}

static void test_summary_and_keys(void **state)
{
	static struct fs_block_summary got, want;
	static struct fsd_block_entry e[3000];
	static const unsigned int sizes[] = { 3000, 1500, 1 };
	__u64 s = 5, keys;
	unsigned int i, b;

	for (i = 0; i < 3000; i++) {
		struct fs_cidr *c = &e[i].c;
		unsigned int max, len;

		memset(c, 0, sizeof(*c));
		c->family = rnd(&s) & 1 ? FS_FAMILY_IPV4 : FS_FAMILY_IPV6;
		max = c->family == FS_FAMILY_IPV4 ? 32 : 128;
		/* one in four /0../16, the rest longer */
		len = rnd(&s) % 4 ? 17 + (unsigned int)(rnd(&s) % (max - 16)) :
				    (unsigned int)(rnd(&s) % 17);
		for (b = 0; b < max / 8; b++)
			c->addr[b] = (__u8)rnd(&s);
		for (b = len; b < 128; b++)
			c->addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
		c->len = (__u8)len;
	}
	/* The whole list, then the summary it is narrowed to as entries go. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		keys = rule_summary(e, sizes[i], &want);
		memset(&got, 0, sizeof(got));
		fsd_blockset_summary(e, sizes[i], &got);
		assert_memory_equal(&got, &want, sizeof(got));
		assert_int_equal(fsd_blockset_filter_keys(e, sizes[i]), keys);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_minus),
		cmocka_unit_test(test_summary_and_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
