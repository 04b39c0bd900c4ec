/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * export.h - the export request: a span's sketches, for other engines.
 *
 * top and flows answer questions about a span; export hands over the
 * span itself (its summed sketch, candidates, totals, time range and
 * parameters, protocol.h), so that the CLI can write it in formats that
 * Redis, postgresql-hll and `flowsketch merge` read (user/lib/native.h,
 * hll_export.h).  Runs on a query thread like top (workers.h), from the
 * windows selected when the request arrived.
 */
#ifndef FLOWSKETCHD_EXPORT_H
#define FLOWSKETCHD_EXPORT_H

#include "windows/history.h"
#include "request.h"

struct fsd_query_ctx;
struct json_object;

/*
 * The answer to export over the directions dirs (FSD_DIR_* bits that the
 * daemon counts): sel_in selects the windows of qc's "in" history,
 * sel_out those of its "out" one.  An error answer when dirs is none,
 * no window has finished, or the answer would pass FS_EXPORT_ANSWER_MAX.
 */
struct json_object *fsd_answer_export(const struct fsd_query_ctx *qc,
				      unsigned int dirs,
				      const struct fsd_span_select *sel_in,
				      const struct fsd_span_select *sel_out,
				      struct fsd_query_scratch *q);

#endif /* FLOWSKETCHD_EXPORT_H */
