/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blockreq.h - the blocklist's requests as the event loop takes them.
 *
 * The loop decides at once what needs no work (a part of a list being
 * sent, "busy", errors) and hands the rest to the query threads
 * (workers.h): a change of the list (blocklist.h, "Threads"), marked so
 * that a second one is answered busy until the first is answered, and
 * with an answer deadline that grows with its size (FS_BLOCK_ANSWER_MS);
 * and block_list, whose pages are tens of milliseconds of JSON.
 */
#ifndef FLOWSKETCHD_BLOCKREQ_H
#define FLOWSKETCHD_BLOCKREQ_H

#include <stdbool.h>
#include "request.h"

struct fsd_blocklist;
struct fsd_job;
struct json_object;

/* What the block_* rows (commands.h) do with bl: *now an answer, or
 * *job a job, which runs on bl (fsd_query_ctx's blocklist). */
void fsd_block_request(struct fsd_blocklist *bl, const struct fsd_request *r,
		       __u64 client, struct json_object **now,
		       struct fsd_job **job);

/*
 * The loop's look at the expiries, at every window boundary: the entries
 * whose time has come become one block_del of the daemon's own
 * (FSD_CLIENT_DAEMON) on a query thread, unless a change runs, whose end
 * the next boundary waits for.  Cheap when none is due.  0 or -errno.
 */
struct fsd_workers;
int fsd_block_expire(struct fsd_blocklist *bl, struct fsd_workers *w);

/* Whether a change of the list is being applied. */
bool fsd_block_busy(const struct fsd_blocklist *bl);
/* The policy's block (policy.h): c (n <= FS_BLOCK_REQUEST_MAX) added as
 * one change of the daemon's own, origin its rule, expiring in for_sec:
 * 0, -EBUSY while a change runs, -ENOMEM. */
int fsd_block_auto(struct fsd_blocklist *bl, struct fsd_workers *w,
		   const struct fs_cidr *c, size_t n, const char *origin, __u32 for_sec);

#endif /* FLOWSKETCHD_BLOCKREQ_H */
