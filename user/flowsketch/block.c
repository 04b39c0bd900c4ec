// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * block.c - `flowsketch block`: the daemon's blocklist (add, del, list,
 * load, clear).
 *
 * CIDRs are checked here first with the parser the daemon uses
 * (user/lib/cidr.h), so that a bad one is named by its argument number
 * and nothing is sent; the daemon checks again and applies a request
 * whole or not at all.  `block load FILE` reads and checks the file here
 * (a bad line is named FILE:LINE and nothing is sent) and sends its CIDRs
 * in parts that each fit a request, committed as one change (protocol.h):
 * the daemon opens no file a client names, since it would read it as root.
 */
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "keys.h"
#include "args.h"
#include "cidr.h"
#include "cli.h"
#include "client.h"
#include "duration.h"
#include "format.h"
#include "protocol.h"
#include "reply.h"

/* block's help is its subcommands: list's --json and --help are hidden. */
static const struct fs_opt list_opts[] = {
	{ "json", 'j', NULL, NULL, 0, 0, 0, NULL, NULL },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, NULL },
	{ 0 }
};

static const struct fs_optset list_optset = {
	.name = "block list",
	.usage =
	"Usage: flowsketch [--socket PATH] block COMMAND\n"
	"\n"
	"Sources the datapath drops (after counting them), by CIDR prefix,\n"
	"IPv4 or IPv6.  A dropped packet is always one an entry covers: the\n"
	"filter's false positives are settled by an exact lookup.\n"
	"\n"
	"  block add CIDR... [--for DURATION]\n"
	"                      block these prefixes (a bare address: one host),\n"
	"                      for good or for DURATION (90s, 10m, 24h, 7d; at\n"
	"                      most 365d), which also renews listed ones\n"
	"  block del CIDR...   unblock them (a source another entry covers\n"
	"                      stays blocked)\n"
	"  block list [--json] the entries: what each dropped, who added it (manual\n"
	"                      or a policy rule), when, and when it expires\n"
	"  block load FILE     add every line of FILE (one CIDR a line, # comments;\n"
	"                      a list flowsketchd wrote loads too, its entries\n"
	"                      for good); read and checked here, sent in parts\n"
	"  block clear         remove every entry\n"
	"\n"
	"A request with any bad CIDR changes nothing.  When add returns, every\n"
	"matching packet is dropped; when del returns, none is.\n",
	.opts = list_opts,
	.getopt_error = fs_cli_getopt_error,
};

/* *req = {"cmd": cmd, "cidrs": [argv...]}, each checked first: FS_EXIT_OK,
 * or FS_EXIT_USAGE after a message. */
static int cidr_request(const char *cmd, const char *what, int argc,
			char **argv, struct json_object **req)
{
	struct json_object *arr;
	struct fs_cidr c;
	const char *why;
	int i;

	if (argc < 1)
		return fs_usage_error("block", "%s needs at least one CIDR", what);
	if (argc > FS_BLOCK_REQUEST_MAX)
		return fs_usage_error("block", "%s: at most %d CIDRs a request; put them in a file for 'block load'",
				      what, FS_BLOCK_REQUEST_MAX);
	for (i = 0; i < argc; i++)
		if (fs_cidr_parse(argv[i], &c, &why))
			return fs_usage_error("block", "%s: argument %d \"%.64s\": %s",
					      what, i + 1, argv[i], why);
	*req = fs_request(cmd);
	arr = json_object_new_array();
	json_object_object_add(*req, FS_KEY_CIDRS, arr);
	for (i = 0; i < argc; i++)
		json_object_array_add(arr, json_object_new_string(argv[i]));
	if (strlen(json_object_to_json_string_ext(*req, JSON_C_TO_STRING_PLAIN)) + 1 >
	    FS_REQUEST_MAX) {
		json_object_put(*req);
		return fs_usage_error("block", "%s: %d CIDRs do not fit one request (%d bytes); put them in a file for 'block load'",
				      what, argc, FS_REQUEST_MAX);
	}
	return FS_EXIT_OK;
}

/*
 * add's --for DURATION (or --for=DURATION), anywhere after "add": taken
 * out of argv into *sec.  FS_EXIT_OK, or FS_EXIT_USAGE after a message.
 */
