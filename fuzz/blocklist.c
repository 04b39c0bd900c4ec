// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * blocklist.c - fuzz the blocklist file parser (fs_cidr_list_parse,
 * cidr.h), which reads --blocklist FILE at start and `block load FILE`:
 * whatever the bytes, it returns an error with a message naming a line,
 * or entries that are sorted, unique, at most the maximum, each of which
 * formats to text that parses back to itself and with its host bits
 * clear.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cidr.h"

#define FUZZ_MAX 64

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct fs_cidr *c = NULL, back;
	char msg[512] = "", text[FS_CIDR_TEXT_MAX];
	const char *why;
	size_t n = 0, i;
	FILE *f;
	int err;

	f = fmemopen((void *)data, size ? size : 1, "r");
	if (!f)
		return 0;
	if (!size) {
		fclose(f);
		f = fopen("/dev/null", "r");
		if (!f)
			return 0;
	}
	err = fs_cidr_list_parse(f, "fuzz", FUZZ_MAX, &c, &n, msg, sizeof(msg));
	fclose(f);
	if (err) {
		if (c || n || strncmp(msg, "fuzz", 4))
			abort();
		return 0;
	}
	if (n > FUZZ_MAX)
		abort();
	for (i = 0; i < n; i++) {
		if (i && fs_cidr_cmp(&c[i - 1], &c[i]) >= 0)
			abort();
		fs_cidr_format(&c[i], text, sizeof(text));
		if (fs_cidr_parse(text, &back, &why) || !fs_cidr_equal(&back, &c[i]))
			abort();
		if (!fs_cidr_covers(&c[i], c[i].family, c[i].addr))
			abort();
	}
	free(c);
	return 0;
}
