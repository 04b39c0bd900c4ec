// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_topk.c - the daemon's top-n heap against a full sort.
 *
 * The oracle sorts every candidate with its own comparator (written here,
 * not taken from topk.c) and keeps the first n; the heap must return
 * exactly those flows in exactly that order.  Counts are drawn from a
 * small range so that ties on the sort metric, and on both metrics, are
 * frequent: the deterministic tie-break is part of what is tested.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "windows/topk.h"

static enum fsd_sort oracle_sort;

/* qsort order: higher metric first, then higher other metric, then lower key. */
static int oracle_cmp(const void *pa, const void *pb)
{
	const struct fsd_flow_count *a = pa, *b = pb;
	__u64 am = oracle_sort == FSD_SORT_BYTES ? a->bytes : a->packets;
	__u64 bm = oracle_sort == FSD_SORT_BYTES ? b->bytes : b->packets;
	__u64 ao = oracle_sort == FSD_SORT_BYTES ? a->packets : a->bytes;
	__u64 bo = oracle_sort == FSD_SORT_BYTES ? b->packets : b->bytes;

	if (am != bm)
		return am > bm ? -1 : 1;
	if (ao != bo)
		return ao > bo ? -1 : 1;
	return memcmp(&a->key, &b->key, sizeof(a->key));
}

/* Distinct keys: the index in the source address, random elsewhere. */
static void random_flows(struct fsd_flow_count *f, size_t count,
			 unsigned int max_count)
{
	size_t i;

	memset(f, 0, count * sizeof(*f));
	for (i = 0; i < count; i++) {
		f[i].key.family = FS_FAMILY_IPV4;
		f[i].key.proto = 6;
		f[i].key.src[0] = 10;
		f[i].key.src[1] = (__u8)(i >> 16);
		f[i].key.src[2] = (__u8)(i >> 8);
		f[i].key.src[3] = (__u8)i;
		f[i].key.dport = (__be16)(rand() & 0xffff);
		f[i].hash = ((__u64)rand() << 32) | (__u64)rand();
		f[i].packets = (__u64)(rand() % max_count);
		f[i].bytes = f[i].packets * 64 + (__u64)(rand() % 3) * 100;
	}
}

static void check_top(const struct fsd_flow_count *flows, size_t count,
		      size_t n, enum fsd_sort sort)
{
	struct fsd_flow_count *sorted = malloc(count * sizeof(*sorted));
	size_t expect = n < count ? n : count, got, i;
	struct fsd_topk t;

	assert_non_null(sorted);
	memcpy(sorted, flows, count * sizeof(*sorted));
	oracle_sort = sort;
	qsort(sorted, count, sizeof(*sorted), oracle_cmp);

	assert_int_equal(fsd_topk_init(&t, n, sort), 0);
	for (i = 0; i < count; i++)
		fsd_topk_offer(&t, &flows[i]);
	got = fsd_topk_finish(&t);
	assert_int_equal(got, expect);
	for (i = 0; i < expect; i++) {
		assert_memory_equal(&t.heap[i].key, &sorted[i].key,
				    sizeof(sorted[i].key));
		assert_int_equal(t.heap[i].packets, sorted[i].packets);
		assert_int_equal(t.heap[i].bytes, sorted[i].bytes);
	}
	fsd_topk_free(&t);
	free(sorted);
}

static void test_random_with_ties(void **state)
{
	struct fsd_flow_count flows[2000];
	size_t sizes[] = { 1, 2, 7, 10, 100, 1999 };
	int round;
	size_t i;

	srand(1);
	for (round = 0; round < 20; round++) {
		/* Few distinct counts: many ties at the cut. */
		random_flows(flows, FS_ARRAY_SIZE(flows), round % 2 ? 5 : 1000);
		for (i = 0; i < FS_ARRAY_SIZE(sizes); i++) {
			check_top(flows, FS_ARRAY_SIZE(flows), sizes[i],
				  FSD_SORT_PACKETS);
			check_top(flows, FS_ARRAY_SIZE(flows), sizes[i],
				  FSD_SORT_BYTES);
		}
	}
}

static void test_all_equal(void **state)
{
	struct fsd_flow_count flows[300];
	size_t i;

	random_flows(flows, FS_ARRAY_SIZE(flows), 1);
	for (i = 0; i < FS_ARRAY_SIZE(flows); i++) {
		flows[i].packets = 7;
		flows[i].bytes = 700;
	}
	check_top(flows, FS_ARRAY_SIZE(flows), 10, FSD_SORT_PACKETS);
}

static void test_n_larger_than_candidates(void **state)
{
	struct fsd_flow_count flows[5];

	srand(2);
	random_flows(flows, FS_ARRAY_SIZE(flows), 50);
	check_top(flows, FS_ARRAY_SIZE(flows), 100, FSD_SORT_PACKETS);
	check_top(flows, FS_ARRAY_SIZE(flows), 6, FSD_SORT_BYTES);
	check_top(flows, 0, 3, FSD_SORT_BYTES);
}

static void test_order_independent(void **state)
{
	struct fsd_flow_count flows[500], reversed[500];
	struct fsd_topk a, b;
	size_t i;

	srand(3);
	random_flows(flows, FS_ARRAY_SIZE(flows), 4);
	for (i = 0; i < FS_ARRAY_SIZE(flows); i++)
		reversed[i] = flows[FS_ARRAY_SIZE(flows) - 1 - i];
	assert_int_equal(fsd_topk_init(&a, 20, FSD_SORT_PACKETS), 0);
	assert_int_equal(fsd_topk_init(&b, 20, FSD_SORT_PACKETS), 0);
	for (i = 0; i < FS_ARRAY_SIZE(flows); i++) {
		fsd_topk_offer(&a, &flows[i]);
		fsd_topk_offer(&b, &reversed[i]);
	}
	assert_int_equal(fsd_topk_finish(&a), 20);
	assert_int_equal(fsd_topk_finish(&b), 20);
	assert_memory_equal(a.heap, b.heap, 20 * sizeof(*a.heap));
	fsd_topk_free(&a);
	fsd_topk_free(&b);
}

static void test_zero_n_refused(void **state)
{
	struct fsd_topk t;

	assert_int_equal(fsd_topk_init(&t, 0, FSD_SORT_PACKETS), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_with_ties),
		cmocka_unit_test(test_all_equal),
		cmocka_unit_test(test_n_larger_than_candidates),
		cmocka_unit_test(test_order_independent),
		cmocka_unit_test(test_zero_n_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
