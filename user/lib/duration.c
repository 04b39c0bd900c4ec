// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* duration.c - durations as people write them (duration.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "duration.h"

static const struct {
	char unit;
	__u64 sec;
} units[] = {
	{ 'd', FS_DAY_SECONDS }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
};

int fs_duration_parse(const char *s, __u64 max_sec, __u64 *sec)
{
	unsigned long long v;
	__u64 unit = 1;
	unsigned int i;
	char *end;

	/* strtoull takes "-1", "+1" and leading blanks; a duration does not. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (*end == units[i].unit)
				break;
		if (i == sizeof(units) / sizeof(units[0]) || end[1])
			return -EINVAL;
		unit = units[i].sec;
	}
	if (v == 0 || v > max_sec / unit)
		return -EINVAL;
	*sec = v * unit;
	return 0;
}

void fs_duration_format(__u64 sec, char *buf, unsigned long n)
{
	unsigned int i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (sec && sec % units[i].sec == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		i--;
	snprintf(buf, n, "%llu%c", (unsigned long long)(sec / units[i].sec),
		 units[i].unit);
}
