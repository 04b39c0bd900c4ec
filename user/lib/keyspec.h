/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * keyspec.h - what `flowsketch top --by KEY` and a policy rule count by:
 * a side's hosts, or its prefixes of one family and level (prefix.h).
 *
 *   KEY          side         family   length
 *   src, dst     the side's   either   the host (/32 or /128)
 *   src4/N       source       IPv4     N in 8, 16, 24, 32
 *   dst4/N       destination
 *   src6/N       source       IPv6     N in 32, 48, 64, 128
 *   dst6/N       destination
 *
 * The lengths are prefix.h's levels: the ones the datapath keeps.
 */
#ifndef FLOWSKETCH_KEYSPEC_H
#define FLOWSKETCH_KEYSPEC_H

#include <stddef.h>
#include "flowsketch/prefix.h"

struct fs_keyspec {
	__u8 side;		/* FS_PREFIX_SRC or FS_PREFIX_DST */
	__u8 family;		/* FS_FAMILY_IPV4 or _IPV6; 0: hosts of either */
	__u8 len;		/* prefix length; 0 with family 0 */
};

/* Longest text fs_keyspec_format() writes, with its NUL. */
#define FS_KEYSPEC_TEXT_MAX 12

/* Parse the whole of s.  0, or -EINVAL with *why a static phrase saying
 * what is wrong. */
int fs_keyspec_parse(const char *s, struct fs_keyspec *k, const char **why);
void fs_keyspec_format(const struct fs_keyspec *k, char *buf, size_t n);

/* The prefix sketch's tags k names (one, or one a family for hosts of
 * either): how many are written to tags[0..1]. */
int fs_keyspec_tags(const struct fs_keyspec *k, __u8 tags[2]);

#endif /* FLOWSKETCH_KEYSPEC_H */
