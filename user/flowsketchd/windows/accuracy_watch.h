/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * accuracy_watch.h - the keyed sample's check of every finished window
 * (include/flowsketch/sample.h, user/lib/sample_check.h), kept for status
 * and /metrics: the last window's figures (what the interfaces received
 * and sent, checked as one), counters since start, and the last
 * FSD_WATCH_WINDOWS windows' HyperLogLog z-scores, whose share within 2
 * standard errors is the seeds' 95 % (reported; the alarm is on the
 * window's own z, sample.h says why).
 *
 * Bounded work on the event loop: one pass over the window's sample
 * (at most 2^13 buckets of 7 flows, a Count-Min query each: 57,344
 * queries at the largest table, 3,584 at the default).
 */
#ifndef FLOWSKETCHD_ACCURACY_WATCH_H
#define FLOWSKETCHD_ACCURACY_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include "sample_check.h"

#define FSD_WATCH_WINDOWS 64

struct fsd_accuracy_watch {
	bool on;			/* a sample is kept */
	__u64 windows;			/* windows checked since start */
	struct fs_sample_check last;	/* the last window's */
	double delta;			/* Count-Min's delta (params.h) */
	unsigned int alarms;		/* the last check's (fs_sample_alarms()) */
	__u64 undercounts;		/* since start, both metrics */
	__u64 alarm_windows[FS_SAMPLE_NALARMS];		/* windows that raised each alarm */
	double z[FSD_WATCH_WINDOWS];	/* the last windows' z, where it tells */
	size_t nz, next;
	double within;			/* their share within 2 */
};

void fsd_accuracy_watch_init(struct fsd_accuracy_watch *w, const struct fs_sketch_params *p);

/* Check the window of n sketches s[] (the directions' of one finished
 * window, hashed with hk), as one. */
void fsd_accuracy_watch_window(struct fsd_accuracy_watch *w, const struct fs_sketch *const *s,
			       size_t n, const struct fs_hash_key *hk);

#endif /* FLOWSKETCHD_ACCURACY_WATCH_H */
