/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * duration.h - a span of time as people write it: a whole number and a
 * unit, `90s`, `10m`, `24h`, `7d` (a bare number is seconds).  Used by
 * `--span`, `block add --for` and the policy file's `for` and `ban`.
 */
#ifndef FLOWSKETCH_DURATION_H
#define FLOWSKETCH_DURATION_H

#include <linux/types.h>

#define FS_DAY_SECONDS (24ULL * 3600)

/*
 * The whole of s, in seconds, into *sec: 0, or -EINVAL when s is not
 * digits and at most one unit (s, m, h, d), or is 0 or above max_sec.
 */
int fs_duration_parse(const char *s, __u64 max_sec, __u64 *sec);

/* The shortest exact form, "90s", "10m", "1d"...: "0s" for 0. */
void fs_duration_format(__u64 sec, char *buf, unsigned long n);

#endif /* FLOWSKETCH_DURATION_H */
