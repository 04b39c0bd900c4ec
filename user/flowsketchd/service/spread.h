/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * spread.h - the "spread" request (commands.h, protocol.h): the hosts of a
 * span with the most distinct peers, each with its error, out of the
 * spread sketch (include/flowsketch/spread.h).
 */
#ifndef FLOWSKETCHD_SPREAD_H
#define FLOWSKETCHD_SPREAD_H

#include "workers.h"

struct json_object *fsd_query_spread(const struct fsd_query_ctx *qc,
				     const void *job,
				     struct fsd_query_scratch *q);

#endif /* FLOWSKETCHD_SPREAD_H */
