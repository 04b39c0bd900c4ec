/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dispatch.h - the command table: a request from its text to its answer.
 *
 * At the daemon's top, beside main and daemon: it sees the whole daemon,
 * and hands each request to its row's handler (commands.h).  The server
 * below it gets fsd_request_start() as its fsd_request_fn (server.h).
 */
#ifndef FLOWSKETCHD_DISPATCH_H
#define FLOWSKETCHD_DISPATCH_H

#include "service/server.h"

/* Parse the request, refuse it if peer may not ask it, and run its row's
 * handler: *now the answer, or *job a job for the query threads. */
void fsd_request_start(void *daemon, const char *text, size_t len,
		       __u64 client, const struct fsd_peer *peer,
		       struct json_object **now, struct fsd_job **job);

#endif /* FLOWSKETCHD_DISPATCH_H */
