// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_blockpace.c - a long blocklist change keeps off the window
 * boundary (user/flowsketchd/blocklist/blockpace.h).
 *
 * Oracle: the rules as the issue and the header state them, in this
 * file's own numbers: no trie change from 100 ms before the loop's next
 * boundary until 5 ms past it; a 1 ms pause after every 4096 deletes and
 * never for inserts; nothing else waits.  The live case checks only what
 * a sleep guarantees (it never returns early), so a loaded machine cannot
 * fail it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>
#include "blocklist/blockpace.h"

#define MS 1000000ULL
#define QUIET (100 * MS)
#define AFTER (5 * MS)
#define BURST 4096
#define T0 (1000000 * MS)	/* any instant */

static void no_boundary_no_pause(void **state)
{
	size_t i;

	(void)state;
	for (i = 1; i < 3 * BURST; i++)
		if (i % BURST)
			assert_int_equal(fsd_block_pause_ns(T0, 0, i, true), 0);
	assert_int_equal(fsd_block_pause_ns(T0, 0, 0, true), 0);
}

static void burst_pauses_deletes_only(void **state)
{
	(void)state;
	assert_int_equal(fsd_block_pause_ns(T0, 0, BURST, true), 1 * MS);
	assert_int_equal(fsd_block_pause_ns(T0, 0, 7 * BURST, true), 1 * MS);
	assert_int_equal(fsd_block_pause_ns(T0, 0, BURST - 1, true), 0);
	assert_int_equal(fsd_block_pause_ns(T0, 0, BURST + 1, true), 0);
	assert_int_equal(fsd_block_pause_ns(T0, 0, BURST, false), 0);
	/* far from the boundary, the burst alone */
	assert_int_equal(fsd_block_pause_ns(T0, T0 + QUIET + 1, BURST, true), 1 * MS);
}

/* In the quiet before a boundary, wait until AFTER past it; the burst's
 * pause, shorter, is part of that wait. */
static void quiet_before_boundary(void **state)
{
	const __u64 left[] = { 1, MS, 50 * MS, QUIET - 1, QUIET };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
		assert_int_equal(fsd_block_pause_ns(T0, T0 + left[i], 3, true), left[i] + AFTER);
		assert_int_equal(fsd_block_pause_ns(T0, T0 + left[i], 3, false), left[i] + AFTER);
		assert_int_equal(fsd_block_pause_ns(T0, T0 + left[i], BURST, true), left[i] + AFTER);
	}
}

/* Outside the quiet: before it, and once the boundary has passed (the
 * loop re-arms its timer for the next one). */
static void no_quiet_elsewhere(void **state)
{
	(void)state;
	assert_int_equal(fsd_block_pause_ns(T0, T0 + QUIET + 1, 3, true), 0);
	assert_int_equal(fsd_block_pause_ns(T0, T0 + 900 * MS, 3, false), 0);
	assert_int_equal(fsd_block_pause_ns(T0, T0, 3, true), 0);
	assert_int_equal(fsd_block_pause_ns(T0, T0 - 1, 3, true), 0);
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000000000ULL + (__u64)t.tv_nsec;
}

/* A change asked for 20 ms before a boundary goes only once it is past;
 * deletes are counted, inserts not. */
static void live_pace_waits_past_boundary(void **state)
{
	__u64 due = now_ns() + 20 * MS;
	struct fsd_block_pace p = { .due_ns = &due };

	(void)state;
	fsd_block_pace(&p, false);
	assert_true(now_ns() >= due + AFTER);
	assert_int_equal(p.deletes, 0);
	fsd_block_pace(&p, true);
	fsd_block_pace(&p, true);
	assert_int_equal(p.deletes, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_boundary_no_pause),
		cmocka_unit_test(burst_pauses_deletes_only),
		cmocka_unit_test(quiet_before_boundary),
		cmocka_unit_test(no_quiet_elsewhere),
		cmocka_unit_test(live_pace_waits_past_boundary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
