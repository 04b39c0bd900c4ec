// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* crashpoint.c - FLOWSKETCHD_CRASH_AT (crashpoint.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "crashpoint.h"

void fsd_crash_point(const char *name)
{
	static int state;		/* 0 unread, 1 armed, 2 off */
	static char point[64];
	static unsigned long left;

	if (state == 0) {
		const char *v = getenv("FLOWSKETCHD_CRASH_AT");
		const char *colon = v ? strchr(v, ':') : NULL;
		size_t n = v ? (colon ? (size_t)(colon - v) : strlen(v)) : 0;

		state = 2;
		if (n && n < sizeof(point)) {
			memcpy(point, v, n);
			point[n] = '\0';
			left = colon ? strtoul(colon + 1, NULL, 10) : 1;
			state = left ? 1 : 2;
		}
	}
	if (state != 1 || strcmp(name, point) || --left)
		return;
	kill(getpid(), SIGKILL);
	pause();
}
