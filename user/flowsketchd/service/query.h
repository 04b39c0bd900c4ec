/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * query.h - the span queries: top, flows, export and windows.
 *
 * The loop selects a span's windows when the request arrives
 * (fsd_span_job(), history.h's fsd_span_select) and a query thread
 * answers from them (workers.h, struct fsd_query_ctx): the four handlers
 * below are the FSD_ON_SPAN rows of commands.h, each an fsd_job_fn of a
 * job that fsd_span_job() made.
 */
#ifndef FLOWSKETCHD_QUERY_H
#define FLOWSKETCHD_QUERY_H

#include "request.h"
#include "workers.h"

struct json_object;

struct json_object *fsd_query_top(const struct fsd_query_ctx *qc, const void *job,
				  struct fsd_query_scratch *q);
struct json_object *fsd_query_flows(const struct fsd_query_ctx *qc, const void *job,
				    struct fsd_query_scratch *q);
struct json_object *fsd_query_export(const struct fsd_query_ctx *qc, const void *job,
				     struct fsd_query_scratch *q);
struct json_object *fsd_query_windows(const struct fsd_query_ctx *qc, const void *job,
				      struct fsd_query_scratch *q);

/* The job that runs run on the windows r's span selects now: *job, or
 * *now an error answer (a span longer than the history, no memory). */
void fsd_span_job(const struct fsd_query_ctx *qc, const struct fsd_request *r,
		  __u64 client, fsd_job_fn run, struct json_object **now,
		  struct fsd_job **job);

#endif /* FLOWSKETCHD_QUERY_H */
