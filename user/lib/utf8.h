/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * utf8.h - strict UTF-8 (RFC 3629), for text that crosses the socket.
 *
 * Strict means what RFC 3629 allows and nothing more: no overlong forms
 * (C0 AF for '/', which a lenient decoder turns into a path separator), no
 * UTF-16 surrogates (ED A0 80), nothing above U+10FFFF, no truncated
 * sequence.  json-c's own JSON_TOKENER_VALIDATE_UTF8 (0.16) accepts the
 * first three, so both ends of the socket check with this instead.
 */
#ifndef FLOWSKETCH_UTF8_H
#define FLOWSKETCH_UTF8_H

#include <stddef.h>

/* Length (1 to 4) of the valid sequence s[0..] within len bytes, else 0
 * (also for len 0).  *cp, when not NULL, gets the code point. */
size_t fs_utf8_seq(const char *s, size_t len, unsigned int *cp);

/* Offset of the first byte of s that is not part of a valid sequence, or
 * len when all of s is valid. */
size_t fs_utf8_check(const char *s, size_t len);

/* The longest prefix of s (valid UTF-8) of at most max bytes that does not
 * cut a sequence: where to truncate a message so it stays valid. */
size_t fs_utf8_prefix(const char *s, size_t len, size_t max);

#endif /* FLOWSKETCH_UTF8_H */
