// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_cidr.c - blocklist entries as text (user/lib/cidr.h): what is
 * accepted, what is refused and why, how an entry prints, which addresses
 * it covers, and the list file format (comments, blanks, CRLF, repeats,
 * NUL bytes, long lines, too many entries, a last line without newline).
 * Coverage is checked against a bit-by-bit comparison written here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "cidr.h"

static void test_accepted(void **state)
{
	static const struct {
		const char *in, *out;
		int family, len;
	} good[] = {
		{ "10.0.0.0/8", "10.0.0.0/8", 4, 8 },
		{ "192.0.2.1", "192.0.2.1/32", 4, 32 },
		{ "0.0.0.0/0", "0.0.0.0/0", 4, 0 },
		{ "203.0.113.128/25", "203.0.113.128/25", 4, 25 },
		{ "2001:db8::/32", "2001:db8::/32", 6, 32 },
		{ "2001:DB8:0:0::/64", "2001:db8::/64", 6, 64 },
		{ "::1", "::1/128", 6, 128 },
		{ "::/0", "::/0", 6, 0 },
		{ "10.0.0.0/008", "10.0.0.0/8", 4, 8 },
	};
	char text[FS_CIDR_TEXT_MAX];
	struct fs_cidr c;
	const char *why;
	size_t i;

	for (i = 0; i < FS_ARRAY_SIZE(good); i++) {
		assert_int_equal(fs_cidr_parse(good[i].in, &c, &why), 0);
		assert_int_equal(c.family, good[i].family);
		assert_int_equal(c.len, good[i].len);
		fs_cidr_format(&c, text, sizeof(text));
		assert_string_equal(text, good[i].out);
	}
}

static void test_refused(void **state)
{
	static const struct {
		const char *in, *why;
	} bad[] = {
		{ "", "empty" },
		{ "10.0.0.1/8", "host bits" },
		{ "10.0.0.0/33", "above 32" },
		{ "2001:db8::/129", "above 128" },
		{ "2001:db8::1/64", "host bits" },
		{ "garbage", "not an IPv4 or IPv6 address" },
		{ "10.0.0.0/", "empty prefix length" },
		{ "/8", "no address" },
		{ "10.0.0.0/8x", "not a decimal" },
		{ "10.0.0.0/-1", "not a decimal" },
		{ "10.0.0.0/+8", "not a decimal" },
		{ "10.0.0.0/1000", "above 32" },
		{ " 10.0.0.0/8", "not an IPv4" },
		{ "10.0.0.0/8 ", "not a decimal" },
		{ "10.0.0/8", "not an IPv4" },
		{ "1.2.3.4.5", "not an IPv4" },
		{ "10.0.0.0//8", "not a decimal" },
	};
	struct fs_cidr c;
	const char *why;
	size_t i;

	for (i = 0; i < FS_ARRAY_SIZE(bad); i++) {
		why = NULL;
		if (fs_cidr_parse(bad[i].in, &c, &why) != -EINVAL)
			fail_msg("\"%s\" was accepted", bad[i].in);
		assert_non_null(why);
		if (!strstr(why, bad[i].why))
			fail_msg("\"%s\": \"%s\" does not say \"%s\"", bad[i].in, why,
				 bad[i].why);
	}
}

/* Bit i of a 16-byte address, high bit of byte 0 first. */
static int bit(const __u8 *a, unsigned int i)
{
	return (a[i / 8] >> (7 - i % 8)) & 1;
}

static void test_covers(void **state)
{
	__u64 s = 5;
	unsigned int t, i;

	for (t = 0; t < 20000; t++) {
		struct fs_cidr c;
		__u8 a[16];
		unsigned int max, len, j;
		int want = 1;

		memset(&c, 0, sizeof(c));
		c.family = t & 1 ? 4 : 6;
		max = c.family == 4 ? 32 : 128;
		for (i = 0; i < 16; i++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			a[i] = (__u8)(s >> 33);
			c.addr[i] = (__u8)(s >> 45);
		}
		len = (unsigned int)(s >> 20) % (max + 1);
		/* every other time, a's first bits are the prefix's */
		if (t & 2)
			for (j = 0; j < len; j++)
				if (bit(a, j) != bit(c.addr, j))
					a[j / 8] ^= (__u8)(0x80 >> (j % 8));
		for (j = len; j < 128; j++)
			if (bit(c.addr, j))
				c.addr[j / 8] ^= (__u8)(0x80 >> (j % 8));
		c.len = (__u8)len;
		for (j = 0; j < len; j++)
			if (bit(a, j) != bit(c.addr, j))
				want = 0;
		assert_int_equal(fs_cidr_covers(&c, c.family, a), want);
		assert_int_equal(fs_cidr_covers(&c, c.family == 4 ? 6 : 4, a), 0);
	}
}

static int parse_text(const char *text, size_t size, unsigned int max,
		      struct fs_cidr **out, size_t *n, char *msg)
{
	FILE *f = fmemopen((void *)text, size, "r");
	int err;