static int take_for(int *argc, char **argv, __u64 *sec)
{
	const char *arg = NULL;
	int i, j, skip = 0;

	for (i = 2; i < *argc; i++) {
		if (!strcmp(argv[i], "--for")) {
			if (i + 1 == *argc)
				return fs_usage_error("block", "add: --for needs a DURATION (90s, 10m, 24h, 7d)");
			skip = 2;
			arg = argv[i + 1];
		} else if (!strncmp(argv[i], "--for=", 6)) {
			skip = 1;
			arg = argv[i] + 6;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			return fs_usage_error("block", "add: unknown option '%s' (only --for DURATION)",
					      argv[i]);
		} else {
			continue;
		}
		if (*sec)
			return fs_usage_error("block", "add: --for given twice");
		if (fs_duration_parse(arg, FS_BLOCK_FOR_MAX, sec))
			return fs_usage_error("block", "add: --for must be a whole number and s, m, h or d (90s, 10m, 24h, 7d), from 1s to 365d, not '%.32s'",
					      arg);
		for (j = i; j + skip < *argc; j++)
			argv[j] = argv[j + skip];
		*argc -= skip;
		i--;
	}
	return FS_EXIT_OK;
}

static int show_change(struct json_object *a, bool print)
{
	__u64 changed, entries, renewed = 0;
	const char *what = json_object_object_get_ex(a, FS_KEY_ADDED, NULL) ? "added" : "deleted";
	int err;


	if ((err = fs_reply_u64(a, what, &changed)) ||
	    (err = fs_reply_u64(a, FS_KEY_ENTRIES, &entries)))
		return err;
	if (json_object_object_get_ex(a, FS_KEY_RENEWED, NULL) &&
	    (err = fs_reply_u64(a, FS_KEY_RENEWED, &renewed)))
		return err;
	if (!print)
		return 0;
	printf("flowsketch block: %s %llu", what, (unsigned long long)changed);
	if (renewed)
		printf(", renewed %llu", (unsigned long long)renewed);
	printf(", %llu entr%s in the list\n", (unsigned long long)entries,
	       entries == 1 ? "y" : "ies");
	return 0;
}

/* An entry's optional time (seconds since the epoch) into *t: 0 when
 * absent (an older daemon, or an entry that never expires). */
static int entry_time(struct json_object *e, const char *key, __u64 *t)
{
	*t = 0;
	return json_object_object_get_ex(e, key, NULL) ? fs_reply_u64(e, key, t) : 0;
}

/* When it was added, as local time; "-" when not known. */
static const char *added_text(char *buf, size_t n, __u64 t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || !localtime_r(&tt, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, n, "-");
	return buf;
}

/* When it expires, from now: "in 9m 59s", "never", "due" (past, the
 * daemon deletes it at its next window boundary). */
static const char *expires_text(char *buf, size_t n, __u64 t, __u64 now)
{
	__u64 left = t > now ? t - now : 0;

	if (!t)
		snprintf(buf, n, "never");
	else if (!left)
		snprintf(buf, n, "due");
	else if (left < 60)
		snprintf(buf, n, "in %llus", (unsigned long long)left);
	else if (left < 3600)
		snprintf(buf, n, "in %llum %02llus", (unsigned long long)(left / 60),
			 (unsigned long long)(left % 60));
	else if (left < 86400)
		snprintf(buf, n, "in %lluh %02llum", (unsigned long long)(left / 3600),
			 (unsigned long long)(left % 3600 / 60));
	else
		snprintf(buf, n, "in %llud %lluh", (unsigned long long)(left / 86400),
			 (unsigned long long)(left % 86400 / 3600));
	return buf;
}

