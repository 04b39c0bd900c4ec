// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * blockpace.c - the pauses of a long blocklist change (blockpace.h).
 */
#include <errno.h>
#include <time.h>
#include "blockpace.h"

__u64 fsd_block_pause_ns(__u64 now, __u64 due, size_t deletes, bool frees)
{
	__u64 pause = 0;

	if (frees && deletes && deletes % FSD_BLOCK_BURST == 0)
		pause = FSD_BLOCK_BURST_PAUSE_NS;
	if (due > now && due - now <= FSD_BLOCK_QUIET_NS &&
	    due - now + FSD_BLOCK_AFTER_NS > pause)
		pause = due - now + FSD_BLOCK_AFTER_NS;
	return pause;
}

static __u64 monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000000000ULL + (__u64)t.tv_nsec;
}

void fsd_block_pace(struct fsd_block_pace *p, bool frees)
{
	__u64 due = p->due_ns ? __atomic_load_n(p->due_ns, __ATOMIC_RELAXED) : 0;
	__u64 pause = fsd_block_pause_ns(monotonic_ns(), due, p->deletes, frees);
	struct timespec t = {
		.tv_sec = (time_t)(pause / 1000000000ULL),
		.tv_nsec = (long)(pause % 1000000000ULL),
	};

	if (frees)
		p->deletes++;
	while (pause && nanosleep(&t, &t) && errno == EINTR)
		;
}