	assert_non_null(f);
	err = fs_cidr_list_parse(f, "list", max, out, n, msg, 256);
	fclose(f);
	return err;
}

static void test_list_file(void **state)
{
	static const char good[] = "# header\n\n10.0.0.0/8\n  192.0.2.0/24   # office\r\n"
				   "2001:db8::/32\n10.0.0.0/8\n\t\n198.51.100.7";
	char msg[256], text[FS_CIDR_TEXT_MAX], *big;
	struct fs_cidr *c;
	size_t n;

	assert_int_equal(parse_text(good, sizeof(good) - 1, 100, &c, &n, msg), 0);
	assert_int_equal(n, 4);		/* the repeat counts once */
	fs_cidr_format(&c[3], text, sizeof(text));
	assert_string_equal(text, "2001:db8::/32");
	free(c);

	assert_int_equal(parse_text("10.0.0.0/8\n# x\n10.0.0.1/8\n", 26, 100, &c, &n, msg), -EINVAL);
	assert_non_null(strstr(msg, "list:3:"));
	assert_non_null(strstr(msg, "host bits"));
	assert_int_equal(parse_text("1.2.3.0/24\n1.2.\0003.0/24\n", 24, 100, &c, &n, msg), -EINVAL);
	assert_non_null(strstr(msg, "list:2:"));
	assert_non_null(strstr(msg, "NUL"));
	assert_int_equal(parse_text("1.0.0.0/8\n2.0.0.0/8\n3.0.0.0/8\n", 30, 2, &c, &n, msg), -E2BIG);
	assert_non_null(strstr(msg, "list:3:"));
	assert_null(c);

	big = malloc(1000);
	assert_non_null(big);
	memset(big, '1', 999);
	big[999] = '\n';
	assert_int_equal(parse_text(big, 1000, 100, &c, &n, msg), -EINVAL);
	assert_non_null(strstr(msg, "list:1:"));
	free(big);

	/* Repeats do not count against the maximum. */
	assert_int_equal(parse_text("1.0.0.0/8\n1.0.0.0/8\n1.0.0.0/8\n2.0.0.0/8\n", 40, 2,
				    &c, &n, msg), 0);
	assert_int_equal(n, 2);
	free(c);
	/* A line of exactly FS_CIDR_LINE_MAX bytes (a comment) is a line. */
	big = malloc(FS_CIDR_LINE_MAX + 12);
	assert_non_null(big);
	memset(big, ' ', FS_CIDR_LINE_MAX);
	big[0] = '#';
	memcpy(big + FS_CIDR_LINE_MAX, "\n1.0.0.0/8\n", 11);
	assert_int_equal(parse_text(big, FS_CIDR_LINE_MAX + 11, 5, &c, &n, msg), 0);
	assert_int_equal(n, 1);
	free(c);
	free(big);

	/* Truncated mid-entry: the last line is what it is, and refused. */
	assert_int_equal(parse_text("10.0.0.0/8\n192.0.2.0/2", 22, 100, &c, &n, msg), -EINVAL);
	assert_non_null(strstr(msg, "list:2:"));
}

/*
 * A list of max distinct entries followed by many repeats is accepted,
 * and one entry more is refused, in time linear-logarithmic in its
 * lines: a parser that sorts the whole array again for each line past
 * max (max = 20,000, 60,000 repeats: 60,000 sorts of 20,000) takes
 * minutes; the bound below leaves a margin of about 100 times what the
 * squeeze-per-max-lines parser takes on a slow shared machine.
 */
#define REP_MAX 20000U
#define REP_LINES 60000U
static char *repeat_list(unsigned int distinct, size_t *size)
{
	char *text = malloc((size_t)(distinct + REP_LINES) * 20 + 1);
	size_t len = 0;
	unsigned int i;

	assert_non_null(text);
	for (i = 0; i < distinct; i++)
		len += (size_t)sprintf(text + len, "10.%u.%u.%u\n", i >> 16, (i >> 8) & 255, i & 255);
	for (i = 0; i < REP_LINES; i++)
		len += (size_t)sprintf(text + len, "10.0.%u.%u/32\n", (i % distinct) >> 8, i % distinct & 255);
	*size = len;
	return text;
}

static void test_list_repeats_past_max(void **state)
{
	struct fs_cidr *c;
	char msg[256];
	size_t n, size;
	clock_t t0 = clock();
	char *text = repeat_list(REP_MAX, &size);

	(void)state;
	assert_int_equal(parse_text(text, size, REP_MAX, &c, &n, msg), 0);
	assert_int_equal(n, REP_MAX);
	free(c);
	free(text);
	text = repeat_list(REP_MAX + 1, &size);
	assert_int_equal(parse_text(text, size, REP_MAX, &c, &n, msg), -E2BIG);
	assert_non_null(strstr(msg, "more than 20000 entries"));
	assert_null(c);
	free(text);
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 3.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_covers),
		cmocka_unit_test(test_list_file),
		cmocka_unit_test(test_list_repeats_past_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
