/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * client.h - one request to flowsketchd over its unix socket.
 *
 * The protocol (user/lib/protocol.h) is one JSON object each way per
 * connection.  fs_client_call() does the whole exchange and checks the
 * answer is a single well-formed JSON object that is not an
 * {"error": ...}; on any failure it prints one line saying what went
 * wrong and returns a negative errno.
 */
#ifndef FLOWSKETCH_CLI_CLIENT_H
#define FLOWSKETCH_CLI_CLIENT_H

#include <stdbool.h>
#include <json-c/json.h>
#include <linux/types.h>
#include "cli.h"
#include "show.h"

/* How long the daemon may take, by default, from connect to the end of
 * its answer before the CLI gives up (--timeout). */
#define FS_CLIENT_TIMEOUT_S 10
/* Largest answer accepted: a top list of thousands of flows fits easily. */
#define FS_ANSWER_MAX (16U << 20)

/* Longest socket path (sun_path minus its terminating zero). */
unsigned int fs_client_max_path(void);

/* {"cmd": cmd}, for the caller to add to. */
struct json_object *fs_request(const char *cmd);
/* req with "span" and "direction" where given (0 and NULL leave the
 * daemon's defaults, one window and both): returns req. */
struct json_object *fs_request_span(struct json_object *req, __u32 span,
				    const char *direction);

/*
 * Send `request` (released here) to the daemon at cli->socket_path; on
 * success *answer is the answer object, to be released with
 * json_object_put().  The whole exchange has cli->timeout_s seconds: a
 * daemon that trickles its answer out a byte at a time cannot hold the
 * CLI longer than that.  Errors: -ENOENT, -ECONNREFUSED, ... (cannot
 * connect), -ETIMEDOUT, -EPROTO (malformed answer), -EREMOTEIO (the
 * daemon answered with an error).
 */
int fs_client_call(const struct fs_cli *cli, struct json_object *request,
		   struct json_object **answer);

/* The same for an answer of up to max bytes (rounded up to a power of
 * two), for requests whose answers are larger by design (export). */
int fs_client_call_max(const struct fs_cli *cli, struct json_object *request,
		       size_t max, struct json_object **answer);

/*
 * Send `request` (released here) and show the answer through show(): its
 * table, or with `json` the daemon's object pretty-printed once show()
 * has found it well-formed.  Returns the process exit status (cli.h).
 */
int fs_client_show(const struct fs_cli *cli, struct json_object *request,
		   bool json, fs_show_fn *show);

/* An answer in hand shown as fs_client_show() does; 0 or -errno, having
 * said what was wrong. */
int fs_client_present(struct json_object *answer, bool json, fs_show_fn *show);

#endif /* FLOWSKETCH_CLI_CLIENT_H */
