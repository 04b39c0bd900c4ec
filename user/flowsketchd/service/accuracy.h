/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * accuracy.h - the "accuracy" request (commands.h, protocol.h): the
 * sketches' error measured against the keyed sample's exact counts
 * (include/flowsketch/sample.h) over a span.
 *
 * For every sampled flow, Count-Min's estimate against its exact packets
 * and bytes: undercounts (never allowed), the largest overcount in units
 * of eps N, and the share of flows over eps N (at most delta by design).
 * For the distinct flows, the HyperLogLog's z-score against the sample's
 * estimate, for the span and window by window, and the share of windows
 * within 2 standard errors (about 95 % by design), and the alarms
 * sample.h's fs_sample_alarms() raises when one left its design.
 */
#ifndef FLOWSKETCHD_ACCURACY_H
#define FLOWSKETCHD_ACCURACY_H

#include "workers.h"

struct json_object *fsd_query_accuracy(const struct fsd_query_ctx *qc,
				       const void *job,
				       struct fsd_query_scratch *q);

#endif /* FLOWSKETCHD_ACCURACY_H */
