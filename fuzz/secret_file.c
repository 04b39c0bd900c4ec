// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * secret_file.c - fuzz the reading of flowsketchd --secret-file's content
 * (fsd_secret_parse, secret.h): accepted exactly when it is 16 bytes, and
 * then k0 and k1 are those bytes little-endian, nothing else.
 */
#include <stdlib.h>
#include <string.h>
#include "base/secret.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct fs_hash_secret s, before;
	unsigned int i;
	__u64 k0 = 0, k1 = 0;
	int err;

	memset(&s, 0xa5, sizeof(s));
	before = s;
	err = fsd_secret_parse(data, size, &s);
	if (size != FSD_SECRET_LEN) {
		/* Refused, and the key left as it was. */
		if (!err || memcmp(&s, &before, sizeof(s)))
			abort();
		return 0;
	}
	for (i = 0; i < 8; i++) {
		k0 |= (__u64)data[i] << (8 * i);
		k1 |= (__u64)data[8 + i] << (8 * i);
	}
	if (err || s.k0 != k0 || s.k1 != k1)
		abort();
	return 0;
}
