// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * proc_locks.c - fuzz the daemon's reading of /proc/locks
 * (fsd_proclocks_holder, proclocks.h) with arbitrary text: it may name a
 * pid or none, never a negative one, and must not crash on long, cut or
 * binary lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include "base/proclocks.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	FILE *f;
	long pid;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	/* The device and inode of the seeds' FLOCK line, so that the
	 * matching path is reached too. */
	pid = fsd_proclocks_holder(f, 0x00, 0x2d, 5678);
	fclose(f);
	if (pid < 0)
		abort();
	return 0;
}
