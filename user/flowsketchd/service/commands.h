/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * commands.h - the daemon's commands, one row each.
 *
 * FSD_COMMANDS(X) calls X once per command, in the order the "unknown cmd"
 * error lists them:
 *
 *   X(ID, NAME, KEYS, PARSE, WHERE, NEED, HANDLER, WHO, HELP)
 *
 *   ID       the command's enum fsd_cmd, FSD_CMD_<ID>
 *   NAME     its "cmd" in a request (protocol.h)
 *   KEYS     the keys it takes besides "cmd": FSD_KEYS(...) of keys.h's
 *            names, or FSD_NO_KEYS; any other key is an error
 *   PARSE    request.c's reader of those keys' values (run after the keys
 *            are checked), or NULL when there is nothing to read
 *   WHERE    FSD_IN_LOOP: HANDLER (fsd_loop_fn, dispatch.c) answers in the
 *            event loop, or hands a job of its own to the query threads;
 *            FSD_ON_SPAN: HANDLER (fsd_job_fn, workers.h) answers on a
 *            query thread from the windows selected when it arrived
 *   NEED     READ: open to the --read-group; ROOT: changes something
 *            (access.h)
 *   WHO      the command as the CLI says it, in a refusal
 *   HELP     one line, for generated text (a man page); every row has
 *            one and is in protocol.h (tests/unit/test_commands.c)
 *
 * Each user expands only the columns it needs: request.c NAME, KEYS and
 * PARSE (it stays pure, for the fuzzer); dispatch.c the rest.  So adding a
 * command is a row here and its handler (and a parser, for new keys).
 */
#ifndef FLOWSKETCHD_COMMANDS_H
#define FLOWSKETCHD_COMMANDS_H

#include <stddef.h>
#include "keys.h"

#define FSD_KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define FSD_NO_KEYS ((const char *const[]){ NULL })
#define FSD_SPAN_KEYS FSD_KEYS(FS_KEY_SPAN, FS_KEY_DIRECTION)

#define FSD_COMMANDS(X)							\
	X(TOP, "top", FSD_KEYS(FS_KEY_N, FS_KEY_SORT, FS_KEY_SPAN,	\
			      FS_KEY_DIRECTION),			\
	  parse_top, FSD_ON_SPAN, READ, fsd_query_top, "top",		\
	  "the heaviest flows of a span, by packets, bytes or connections") \
	X(FLOWS, "flows", FSD_SPAN_KEYS, parse_span, FSD_ON_SPAN, READ,	\
	  fsd_query_flows, "flows",					\
	  "a span's distinct flows, sources and destinations")		\
	X(EXPORT, "export", FSD_SPAN_KEYS, parse_span, FSD_ON_SPAN, READ, \
	  fsd_query_export, "export",					\
	  "a span's summed sketch and candidates, to merge elsewhere")	\
	X(WINDOWS, "windows", FSD_SPAN_KEYS, parse_span, FSD_ON_SPAN, READ, \
	  fsd_query_windows, "windows",					\
	  "a span window by window, per direction")			\
	X(STATUS, "status", FSD_NO_KEYS, NULL, FSD_IN_LOOP, READ,	\
	  status_now, "status",					\
	  "the datapath, interfaces, history and counters")		\
	X(BLOCK_ADD, "block_add", FSD_KEYS(FS_KEY_CIDRS, FS_KEY_FOR),	\
	  parse_block_add,						\
	  FSD_IN_LOOP, ROOT, block_request, "block add",		\
	  "add CIDRs to the blocklist, for good or for a time")		\
	X(BLOCK_DEL, "block_del", FSD_KEYS(FS_KEY_CIDRS), parse_cidrs,	\
	  FSD_IN_LOOP, ROOT, block_request, "block del",		\
	  "delete CIDRs from the blocklist")				\
	X(BLOCK_LIST, "block_list", FSD_KEYS(FS_KEY_OFFSET), parse_offset, \
	  FSD_IN_LOOP, READ, block_request, "block list",		\
	  "a page of the blocklist, with what each entry dropped")	\
	X(BLOCK_CLEAR, "block_clear", FSD_NO_KEYS, NULL, FSD_IN_LOOP,	\
	  ROOT, block_request, "block clear",				\
	  "empty the blocklist")					\
	X(BLOCK_LOAD_BEGIN, "block_load_begin", FSD_KEYS(FS_KEY_TOTAL),	\
	  parse_total, FSD_IN_LOOP, ROOT, block_request, "block load",	\
	  "start sending a list of CIDRs, answered with its token")	\
	X(BLOCK_LOAD_PART, "block_load_part",				\
	  FSD_KEYS(FS_KEY_LOAD, FS_KEY_CIDRS), parse_part, FSD_IN_LOOP,	\
	  ROOT, block_request, "block load",				\
	  "a part of the list being sent")				\
	X(BLOCK_LOAD_COMMIT, "block_load_commit", FSD_KEYS(FS_KEY_LOAD),	\
	  parse_token, FSD_IN_LOOP, ROOT, block_request, "block load",	\
	  "add the list sent, as one change")				\
	X(POLICY, "policy", FSD_NO_KEYS, NULL, FSD_IN_LOOP, READ,	\
	  policy_now, "policy",						\
	  "the policy's rules, keys above them, decisions and counters") \
	X(POLICY_RELOAD, "policy_reload", FSD_NO_KEYS, NULL, FSD_IN_LOOP, \
	  ROOT, policy_reload, "policy reload",				\
	  "read the policy file again; a bad one changes nothing")	\
	X(PREFIXES, "prefixes", FSD_KEYS(FS_KEY_BY, FS_KEY_N, FS_KEY_SORT,	\
				       FS_KEY_SPAN, FS_KEY_DIRECTION),	\
	  parse_prefixes, FSD_ON_SPAN, READ, fsd_query_prefixes, "top --by", \
	  "the heaviest prefixes of a span, of one side, family and length") \
	X(SPREAD, "spread", FSD_KEYS(FS_KEY_BY, FS_KEY_N, FS_KEY_SPAN,	\
				   FS_KEY_DIRECTION),			\
	  parse_spread, FSD_ON_SPAN, READ, fsd_query_spread, "spread",	\
	  "the hosts of a span with the most distinct peers")		\
	X(ACCURACY, "accuracy", FSD_SPAN_KEYS, parse_span, FSD_ON_SPAN,	\
	  READ, fsd_query_accuracy, "accuracy",				\
	  "the sketches' error measured against the keyed sample")

#define FSD_CMD_ENUM(id, ...) FSD_CMD_##id,
enum fsd_cmd {
	FSD_COMMANDS(FSD_CMD_ENUM)
	FSD_CMD_COUNT
};
#undef FSD_CMD_ENUM

#endif /* FLOWSKETCHD_COMMANDS_H */
