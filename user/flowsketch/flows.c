// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * flows.c - `flowsketch flows`: distinct flows, sources, destinations.
 *
 * The HyperLogLog estimate n^ has relative standard error r = 1.04/sqrt(m),
 * so the absolute error at one sigma is r * n^; about 68 % of estimates
 * fall within it and 95 % within twice it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include "keys.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "format.h"
#include "reply.h"
#include "show.h"
#include "flowsketch/params.h"

struct flows_view {
	__u64 span_seconds, windows, hll_precision;
	double flows, sources, destinations, rse;
	/* "connections", from daemons that count them (bpf/conn.bpf.c). */
	bool has_conns;
	__u64 opened, established, conn_sources, conn_dests;
};

struct flows_opts {
	__u32 span;
	const char *dir;
	bool json;
};

static const struct fs_opt flows_opts[] = {
	{ "span", 't', "SECONDS", fs_opt_span, offsetof(struct flows_opts, span), 0, 0, NULL,
	  "span to count over, rounded up to whole windows\n"
	  "(default one window); units s, m, h accepted" },
	{ "direction", 'd', "D", fs_opt_direction, offsetof(struct flows_opts, dir), 0, 0, NULL,
	  "in (received), out (sent) or both (default: the\n"
	  "distinct count of their union)" },
	{ "json", 'j', NULL, NULL, offsetof(struct flows_opts, json), 0, 0, NULL,
	  "print the daemon's answer as JSON" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_flows_optset = {
	.name = "flows",
	.usage =
	"Usage: flowsketch [--socket PATH] [--timeout SECONDS] flows [--span SECONDS]\n"
	"                  [--direction in|out|both] [--json]\n"
	"\n"
	"Distinct flows (five-tuples), source and destination addresses, counted\n"
	"by HyperLogLog, with their standard error.\n"
	"\n",
	.opts = flows_opts,
	.help_col = FS_CLI_HELP_COL,
	.getopt_error = fs_cli_getopt_error,
};

static int parse_flows(struct json_object *a, struct flows_view *v)
{
	int err;

	if ((err = fs_reply_u64(a, FS_KEY_SPAN_SECONDS, &v->span_seconds)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOWS, &v->windows)) ||
	    (err = fs_reply_double(a, FS_KEY_DISTINCT_FLOWS, &v->flows)) ||
	    (err = fs_reply_double(a, FS_KEY_DISTINCT_SOURCES, &v->sources)) ||
	    (err = fs_reply_double(a, FS_KEY_DISTINCT_DESTINATIONS, &v->destinations)) ||
	    (err = fs_reply_double(a, FS_KEY_RSE, &v->rse)) ||
	    (err = fs_reply_u64_in(a, FS_KEY_HLL_PRECISION, FS_HLL_MIN_P,
				   FS_HLL_MAX_P, &v->hll_precision)))
		return err;
	if (v->flows < 0 || v->sources < 0 || v->destinations < 0 ||
	    v->rse <= 0)
		return fs_bad_answer("flowsketchd's answer has a negative estimate or error");
	v->has_conns = json_object_object_get_ex(a, FS_KEY_CONNECTIONS, NULL);
	if (v->has_conns &&
	    ((err = fs_reply_u64(a, "connections.opened", &v->opened)) ||
	     (err = fs_reply_u64(a, "connections.established", &v->established)) ||
	     (err = fs_reply_u64(a, "connections.distinct_sources", &v->conn_sources)) ||
	     (err = fs_reply_u64(a, "connections.distinct_destinations", &v->conn_dests))))
		return err;
	return 0;
}

static void print_line(const char *what, double estimate, double rse)
{
	char n[FS_FMT_MAX], pct[FS_FMT_MAX], abs[FS_FMT_MAX];

	printf("  %-13s %12s  \u00b1 %s (\u00b1 %s at 1 sigma)\n", what,
	       fs_fmt_grouped(n, (__u64)llround(estimate)),
	       fs_fmt_percent(pct, rse, 2),
	       fs_fmt_grouped(abs, (__u64)llround(estimate * rse)));
}

static void print_flows(const struct flows_view *v)
{
	char rse[FS_FMT_MAX], rse2[FS_FMT_MAX];

	if (!v->windows) {
		printf("flowsketch flows: no window has finished yet\n");
		return;
	}
	printf("flowsketch flows: last %llu s (%llu window%s), HyperLogLog p = %llu\n",
	       (unsigned long long)v->span_seconds,
	       (unsigned long long)v->windows, v->windows == 1 ? "" : "s",
	       (unsigned long long)v->hll_precision);
	printf("estimates within \u00b1%s of the truth at 1 sigma (68%%), \u00b1%s at 2 sigma (95%%)\n\n",
	       fs_fmt_percent(rse, v->rse, 2), fs_fmt_percent(rse2, 2 * v->rse, 2));
	print_line("flows", v->flows, v->rse);
	print_line("sources", v->sources, v->rse);
	print_line("destinations", v->destinations, v->rse);
	if (!v->has_conns)
		return;
	printf("\nTCP connections: %s opened, %s established\n",
	       fs_fmt_grouped(rse, v->opened), fs_fmt_grouped(rse2, v->established));
	print_line("sources", (double)v->conn_sources, v->rse);
	print_line("destinations", (double)v->conn_dests, v->rse);
}

int fs_flows_show(struct json_object *answer, bool print)
{
	struct flows_view v;
	int err;

	err = parse_flows(answer, &v);
	if (!err && print)
		print_flows(&v);
	return err;
}

int fs_cmd_flows(const struct fs_cli *cli, int argc, char **argv)
{
	struct flows_opts o = { 0 };
	int ret;

	ret = fs_cli_parse_all(&fs_flows_optset, argc, argv, &o);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	return fs_client_show(cli, fs_request_span(fs_request("flows"), o.span, o.dir),
			      o.json, fs_flows_show);
}
