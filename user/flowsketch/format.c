// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* format.c - numbers and endpoints the way the tables print them. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "format.h"
#include "flowsketch/compat.h"

/* v as the tables print it: one decimal below 10, whole from 10 up. */
static double printed_value(double v)
{
	return v < 9.95 ? round(v * 10) / 10 : round(v);
}

static char *fmt_scaled(char *buf, double v, double base,
			const char *const *units, size_t nunits,
			const char *sep)
{
	size_t u = 0;

	/* Climb while the figure would print as `base` or more, so that
	 * 999,960 bytes reads "1 MB" rather than "1000 KB". */
	while (u + 1 < nunits && printed_value(v) >= base) {
		v /= base;
		u++;
	}
	v = printed_value(v);
	if (u == 0 || v >= 10 || v == floor(v))
		snprintf(buf, FS_FMT_MAX, "%.0f%s%s", v, sep, units[u]);
	else
		snprintf(buf, FS_FMT_MAX, "%.1f%s%s", v, sep, units[u]);
	return buf;
}

char *fs_fmt_count(char *buf, double n)
{
	static const char *const units[] = { "", "K", "M", "G", "T", "P", "E" };

	return fmt_scaled(buf, n, 1000, units, FS_ARRAY_SIZE(units), "");
}

char *fs_fmt_bytes(char *buf, double bytes)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB",
					     "PB", "EB" };

	return fmt_scaled(buf, bytes, 1000, units, FS_ARRAY_SIZE(units), " ");
}

char *fs_fmt_bytes_iec(char *buf, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
					     "PiB", "EiB" };

	return fmt_scaled(buf, bytes, 1024, units, FS_ARRAY_SIZE(units), " ");
}

char *fs_fmt_grouped(char *buf, __u64 n)
{
	char digits[24];
	size_t len, i, o = 0;

	len = (size_t)snprintf(digits, sizeof(digits), "%llu",
			       (unsigned long long)n);
	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

char *fs_fmt_words(char *buf, double n)
{
	if (n >= 1e9)
		snprintf(buf, FS_FMT_MAX, "%.3g billion", n / 1e9);
	else if (n >= 1e6)
		snprintf(buf, FS_FMT_MAX, "%.3g million", n / 1e6);
	else
		fs_fmt_grouped(buf, (__u64)llround(n));
	return buf;
}

char *fs_fmt_percent(char *buf, double fraction, int decimals)
{
	double scale = pow(10, decimals);
	double v = round(fraction * 100 * scale) / scale;

	snprintf(buf, FS_FMT_MAX, "%.*f%%", decimals, v);
	return buf;
}

char *fs_fmt_percent_short(char *buf, double fraction)
{
	snprintf(buf, FS_FMT_MAX, "%g%%", fraction * 100);
	return buf;
}

char *fs_fmt_endpoint(char *buf, const char *addr, int port)
{
	if (port < 0)
		snprintf(buf, FS_FMT_MAX, "%s", addr);
	else if (strchr(addr, ':'))
		snprintf(buf, FS_FMT_MAX, "[%s]:%d", addr, port);
	else
		snprintf(buf, FS_FMT_MAX, "%s:%d", addr, port);
	return buf;
}

/* A UTF-8 continuation byte is 10xxxxxx: every other byte starts a code
 * point. */
static int columns(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

int fs_fmt_widest(int w, const char *s)
{
	int cols = columns(s);

	return cols > w ? cols : w;
}

int fs_fmt_pad(int w, const char *s)
{
	return w + (int)strlen(s) - columns(s);
}
