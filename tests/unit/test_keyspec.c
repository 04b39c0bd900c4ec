// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_keyspec.c - `top --by` and policy keys: every key the grammar
 * allows parses to the side, family and length its text says, formats
 * back to the same text and names the prefix sketch's tag of that level
 * (decoded here by the tag's definition in prefix.h); everything else is
 * refused with a reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "keyspec.h"

struct good {
	const char *text;
	__u8 side, family, len;
};

static const struct good goods[] = {
	{ "src", FS_PREFIX_SRC, 0, 0 },
	{ "dst", FS_PREFIX_DST, 0, 0 },
	{ "src4/8", FS_PREFIX_SRC, FS_FAMILY_IPV4, 8 },
	{ "src4/16", FS_PREFIX_SRC, FS_FAMILY_IPV4, 16 },
	{ "dst4/24", FS_PREFIX_DST, FS_FAMILY_IPV4, 24 },
	{ "dst4/32", FS_PREFIX_DST, FS_FAMILY_IPV4, 32 },
	{ "src6/32", FS_PREFIX_SRC, FS_FAMILY_IPV6, 32 },
	{ "dst6/48", FS_PREFIX_DST, FS_FAMILY_IPV6, 48 },
	{ "src6/64", FS_PREFIX_SRC, FS_FAMILY_IPV6, 64 },
	{ "dst6/128", FS_PREFIX_DST, FS_FAMILY_IPV6, 128 },
};

static const char *const bads[] = {
	"", "sr", "source", "src ", " src", "srcx", "src4", "src4/", "src4/7",
	"src4/33", "src4/016", "src4/24x", "src4/ 24", "src6/24", "src6/0128",
	"src5/24", "dst4/-8", "dst6/1280", "src4/+8", "SRC", "src/24", "dst4//24",
};

static void test_good(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		struct fs_keyspec k;
		const char *why = NULL;
		char text[FS_KEYSPEC_TEXT_MAX];
		__u8 tags[2];
		int n, t;

		assert_int_equal(fs_keyspec_parse(goods[i].text, &k, &why), 0);
		assert_int_equal(k.side, goods[i].side);
		assert_int_equal(k.family, goods[i].family);
		assert_int_equal(k.len, goods[i].len);
		fs_keyspec_format(&k, text, sizeof(text));
		assert_string_equal(text, goods[i].text);
		n = fs_keyspec_tags(&k, tags);
		assert_int_equal(n, goods[i].family ? 1 : 2);
		for (t = 0; t < n; t++) {
			/* tag = 1 + (side << 3 | ipv6 << 2 | level), prefix.h */
			unsigned int v = tags[t] - 1u, fam6 = (v >> 2) & 1, level = v & 3;
			static const unsigned int len4[] = { 8, 16, 24, 32 }, len6[] = { 32, 48, 64, 128 };

			assert_int_equal(v >> 3, goods[i].side);
			if (goods[i].family) {
				assert_int_equal(fam6, goods[i].family == FS_FAMILY_IPV6);
				assert_int_equal(fam6 ? len6[level] : len4[level], goods[i].len);
			} else {
				assert_int_equal(fam6, (unsigned int)t);
				assert_int_equal(level, 3);
			}
		}
	}
}

static void test_bad(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct fs_keyspec k;
		const char *why = NULL;

		if (fs_keyspec_parse(bads[i], &k, &why) != -EINVAL || !why) {
			print_error("\"%s\" was taken\n", bads[i]);
			fail();
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
