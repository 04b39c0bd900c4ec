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

/*
 * For the detection queries (prefixes.h, spread.h): sum each direction the
 * job asks for, from the windows it selected, into q->sum and call each
 * with it, the spans described as one into *span (the directions' windows
 * and times as one, their totals added).  0, or the first -errno of the
 * sums or of each.
 */
struct fs_sketch;
typedef int fsd_span_each_fn(const struct fs_sketch *sum, void *arg);
int fsd_query_span_each(const struct fsd_query_ctx *qc, const void *job,
			struct fsd_query_scratch *q, fsd_span_each_fn *each,
			void *arg, struct fsd_span *span);
/* The job's span window by window (fsd_history_series(), newest first),
 * direction by direction: each gets a direction's n points.  0, or the
 * first -errno. */
struct fsd_window_point;
typedef int fsd_series_each_fn(const struct fsd_window_point *pts, int n,
			       const char *direction, void *arg);
int fsd_query_series_each(const struct fsd_query_ctx *qc, const void *job,
			  fsd_series_each_fn *each, void *arg);
/* The request a span job answers. */
const struct fsd_request *fsd_query_request(const void *job);
/* A span's description, as every span query gives it (protocol.h: top's
 * span_seconds to window_end_ns), into a. */
void fsd_query_add_span(const struct fsd_query_ctx *qc, struct json_object *a,
			const struct fsd_span *span);

/* The job that runs run on the windows r's span selects now: *job, or
 * *now an error answer (a span longer than the history, no memory). */
void fsd_span_job(const struct fsd_query_ctx *qc, const struct fsd_request *r,
		  __u64 client, fsd_job_fn run, struct json_object **now,
		  struct fsd_job **job);

#endif /* FLOWSKETCHD_QUERY_H */
