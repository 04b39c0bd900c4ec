// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* base64.c - RFC 4648 base64, strict decoding (base64.h). */
#include <errno.h>
#include <stdbool.h>
#include <linux/types.h>
#include "base64.h"

static const char alphabet[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void fs_base64_encode(const void *in, size_t n, char *out)
{
	const __u8 *s = in;
	size_t i;

	for (i = 0; i + 3 <= n; i += 3) {
		__u32 v = (__u32)s[i] << 16 | (__u32)s[i + 1] << 8 | s[i + 2];

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		*out++ = alphabet[v & 63];
	}
	if (n - i == 1) {
		*out++ = alphabet[s[i] >> 2];
		*out++ = alphabet[(s[i] & 3) << 4];
		*out++ = '=';
		*out++ = '=';
	} else if (n - i == 2) {
		__u32 v = (__u32)s[i] << 8 | s[i + 1];

		*out++ = alphabet[v >> 10];
		*out++ = alphabet[(v >> 4) & 63];
		*out++ = alphabet[(v & 15) << 2];
		*out++ = '=';
	}
}

/* The 6-bit value of c, or -1 outside the alphabet ('=' included). */
static int value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int fs_base64_decode(const char *in, size_t len, void *out, size_t *n_out)
{
	__u8 *d = out;
	size_t i, n = 0;

	if (len % 4)
		return -EINVAL;
	for (i = 0; i < len; i += 4) {
		int a = value(in[i]), b = value(in[i + 1]);
		int c = value(in[i + 2]), e = value(in[i + 3]);
		bool last = i + 4 == len;

		if (a < 0 || b < 0)
			return -EINVAL;
		d[n++] = (__u8)(a << 2 | b >> 4);
		if (c < 0) {
			/* "xx==": only at the end, and b's low 4 bits unused. */
			if (!last || in[i + 2] != '=' || in[i + 3] != '=' || (b & 15))
				return -EINVAL;
			break;
		}
		d[n++] = (__u8)((b & 15) << 4 | c >> 2);
		if (e < 0) {
			/* "xxx=": c's low 2 bits unused. */
			if (!last || in[i + 3] != '=' || (c & 3))
				return -EINVAL;
			break;
		}
		d[n++] = (__u8)((c & 3) << 6 | e);
	}
	*n_out = n;
	return 0;
}