static int show_list(struct json_object *a, bool print)
{
	char p[FS_FMT_MAX], b[FS_FMT_MAX], at[32], until[32];
	__u64 now = (__u64)time(NULL);
	struct json_object *arr;
	size_t i, n;
	int err;

	err = fs_reply_array(a, FS_KEY_ENTRIES, &arr);
	if (err)
		return err;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *cidr, *origin = "manual";
		__u64 packets, bytes, added_at, expires_at;

		if ((err = fs_reply_string(e, FS_KEY_CIDR, &cidr)) ||
		    (err = fs_reply_u64(e, FS_KEY_PACKETS, &packets)) ||
		    (err = fs_reply_u64(e, FS_KEY_BYTES, &bytes)) ||
		    (err = entry_time(e, FS_KEY_ADDED_AT, &added_at)) ||
		    (err = entry_time(e, FS_KEY_EXPIRES_AT, &expires_at)) ||
		    (json_object_object_get_ex(e, FS_KEY_ORIGIN, NULL) &&
		     (err = fs_reply_string(e, FS_KEY_ORIGIN, &origin))))
			return err;
		if (!print)
			continue;
		if (!i)
			printf("%-43s %14s %14s %-19s %-12s %s\n", "CIDR", "DROPPED PKTS",
			       "DROPPED BYTES", "ADDED", "EXPIRES", "BY");
		printf("%-43s %14s %14s %-19s %-12s %s\n", cidr, fs_fmt_grouped(p, packets),
		       fs_fmt_grouped(b, bytes), added_text(at, sizeof(at), added_at),
		       expires_text(until, sizeof(until), expires_at, now), origin);
	}
	if (print && !n)
		printf("flowsketch block: the list is empty\n");
	return 0;
}

/*
 * The whole list, a page at a time (protocol.h): each page is checked
 * like any answer, its entries appended to the first page's, until the
 * daemon's total is reached.  A list that changes meanwhile can show an
 * entry twice or miss one at a page boundary; the total says so.
 */
static int list_all(const struct fs_cli *cli, bool json)
{
	struct json_object *all = NULL, *entries = NULL, *page = NULL;
	__u64 total = 0, offset = 0;
	int ret = FS_EXIT_RUNTIME;

	for (;;) {
		struct json_object *req = fs_request("block_list"), *arr;
		__u64 got_offset;
		size_t i, n;

		json_object_object_add(req, FS_KEY_OFFSET, json_object_new_uint64(offset));
		if (fs_client_call(cli, req, &page))
			goto out;
		if (show_list(page, false) || fs_reply_u64(page, FS_KEY_TOTAL, &total) ||
		    fs_reply_u64(page, FS_KEY_OFFSET, &got_offset) ||
		    fs_reply_array(page, FS_KEY_ENTRIES, &arr))
			goto out;
		if (got_offset != offset) {
			fs_error("flowsketchd answered the list from entry %llu, not %llu",
				 (unsigned long long)got_offset, (unsigned long long)offset);
			goto out;
		}
		n = json_object_array_length(arr);
		if (!all) {
			all = page;
			entries = arr;
		} else {
			for (i = 0; i < n; i++)
				json_object_array_add(entries,
						      json_object_get(json_object_array_get_idx(arr, i)));
			json_object_put(page);
		}
		page = NULL;
		offset += n;
		if (!n || offset >= total)
			break;
	}
	if (fs_client_present(all, json, show_list))
		goto out;
	ret = FS_EXIT_OK;
out:
	json_object_put(page);
	json_object_put(all);
	return ret;
}

/* The CLI's deadline for a change of n CIDRs to a list of at most
 * FS_BLOCK_LOAD_MAX: the daemon's (protocol.h), and two seconds for the
 * answer to travel, unless --timeout gives more. */
static struct fs_cli change_cli(const struct fs_cli *cli, size_t n)
{
	struct fs_cli c = *cli;
	unsigned int s = FS_BLOCK_ANSWER_MS(n + FS_BLOCK_LOAD_MAX) / 1000 + 2;

	if (c.timeout_s < s)
		c.timeout_s = s;
	return c;
}

/* JSON text of one CIDR in a part: the string, its quotes, its comma and
 * json-c's escaped '/' ("\/"). */
static size_t part_bytes(const char *text)
{
	return strlen(text) + 4;
}

