// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy.c - `flowsketch policy`: the daemon's mitigation policy (its
 * rules, the keys above them now and for how long, its last decisions and
 * counters), and `policy reload`.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "keys.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "reply.h"

static const struct fs_opt policy_opts[] = {
	{ "json", 'j', NULL, NULL, 0, 0, 0, NULL, "print the daemon's answer as JSON" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_policy_optset = {
	.name = "policy",
	.usage =
	"Usage: flowsketch [--socket PATH] policy [--json]\n"
	"       flowsketch [--socket PATH] policy reload\n"
	"\n"
	"The policy flowsketchd --policy FILE runs: its rules, the sources above\n"
	"a rule now and for how long, the last decisions and their counters.\n"
	"A rule acts on the lower end of each estimate's bound (z = 3), so a\n"
	"source just above a threshold may be decided a window late, never\n"
	"blocked for an estimate's error.  `reload` reads FILE again (as SIGHUP\n"
	"does); a bad file is refused whole and the running policy stays.\n"
	"\n",
	.opts = policy_opts,
	.help_col = 15,
	.getopt_error = fs_cli_getopt_error,
};

static int show_rules(struct json_object *a, bool print)
{
	struct json_object *arr;
	size_t i, n;
	int err;

	if ((err = fs_reply_array(a, FS_KEY_RULES, &arr)))
		return err;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(arr, i);
		const char *text;
		__u64 line;

		if ((err = fs_reply_string(r, FS_KEY_RULE, &text)) ||
		    (err = fs_reply_u64(r, FS_KEY_LINE, &line)))
			return err;
		if (print)
			printf("%s  %5llu  %s\n", i ? "     " : "rules", (unsigned long long)line, text);
	}
	if (print && !n)
		printf("rules  none\n");
	return 0;
}

/* KEYS of each element of `what`, printed under a header. */
static int show_rows(struct json_object *a, const char *what, const char *title, bool print)
{
	struct json_object *arr;
	size_t i, n;
	int err;

	if ((err = fs_reply_array(a, what, &arr)))
		return err;
	n = json_object_array_length(arr);
	if (print)
		printf("\n%s%s\n", title, n ? "" : ": none");
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *key, *rule, *action = NULL;
		double value;
		__u64 t;

		if ((err = fs_reply_string(e, FS_KEY_KEY, &key)) ||
		    (err = fs_reply_string(e, FS_KEY_RULE, &rule)) ||
		    (err = fs_reply_double(e, FS_KEY_VALUE, &value)) ||
		    (err = fs_reply_u64(e, !strcmp(what, FS_KEY_ABOVE) ? FS_KEY_SECONDS : FS_KEY_AT, &t)) ||
		    (strcmp(what, FS_KEY_ABOVE) && (err = fs_reply_string(e, FS_KEY_ACTION, &action))))
			return err;
		if (!print)
			continue;
		if (action) {
			char at[32];
			time_t tt = (time_t)t;
			struct tm tm;

			if (!localtime_r(&tt, &tm) || !strftime(at, sizeof(at), "%H:%M:%S", &tm))
				snprintf(at, sizeof(at), "-");
			printf("  %s  %-12s %-43s %12.6g  %s\n", at, action, key, value, rule);
		} else {
			printf("  %-43s %12.6g  for %llus  %s\n", key, value,
			       (unsigned long long)t, rule);
		}
	}
	return 0;
}

static int show_policy(struct json_object *a, bool print)
{
	static const char *const counters[] = {
		"blocked", "dry_run", "limited", "allowed", "own", "full", "reloads",
		"reload_failures",
	};
	struct json_object *c;
	const char *file;
	__u64 v, limit_n, limit_s;
	bool dry;
	size_t i;
	int err;

	if ((err = fs_reply_string(a, FS_KEY_FILE, &file)) ||
	    (err = fs_reply_bool(a, FS_KEY_DRY_RUN, &dry)) ||
	    (err = fs_reply_u64(a, FS_KEY_LIMIT "." FS_KEY_N, &limit_n)) ||
	    (err = fs_reply_u64(a, FS_KEY_LIMIT "." FS_KEY_PER_SECONDS, &limit_s)) ||
	    (err = fs_reply_object(a, FS_KEY_COUNTERS, &c)))
		return err;
	if (print)
		printf("policy %s%s, at most %llu new blocks every %llu s\n", file,
		       dry ? " (dry run: nothing is blocked)" : "",
		       (unsigned long long)limit_n, (unsigned long long)limit_s);
	if ((err = show_rules(a, print)) ||
	    (err = show_rows(a, FS_KEY_ABOVE, "above a rule now (lower end of the estimate)", print)) ||
	    (err = show_rows(a, FS_KEY_DECISIONS, "last decisions", print)))
		return err;
	if (print)
		printf("\ncounters");
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		if ((err = fs_reply_u64(c, counters[i], &v)))
			return err;
		if (print)
			printf(" %s %llu", counters[i], (unsigned long long)v);
	}
	if (print)
		printf("\n");
	return 0;
}

static int show_reload(struct json_object *a, bool print)
{
	__u64 rules;
	int err = fs_reply_u64(a, FS_KEY_RULES, &rules);

	if (!err && print)
		printf("flowsketch policy: reloaded, %llu rules\n", (unsigned long long)rules);
	return err;
}

int fs_cmd_policy(const struct fs_cli *cli, int argc, char **argv)
{
	bool json = false;	/* --json, the options' only field (offset 0) */
	int ret;

	if (argc >= 2 && !strcmp(argv[1], "reload")) {
		if (argc != 2)
			return fs_usage_error("policy", "reload takes no arguments");
		return fs_client_show(cli, fs_request("policy_reload"), false, show_reload);
	}
	ret = fs_cli_parse_all(&fs_policy_optset, argc, argv, &json);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	return fs_client_show(cli, fs_request("policy"), json, show_policy);
}
