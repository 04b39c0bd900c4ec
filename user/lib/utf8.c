// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* utf8.c - strict UTF-8 (utf8.h). */
#include "utf8.h"

static int is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t fs_utf8_seq(const char *s, size_t len, unsigned int *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned int c, min;
	size_t n, i;

	if (!len)
		return 0;
	if (u[0] < 0x80) {
		n = 1, c = u[0], min = 0;
	} else if ((u[0] & 0xe0) == 0xc0) {
		n = 2, c = u[0] & 0x1f, min = 0x80;
	} else if ((u[0] & 0xf0) == 0xe0) {
		n = 3, c = u[0] & 0x0f, min = 0x800;
	} else if ((u[0] & 0xf8) == 0xf0) {
		n = 4, c = u[0] & 0x07, min = 0x10000;
	} else {
		return 0;	/* a continuation byte, or F8..FF */
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if (!is_cont(u[i]))
			return 0;
		c = c << 6 | (u[i] & 0x3f);
	}
	/* The shortest form only, no surrogates, Unicode's range only. */
	if (c < min || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	if (cp)
		*cp = c;
	return n;
}

size_t fs_utf8_check(const char *s, size_t len)
{
	size_t off = 0, n;

	while (off < len) {
		n = fs_utf8_seq(s + off, len - off, NULL);
		if (!n)
			return off;
		off += n;
	}
	return len;
}

size_t fs_utf8_prefix(const char *s, size_t len, size_t max)
{
	size_t off = 0, n;

	while (off < len) {
		n = fs_utf8_seq(s + off, len - off, NULL);
		if (!n || off + n > max)
			break;
		off += n;
	}
	return off;
}
