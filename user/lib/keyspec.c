// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* keyspec.c - `top --by` keys and policy rule keys (keyspec.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "keyspec.h"

/* The level of length len in family's levels, or -1. */
static int level_of(__u32 family, unsigned int len)
{
	__u32 l;

	for (l = 0; l < FS_PREFIX_LEVELS; l++)
		if (fs_prefix_level_len(family, l) == len)
			return (int)l;
	return -1;
}

int fs_keyspec_parse(const char *s, struct fs_keyspec *k, const char **why)
{
	unsigned int len = 0;
	const char *p;
	__u32 family;
	int used = 0;

	memset(k, 0, sizeof(*k));
	if (!strncmp(s, "src", 3)) {
		k->side = FS_PREFIX_SRC;
	} else if (!strncmp(s, "dst", 3)) {
		k->side = FS_PREFIX_DST;
	} else {
		*why = "does not start with src or dst";
		return -EINVAL;
	}
	p = s + 3;
	if (!*p)
		return 0;
	if (*p == '4')
		family = FS_FAMILY_IPV4;
	else if (*p == '6')
		family = FS_FAMILY_IPV6;
	else {
		*why = "the side is followed by neither 4 nor 6";
		return -EINVAL;
	}
	if (p[1] != '/' || p[2] < '0' || p[2] > '9' ||
	    sscanf(p + 2, "%3u%n", &len, &used) != 1 || p[2 + used] ||
	    (p[2] == '0' && used > 1)) {
		*why = "the family is not followed by /LENGTH";
		return -EINVAL;
	}
	if (level_of(family, len) < 0) {
		*why = family == FS_FAMILY_IPV4 ? "IPv4 lengths are 8, 16, 24 and 32" :
						  "IPv6 lengths are 32, 48, 64 and 128";
		return -EINVAL;
	}
	k->family = (__u8)family;
	k->len = (__u8)len;
	return 0;
}

void fs_keyspec_format(const struct fs_keyspec *k, char *buf, size_t n)
{
	const char *side = k->side == FS_PREFIX_SRC ? "src" : "dst";

	if (!k->family)
		snprintf(buf, n, "%s", side);
	else
		snprintf(buf, n, "%s%c/%u", side, k->family == FS_FAMILY_IPV4 ? '4' : '6',
			 k->len);
}

int fs_keyspec_tags(const struct fs_keyspec *k, __u8 tags[2])
{
	if (!k->family) {
		tags[0] = fs_prefix_tag(k->side, FS_FAMILY_IPV4, 3);
		tags[1] = fs_prefix_tag(k->side, FS_FAMILY_IPV6, 3);
		return 2;
	}
	tags[0] = fs_prefix_tag(k->side, k->family, (__u32)level_of(k->family, k->len));
	return 1;
}
