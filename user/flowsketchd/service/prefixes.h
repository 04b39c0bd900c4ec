/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prefixes.h - the "prefixes" request (commands.h, protocol.h): the
 * heaviest prefixes of a span by one key (keyspec.h), each with its bound,
 * out of the prefix sketch (include/flowsketch/prefix.h).
 */
#ifndef FLOWSKETCHD_PREFIXES_H
#define FLOWSKETCHD_PREFIXES_H

#include "workers.h"

struct json_object *fsd_query_prefixes(const struct fsd_query_ctx *qc,
				       const void *job,
				       struct fsd_query_scratch *q);

#endif /* FLOWSKETCHD_PREFIXES_H */
