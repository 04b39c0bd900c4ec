/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * request.h - a request of protocol.h, parsed and checked.
 *
 * Everything about a request that does not need the daemon's state is
 * decided here: the text is strict JSON (jsoncheck.h), one object, a known
 * "cmd" (commands.h), only that command's keys, each of the right type and range.  What
 * depends on the daemon (is "span" within the history kept?) is left to
 * query.c.  Pure, so that the fuzz target calls it without a daemon.
 */
#ifndef FLOWSKETCHD_REQUEST_H
#define FLOWSKETCHD_REQUEST_H

#include <limits.h>
#include <stddef.h>
#include "cidr.h"
#include "commands.h"
#include "keyspec.h"
#include "protocol.h"
#include "windows/topk.h"

/* Largest "n" of a top request: the answer must stay a few MB. */
#define FSD_TOP_MAX 10000
#define FSD_TOP_DEFAULT 10
#define FSD_BLOCK_REQUEST_MAX FS_BLOCK_REQUEST_MAX	/* protocol.h */
/* Room for any message of fsd_request_parse(). */
#define FSD_REQUEST_ERROR_MAX 320

/* Which direction a span query covers: bits, so "both" is both. */
enum fsd_direction {
	FSD_DIR_IN = 1,		/* XDP: what the interfaces receive */
	FSD_DIR_OUT = 2,	/* egress: what they send */
	FSD_DIR_BOTH = 3,
};

/* "in", "out" or "both", as a request and its answer say it. */
const char *fsd_direction_name(enum fsd_direction dir);

struct fsd_request {
	enum fsd_cmd cmd;
	enum fsd_direction direction;	/* span queries (default both) */
	size_t n;		/* top, prefixes, spread: 1 to FSD_TOP_MAX */
	enum fsd_sort sort;	/* top; prefixes: packets or bytes */
	struct fs_keyspec by;	/* prefixes: any key; spread: src or dst */
	double span;		/* span queries: seconds, > 0; 0 when
				   not given */
	size_t ncidrs;		/* block_add, block_del, block_load_part:
				   1 to FSD_BLOCK_REQUEST_MAX */
	struct fs_cidr cidrs[FSD_BLOCK_REQUEST_MAX];
	__u32 for_sec;		/* block_add: the entries' lifetime,
				   1 to FS_BLOCK_FOR_MAX; 0: for good */
	size_t total;		/* block_load_begin: 1 to FS_BLOCK_LOAD_MAX */
	__u64 load;		/* block_load_part, _commit: the token */
	size_t offset;		/* block_list: first entry of the page */
};

/*
 * 0 with *r filled, or -EINVAL (-E2BIG too long, -ENOMEM) with err holding
 * one sentence for the {"error": ...} answer: valid UTF-8, never empty.
 */
int fsd_request_parse(const char *text, size_t len, struct fsd_request *r,
		      char err[FSD_REQUEST_ERROR_MAX]);

#endif /* FLOWSKETCHD_REQUEST_H */
