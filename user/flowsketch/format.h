/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * format.h - numbers and endpoints the way the tables print them.
 *
 * Human units round to two or three significant figures: one decimal
 * below 10 ("5.4 KB"), whole numbers from 10 up ("54 KB"), a trailing
 * ".0" dropped ("3 KiB").  Traffic sizes are decimal (KB = 1000 bytes,
 * as link rates are); memory made of powers of two is binary (KiB).
 * Every function writes at most FS_FMT_MAX bytes and returns buf.
 */
#ifndef FLOWSKETCH_CLI_FORMAT_H
#define FLOWSKETCH_CLI_FORMAT_H

#include <stddef.h>
#include <linux/types.h>

#define FS_FMT_MAX 80

/* 999, 1.2K, 34M: packet counts. */
char *fs_fmt_count(char *buf, double n);
/* 512 B, 5.4 KB, 54 KB, 3.4 MB: traffic and textbook sizes. */
char *fs_fmt_bytes(char *buf, double bytes);
/* 768 B, 3 KiB, 40 MiB: memory of power-of-two structures. */
char *fs_fmt_bytes_iec(char *buf, double bytes);
/* 271,829 */
char *fs_fmt_grouped(char *buf, __u64 n);
/* 10,000 / 10 million / 1.5 billion */
char *fs_fmt_words(char *buf, double n);
/* 100 * fraction with `decimals` decimals, halves rounded away from zero
 * (1.625 -> "1.63%", where printf's binary rounding would give 1.62). */
char *fs_fmt_percent(char *buf, double fraction, int decimals);
/* 100 * fraction in the fewest digits: 10%, 0.1%, 0.001%. */
char *fs_fmt_percent_short(char *buf, double fraction);
/* 10.0.0.1:80, [2001:db8::1]:443, or the bare address when port < 0. */
char *fs_fmt_endpoint(char *buf, const char *addr, int port);

/*
 * Table columns.  A cell's width is the columns it takes on a terminal,
 * one a code point (the tables print no wide or combining character),
 * which is fewer than its bytes for "\u00b1" or "\u2265":
 * fs_fmt_widest(w, s) is the larger of w and s's columns, and
 * fs_fmt_pad(w, s) the printf field width ("%*s") that puts s in w columns.
 */
int fs_fmt_widest(int w, const char *s);
int fs_fmt_pad(int w, const char *s);

#endif /* FLOWSKETCH_CLI_FORMAT_H */
