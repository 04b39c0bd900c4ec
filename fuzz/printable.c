// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * printable.c - fuzz the CLI's terminal filter (printable.h) on raw bytes:
 * what comes out is valid UTF-8 without one character a terminal would
 * obey, never longer than what went in, and text that was clean already
 * comes out unchanged.
 */
#include <stdlib.h>
#include <string.h>
#include "printable.h"
#include "terminal_safe.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *s = malloc(size ? size : 1);
	size_t len;

	if (!s)
		return 0;
	memcpy(s, data, size);
	len = fs_printable(s, size);
	if (len > size || !terminal_safe(s, len, NULL))
		abort();
	if (terminal_safe((const char *)data, size, NULL) &&
	    (len != size || memcmp(s, data, size)))
		abort();
	free(s);
	return 0;
}
