/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * show.h - each command's check of its answer, and its table.
 *
 * show(answer, print) reads every field the command's table needs, with
 * the type and range it needs (reply.h), stopping at the first failure
 * with one line on stderr and -EPROTO; then, with print, it prints the
 * table.  The check runs for --json too (on a copy: it makes strings
 * printable in place), so an answer to status that is shaped like an
 * answer to top is refused whatever the output format.  Exported for
 * client.c and the fuzz target (fuzz/answer.c).
 */
#ifndef FLOWSKETCH_CLI_SHOW_H
#define FLOWSKETCH_CLI_SHOW_H

#include <stdbool.h>
#include <json-c/json.h>

typedef int fs_show_fn(struct json_object *answer, bool print);

fs_show_fn fs_status_show;
fs_show_fn fs_flows_show;
fs_show_fn fs_top_show;
fs_show_fn fs_prefixes_show;
fs_show_fn fs_spread_show;
fs_show_fn fs_accuracy_show;

#endif /* FLOWSKETCH_CLI_SHOW_H */