/* Send list (n, sorted, unique) as block_load_begin, parts, commit. */
static int send_list(const struct fs_cli *cli, const struct fs_cidr *list, size_t n)
{
	/* A part's request without CIDRs, with the newline, and a margin. */
	const size_t base = sizeof("{\"cmd\":\"block_load_part\",\"load\":\"0123456789abcdef\",\"cidrs\":[]}\n") + 16;
	struct json_object *req, *a = NULL, *arr;
	char text[FS_CIDR_TEXT_MAX], token[17];
	const char *t;
	struct fs_cli commit;
	size_t i = 0;

	req = fs_request("block_load_begin");
	json_object_object_add(req, FS_KEY_TOTAL, json_object_new_uint64(n));
	if (fs_client_call(cli, req, &a))
		return FS_EXIT_RUNTIME;
	if (fs_reply_string(a, FS_KEY_LOAD, &t) || strlen(t) != 16) {
		json_object_put(a);
		return FS_EXIT_RUNTIME;
	}
	snprintf(token, sizeof(token), "%s", t);
	json_object_put(a);
	while (i < n) {
		size_t bytes = base, k = 0;

		req = fs_request("block_load_part");
		arr = json_object_new_array();
		json_object_object_add(req, FS_KEY_LOAD, json_object_new_string(token));
		json_object_object_add(req, FS_KEY_CIDRS, arr);
		for (; i < n && k < FS_BLOCK_REQUEST_MAX; i++, k++) {
			fs_cidr_format(&list[i], text, sizeof(text));
			if (bytes + part_bytes(text) > FS_REQUEST_MAX)
				break;
			bytes += part_bytes(text);
			json_object_array_add(arr, json_object_new_string(text));
		}
		a = NULL;
		if (fs_client_call(cli, req, &a))
			return FS_EXIT_RUNTIME;
		json_object_put(a);
	}
	req = fs_request("block_load_commit");
	json_object_object_add(req, FS_KEY_LOAD, json_object_new_string(token));
	commit = change_cli(cli, n);
	return fs_client_show(&commit, req, false, show_change);
}

/* block load FILE: read and check it here, then send it. */
static int load_file(const struct fs_cli *cli, const char *path)
{
	struct fs_cidr *list = NULL;
	char msg[512];
	size_t n = 0;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f)
		return fs_usage_error("block", "load: %s: %s", path, strerror(errno));
	err = fs_cidr_list_parse(f, path, FS_BLOCK_LOAD_MAX, &list, &n, msg, sizeof(msg));
	fclose(f);
	if (err)
		return fs_usage_error("block", "load: %s; nothing sent", msg);
	if (!n) {
		free(list);
		printf("flowsketch block: %s lists no CIDR; nothing sent\n", path);
		return FS_EXIT_OK;
	}
	err = send_list(cli, list, n);
	free(list);
	return err;
}

int fs_cmd_block(const struct fs_cli *cli, int argc, char **argv)
{
	struct json_object *req = NULL;
	const char *sub;
	bool json = false;
	int ret = 0;

	if (argc < 2)
		return fs_usage_error("block", "needs a command: add, del, list, load or clear (see 'flowsketch block --help')");
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		fs_opt_help(stdout, &list_optset);
		return FS_EXIT_OK;
	}
	if (!strcmp(sub, "add") || !strcmp(sub, "del")) {
		struct fs_cli c = change_cli(cli, (size_t)argc);
		__u64 for_sec = 0;

		if (sub[0] == 'a') {
			ret = take_for(&argc, argv, &for_sec);
			if (ret)
				return ret;
		}
		ret = cidr_request(sub[0] == 'a' ? "block_add" : "block_del", sub,
				   argc - 2, argv + 2, &req);
		if (!ret && for_sec)
			json_object_object_add(req, FS_KEY_FOR, json_object_new_uint64(for_sec));
		return ret ? ret : fs_client_show(&c, req, false, show_change);
	}
	if (!strcmp(sub, "list")) {
		ret = fs_cli_parse_all(&list_optset, argc - 1, argv + 1, &json);
		if (ret)
			return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
		return list_all(cli, json);
	}
	if (!strcmp(sub, "load")) {
		if (argc != 3)
			return fs_usage_error("block", "load needs exactly one FILE");
		return load_file(cli, argv[2]);
	}
	if (!strcmp(sub, "clear")) {
		struct fs_cli c = change_cli(cli, FS_BLOCK_LOAD_MAX);	/* at most */

		if (argc != 2)
			return fs_usage_error("block", "clear takes no arguments");
		return fs_client_show(&c, fs_request("block_clear"), false, show_change);
	}
	return fs_usage_error("block", "unknown command '%s' (add, del, list, load or clear)", sub);
}
