// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_basicauth.c - /metrics' password checks (basicauth.h): right and
 * wrong, the cache of pairs, and bcrypt's time budget.
 *
 * The hashes are published bcrypt test vectors (crypt_blowfish's, cost
 * 5), checked here against another implementation too (APR's, with
 * `htpasswd -vb`): "U*U" and "U*U*".  Whether bcrypt ran is read from
 * the counters basicauth.h keeps for -v; the budget is set by hand, so
 * that nothing waits on the clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "service/basicauth.h"
#include "service/webconfig.h"

#define HASH_UU "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
#define HASH_UUU "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK"

#define NUSERS (FSD_AUTH_GOOD + 1)
static char names[NUSERS][16];
static struct fsd_webuser users[NUSERS];
static struct fsd_basicauth a;

/* alice: "U*U"; bob: "U*U*"; u2 .. u16: "U*U", for the cache's LRU. */
static int setup(void **state)
{
	size_t i;

	for (i = 0; i < NUSERS; i++) {
		snprintf(names[i], sizeof(names[i]), i == 0 ? "alice" :
			 i == 1 ? "bob" : "u%zu", i);
		users[i].name = names[i];
		strcpy(users[i].hash, i == 1 ? HASH_UUU : HASH_UU);
	}
	return fsd_basicauth_init(&a, users, NUSERS);
}

static int teardown(void **state)
{
	fsd_basicauth_free(&a);
	return 0;
}

static void right_and_wrong(void **state)
{
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
	assert_int_equal(fsd_basicauth_check(&a, "bob", "U*U*"), FSD_AUTH_OK);
	/* Each other's password, a prefix, an extension, nothing. */
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U*"), FSD_AUTH_DENIED);
	assert_int_equal(fsd_basicauth_check(&a, "bob", "U*U"), FSD_AUTH_DENIED);
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*"), FSD_AUTH_DENIED);
	assert_int_equal(fsd_basicauth_check(&a, "alice", ""), FSD_AUTH_DENIED);
	/* Names: unknown, a prefix, longer, another case. */
	assert_int_equal(fsd_basicauth_check(&a, "mallory", "U*U"), FSD_AUTH_DENIED);
	assert_int_equal(fsd_basicauth_check(&a, "alic", "U*U"), FSD_AUTH_DENIED);
	assert_int_equal(fsd_basicauth_check(&a, "alicee", "U*U"), FSD_AUTH_DENIED);
	assert_int_equal(fsd_basicauth_check(&a, "Alice", "U*U"), FSD_AUTH_DENIED);
	assert_int_equal(fsd_basicauth_check(&a, "", "U*U"), FSD_AUTH_DENIED);
	/* An unknown name costs a bcrypt too (its timing tells nothing). */
	assert_int_equal(a.bcrypt_runs, 11);
}

/* A pair, right or wrong, pays bcrypt once; repeats are cache hits. */
static void cache(void **state)
{
	int i;

	for (i = 0; i < 5; i++) {
		assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
		assert_int_equal(fsd_basicauth_check(&a, "alice", "nope"), FSD_AUTH_DENIED);
	}
	assert_int_equal(a.bcrypt_runs, 2);
	assert_int_equal(a.cache_hits, 8);
	/* A cached right pair does not let another password of that user in. */
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U "), FSD_AUTH_DENIED);
	assert_int_equal(a.bcrypt_runs, 3);
}

/* FSD_AUTH_GOOD right pairs are kept; one more evicts the least
 * recently used, not a recent one. */
static void cache_lru(void **state)
{
	size_t i;

	for (i = 2; i < NUSERS; i++)	/* u2 .. u16: 15 pairs */
		assert_int_equal(fsd_basicauth_check(&a, names[i], "U*U"), FSD_AUTH_OK);
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
	assert_int_equal(a.bcrypt_runs, NUSERS - 1);	/* 16: the cache is full */
	assert_int_equal(fsd_basicauth_check(&a, names[2], "U*U"), FSD_AUTH_OK);
	assert_int_equal(a.bcrypt_runs, NUSERS - 1);	/* u2 a hit, now recent */
	/* bob: a 17th pair; the oldest unused since, u3, makes room. */
	assert_int_equal(fsd_basicauth_check(&a, "bob", "U*U*"), FSD_AUTH_OK);
	assert_int_equal(a.bcrypt_runs, NUSERS);
	assert_int_equal(fsd_basicauth_check(&a, names[2], "U*U"), FSD_AUTH_OK);
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
	assert_int_equal(a.bcrypt_runs, NUSERS);
	assert_int_equal(fsd_basicauth_check(&a, names[3], "U*U"), FSD_AUTH_OK);
	assert_int_equal(a.bcrypt_runs, NUSERS + 1);
}

/* Wrong pairs never evict right ones: a flood of them leaves a
 * scraper's pair cached. */
static void failures_keep_good(void **state)
{
	char pw[32];
	int i;

	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
	for (i = 0; i < FSD_AUTH_BAD + FSD_AUTH_GOOD + 8; i++) {
		snprintf(pw, sizeof(pw), "guess%d", i);
		a.budget_ns = 1000000000;	/* never 429 here */
		assert_int_equal(fsd_basicauth_check(&a, "alice", pw), FSD_AUTH_DENIED);
	}
	i = (int)a.bcrypt_runs;
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
	assert_int_equal(a.bcrypt_runs, i);
}

/* A spent budget: new pairs are 429 without bcrypt, cached ones pass;
 * time refills it at FSD_AUTH_SHARE_PCT. */
static void budget(void **state)
{
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
	assert_int_equal(fsd_basicauth_check(&a, "alice", "wrong"), FSD_AUTH_DENIED);
	/* Overspent by 1 s (a check may overrun the budget by its own
	 * length): the ms since the last refill give back too little. */
	a.budget_ns = -1000000000LL;
	assert_int_equal(fsd_basicauth_check(&a, "bob", "U*U*"), FSD_AUTH_BUSY);
	assert_int_equal(fsd_basicauth_check(&a, "alice", "other"), FSD_AUTH_BUSY);
	assert_int_equal(a.bcrypt_runs, 2);
	assert_int_equal(a.busy, 2);
	/* Remembered pairs still answer, right and wrong. */
	assert_int_equal(fsd_basicauth_check(&a, "alice", "U*U"), FSD_AUTH_OK);
	assert_int_equal(fsd_basicauth_check(&a, "alice", "wrong"), FSD_AUTH_DENIED);
	/* 1 s ago at a 10 % share: 100 ms of bcrypt, enough for one. */
	a.budget_ns = 0;
	a.refilled_ns -= 1000000000ULL;
	assert_int_equal(fsd_basicauth_check(&a, "bob", "U*U*"), FSD_AUTH_OK);
	assert_int_equal(a.bcrypt_runs, 3);
	/* A long idle time refills the burst, no more. */
	a.refilled_ns -= 3600ULL * 1000000000ULL;
	assert_int_equal(fsd_basicauth_check(&a, "alice", "again"), FSD_AUTH_DENIED);
	assert_true(a.budget_ns <= (int64_t)FSD_AUTH_BURST_MS * 1000000);
	assert_true(a.budget_ns > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(right_and_wrong, setup, teardown),
		cmocka_unit_test_setup_teardown(cache, setup, teardown),
		cmocka_unit_test_setup_teardown(cache_lru, setup, teardown),
		cmocka_unit_test_setup_teardown(failures_keep_good, setup, teardown),
		cmocka_unit_test_setup_teardown(budget, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
