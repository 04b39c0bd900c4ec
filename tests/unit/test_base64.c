// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_base64.c - RFC 4648 base64 (user/lib/base64.h).
 *
 * The test vectors are RFC 4648 section 10's; round trips cover every
 * length modulo 3 and every byte value; the decoder must refuse what is
 * not canonical base64, one case for each rule in base64.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "base64.h"

static void test_rfc4648_vectors(void **state)
{
	static const struct {
		const char *plain, *encoded;
	} v[] = {
		{ "", "" },
		{ "f", "Zg==" },
		{ "fo", "Zm8=" },
		{ "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	char out[16], back[16];
	size_t i, n;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t len = strlen(v[i].plain);

		assert_int_equal(fs_base64_encoded_len(len), strlen(v[i].encoded));
		memset(out, 0, sizeof(out));
		fs_base64_encode(v[i].plain, len, out);
		assert_string_equal(out, v[i].encoded);
		assert_int_equal(fs_base64_decode(v[i].encoded, strlen(v[i].encoded),
						  back, &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(back, v[i].plain, len);
	}
}

/* Every byte value, at every position modulo 3, and both ends of the
 * alphabet ("+" and "/"). */
static void test_round_trip(void **state)
{
	unsigned char in[259], back[259];
	char text[400];
	size_t len, n, i;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	for (len = 0; len <= sizeof(in); len++) {
		fs_base64_encode(in, len, text);
		assert_int_equal(fs_base64_decode(text, fs_base64_encoded_len(len),
						  back, &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(back, in, len);
		assert_true(fs_base64_decoded_max(fs_base64_encoded_len(len)) >= len);
	}
	memset(in, 0xff, 3);
	fs_base64_encode(in, 3, text);
	assert_memory_equal(text, "////", 4);
	in[0] = 0xfb;
	in[1] = 0xef;
	in[2] = 0xbe;
	fs_base64_encode(in, 3, text);
	assert_memory_equal(text, "++++", 4);
}

static void test_refusals(void **state)
{
	static const char *const bad[] = {
		"Zg=",		/* not a multiple of 4 */
		"Zg",		/* unpadded */
		"Zh==",		/* unused bits set (canonical: Zg==) */
		"Zm9=",		/* unused bits set (canonical: Zm8=) */
		"Zg==Zg==",	/* padding before the end */
		"Z===",		/* padding in the second position */
		"=Zg=",
		"Zm9v\nYg==",	/* a line break */
		"Zm 9",		/* white space */
		"Zm-_",		/* the URL-safe alphabet */
		"Zm9\x80",	/* not ASCII */
		"Zg=A",		/* data after padding */
	};
	unsigned char out[16];
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(fs_base64_decode(bad[i], strlen(bad[i]), out, &n),
				 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648_vectors),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
