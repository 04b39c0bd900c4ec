// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* proclocks.c - who holds a lock, from /proc/locks (proclocks.h). */
#include <string.h>
#include "proclocks.h"

long fsd_proclocks_holder(FILE *f, unsigned int maj, unsigned int min,
			  unsigned long long ino)
{
	char line[256], type[16];
	unsigned int lmaj, lmin;
	unsigned long long i;
	long pid;

	/* "1: FLOCK  ADVISORY  WRITE 1234 00:2d:5678 0 EOF"; a longer line
	 * arrives in pieces, each of which must match the whole pattern. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %15s %*s %*s %ld %x:%x:%llu", type, &pid,
			   &lmaj, &lmin, &i) != 5)
			continue;
		if (!strcmp(type, "FLOCK") && lmaj == maj && lmin == min &&
		    i == ino && pid > 0)
			return pid;
	}
	return 0;
}
