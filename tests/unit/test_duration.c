// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_duration.c - `--for 10m`, `ban 1h`, `--span 90s`: every written
 * form is the seconds its unit says (the factors written out here), the
 * cap holds at its edge, and everything else is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "duration.h"

static void test_good(void **state)
{
	static const struct {
		const char *text;
		__u64 sec;
		const char *shortest;
	} goods[] = {
		{ "1", 1, "1s" }, { "90", 90, "90s" }, { "90s", 90, "90s" },
		{ "120s", 120, "2m" }, { "10m", 600, "10m" }, { "24h", 86400, "1d" },
		{ "7d", 604800, "7d" }, { "3600s", 3600, "1h" }, { "61m", 3660, "61m" },
		{ "0010m", 600, "10m" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		char buf[32];
		__u64 sec = 0;

		assert_int_equal(fs_duration_parse(goods[i].text, 365 * 86400ULL, &sec), 0);
		assert_int_equal(sec, goods[i].sec);
		fs_duration_format(sec, buf, sizeof(buf));
		assert_string_equal(buf, goods[i].shortest);
	}
}

static void test_bad(void **state)
{
	static const char *const bads[] = {
		"", "s", "0", "0s", "-1s", "+1s", " 1s", "1s ", "1 s", "1ss", "1x",
		"1.5h", "1S", "1H", "h1", "1sm", "18446744073709551616",
		"18446744073709551615d",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		__u64 sec = 7;

		if (fs_duration_parse(bads[i], 365 * 86400ULL, &sec) != -EINVAL || sec != 7) {
			print_error("\"%s\" was taken\n", bads[i]);
			fail();
		}
	}
}

/* The cap is inclusive, in every unit. */
static void test_cap(void **state)
{
	__u64 sec;

	(void)state;
	assert_int_equal(fs_duration_parse("86400", 86400, &sec), 0);
	assert_int_equal(fs_duration_parse("86401", 86400, &sec), -EINVAL);
	assert_int_equal(fs_duration_parse("1440m", 86400, &sec), 0);
	assert_int_equal(fs_duration_parse("1441m", 86400, &sec), -EINVAL);
	assert_int_equal(fs_duration_parse("1d", 86400, &sec), 0);
	assert_int_equal(fs_duration_parse("2d", 86400, &sec), -EINVAL);
	assert_int_equal(fs_duration_parse("25h", 86400, &sec), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
