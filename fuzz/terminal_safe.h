/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * terminal_safe.h - the fuzz targets' own test of "safe on a terminal",
 * written out byte by byte rather than through fs_unprintable(), so that
 * a gap in the CLI's filter is not also a gap in the check of it.
 */
#ifndef FS_FUZZ_TERMINAL_SAFE_H
#define FS_FUZZ_TERMINAL_SAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "utf8.h"

/* Valid UTF-8 with no C0 control (but those in `allowed`), no DEL, no C1
 * control (C2 80..9F) and no bidirectional override (E2 80 8E/8F,
 * E2 80 AA..AE, E2 81 A6..A9). */
static inline bool terminal_safe(const char *s, size_t len, const char *allowed)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	if (fs_utf8_check(s, len) != len)
		return false;
	for (i = 0; i < len; i++) {
		if ((u[i] < 0x20 && !(allowed && u[i] && strchr(allowed, u[i]))) ||
		    u[i] == 0x7f)
			return false;
		if (u[i] == 0xc2 && i + 1 < len && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f)
			return false;
		if (u[i] == 0xe2 && i + 2 < len &&
		    ((u[i + 1] == 0x80 && (u[i + 2] == 0x8e || u[i + 2] == 0x8f ||
					   (u[i + 2] >= 0xaa && u[i + 2] <= 0xae))) ||
		     (u[i + 1] == 0x81 && u[i + 2] >= 0xa6 && u[i + 2] <= 0xa9)))
			return false;
	}
	return true;
}

#endif /* FS_FUZZ_TERMINAL_SAFE_H */
