// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * native.c - fuzz the reader of native export files (native.h), which
 * `flowsketch merge` and `export --input` run on files from anywhere.
 *
 * A file is taken or refused with a message; one taken is canonical (it
 * encodes back to the very same bytes: there is one file per export; a
 * version-2 file, to the current version's, canonical in turn), and what
 * was allocated follows from the file's own size.
 */
#include <stdlib.h>
#include <string.h>
#include "native.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char err[FS_NATIVE_ERR_MAX];
	struct fs_native n;
	unsigned char *back;
	int ret;

	err[0] = 0;
	ret = fs_native_decode(data, size, &n, err);
	if (ret) {
		/* Refused: with a sentence, and nothing left to free. */
		if (ret != -22 || !err[0] || !memchr(err, 0, sizeof(err)) ||
		    n.sketch.cms || n.candidates)
			abort();
		return 0;
	}
	/* Format version 2 (before the detection sketches) reads as the
	 * current version's file with two empty parts, 16 bytes longer,
	 * which is canonical in turn. */
	if (size > 8 && data[8] == 2) {
		size_t len = fs_native_size(&n);
		struct fs_native again;

		back = malloc(len);
		if (len != size + 16 || !back || fs_native_encode(&n, back, len) ||
		    fs_native_decode(back, len, &again, err))
			abort();
		fs_native_free(&n);
		n = again;
		data = back;
		size = len;
	} else {
		back = NULL;
	}
	if (fs_native_size(&n) != size)
		abort();
	{
		unsigned char *out = malloc(size);

		if (!out || fs_native_encode(&n, out, size) || memcmp(out, data, size))
			abort();
		free(out);
	}
	free(back);
	fs_native_free(&n);
	return 0;
}
