/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * printable.h - text from the daemon, made safe for a terminal.
 *
 * Whatever the socket delivers ends up on an operator's terminal, and a
 * string holding ESC (0x1b) can move the cursor, rewrite earlier lines,
 * set the window title or worse.  Every string of an answer is made
 * printable before the tables show it: C0 controls (below 0x20), DEL,
 * C1 controls (U+0080 to U+009F, which some terminals obey as ESC
 * sequences), the invisible bidirectional overrides that reorder what is
 * shown (U+200E/F, U+202A-E, U+2066-9), and any byte that is not part of
 * valid UTF-8 each become one '?'.  The rest of an escape sequence ("[2J")
 * is plain text once its ESC is gone.
 */
#ifndef FLOWSKETCH_CLI_PRINTABLE_H
#define FLOWSKETCH_CLI_PRINTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Is code point cp one that printable text must not hold? */
bool fs_unprintable(unsigned int cp);

/* s[0..len) made printable in place; returns the new length (never more
 * than len).  s is not NUL-terminated by this. */
size_t fs_printable(char *s, size_t len);

/*
 * Print JSON text produced by json-c (which escapes only what is below
 * 0x20) with every other fs_unprintable() character, and every byte of
 * invalid UTF-8, written as a \uXXXX escape: the same JSON value, safe on
 * a terminal.  Outside strings json-c writes only ASCII, so each escape
 * lands inside a string.
 */
void fs_print_json_text(FILE *out, const char *json);

#endif /* FLOWSKETCH_CLI_PRINTABLE_H */
