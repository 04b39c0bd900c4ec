// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* printable.c - text from the daemon, made safe for a terminal. */
#include <string.h>
#include "printable.h"
#include "utf8.h"

bool fs_unprintable(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

size_t fs_printable(char *s, size_t len)
{
	size_t in = 0, out = 0, n;
	unsigned int cp;

	while (in < len) {
		n = fs_utf8_seq(s + in, len - in, &cp);
		if (!n || fs_unprintable(cp)) {
			s[out++] = '?';
			in += n ? n : 1;
			continue;
		}
		memmove(s + out, s + in, n);
		out += n;
		in += n;
	}
	return out;
}

void fs_print_json_text(FILE *out, const char *json)
{
	size_t len = strlen(json), off = 0, n;
	unsigned int cp;

	while (off < len) {
		n = fs_utf8_seq(json + off, len - off, &cp);
		if (!n) {
			fputs("\\ufffd", out);	/* the replacement character */
			off++;
		} else if (fs_unprintable(cp) && cp >= 0x20) {
			fprintf(out, "\\u%04x", cp);
			off += n;
		} else {
			fwrite(json + off, 1, n, out);
			off += n;
		}
	}
}
