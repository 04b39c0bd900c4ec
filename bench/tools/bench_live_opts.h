/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_live_opts.h - the options the live benchmarks share
 * (fs-livebench.c, fs-tpbench.c): the two namespaces and
 * interfaces, rounds, the steady phase, the traffic, the windows and the
 * sketch's depth.  Define LB_TOOL (the tool's name, a string literal that
 * starts its messages) before including it.
 *
 * A tool lists LB_LONGOPTS and its own options in one struct option
 * array, and hands lb_parse_args() a function for its own (returning
 * LB_NOT_MINE for a character that is not one of them); lb_parse_args()
 * prints the one line of a refusal on stderr.
 */
#ifndef FLOWSKETCH_BENCH_LIVE_OPTS_H
#define FLOWSKETCH_BENCH_LIVE_OPTS_H

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>

#include "flowsketch/params.h"
#include "bench_live.h"

#ifndef LB_TOOL
#error "define LB_TOOL, the tool's name for its messages, before bench_live_opts.h"
#endif

#define LB_NOT_MINE 1		/* an option function's: not one of mine */

struct lb_opts {
	const char *rx_netns, *rx_iface, *tx_netns, *tx_iface;
	__u32 rounds;
	double steady_s;
	__u32 flows;
	double zipf;
	double ipv6_share;
	__u64 seed;
	__u32 window_ms;
	double hh_fraction;
	__u32 depth;
};

static int lb_parse_num(const char *s, const char *what, double lo, double hi,
			double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !*s || !(v >= lo && v <= hi)) {
		fprintf(stderr, LB_TOOL ": %s must be a number from %g to %g, not \"%s\".\n",
			what, lo, hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int lb_parse_int(const char *s, const char *what, double lo, double hi,
			__u32 *out)
{
	double v;
	int err = lb_parse_num(s, what, lo, hi, &v);

	if (!err && v != (double)(__u32)v) {
		fprintf(stderr, LB_TOOL ": %s must be a whole number, not \"%s\".\n",
			what, s);
		return -EINVAL;
	}
	if (!err)
		*out = (__u32)v;
	return err;
}

/* The usage lines of the traffic's options. */
static void lb_usage_traffic(FILE *out)
{
	fprintf(out,
		"  --flows F           flows (default 100000)\n"
		"  --zipf S            Zipf exponent (default 1.1)\n"
		"  --ipv6-share F      fraction of IPv6 flows (default 0.3)\n"
		"  --seed X            traffic seed (default 1)\n");
}

#define LB_LONGOPTS							\
	{ "rx-netns", required_argument, NULL, 'R' },			\
	{ "rx-iface", required_argument, NULL, 'r' },			\
	{ "tx-netns", required_argument, NULL, 'T' },			\
	{ "tx-iface", required_argument, NULL, 't' },			\
	{ "rounds", required_argument, NULL, 'n' },			\
	{ "steady", required_argument, NULL, 's' },			\
	{ "flows", required_argument, NULL, 'f' },			\
	{ "zipf", required_argument, NULL, 'z' },			\
	{ "ipv6-share", required_argument, NULL, '6' },			\
	{ "seed", required_argument, NULL, 'S' },			\
	{ "window", required_argument, NULL, 'w' },			\
	{ "hh-fraction", required_argument, NULL, 'p' },		\
	{ "depth", required_argument, NULL, 'd' },			\
	{ "help", no_argument, NULL, 'h' }

/* One of LB_LONGOPTS' options: 0, an error, or LB_NOT_MINE. */
static int lb_parse_opt(int c, const char *arg, struct lb_opts *o)
{
	double v;
	int err;

	switch (c) {
	case 'R': o->rx_netns = arg; return 0;
	case 'r': o->rx_iface = arg; return 0;
	case 'T': o->tx_netns = arg; return 0;
	case 't': o->tx_iface = arg; return 0;
	case 'n': return lb_parse_int(arg, "--rounds", 1, LB_MAX_ROUNDS, &o->rounds);
	case 's': return lb_parse_num(arg, "--steady", 0.01, 600, &o->steady_s);
	case 'f': return lb_parse_int(arg, "--flows", 1, 1e6, &o->flows);
	case 'z': return lb_parse_num(arg, "--zipf", 0, 10, &o->zipf);
	case '6': return lb_parse_num(arg, "--ipv6-share", 0, 1, &o->ipv6_share);
	case 'S':
		err = lb_parse_num(arg, "--seed", 0, 1e18, &v);
		o->seed = (__u64)v;
		return err;
	case 'w': return lb_parse_int(arg, "--window", 10, 3600000, &o->window_ms);
	case 'p': return lb_parse_num(arg, "--hh-fraction", 1e-9, 1, &o->hh_fraction);
	case 'd': return lb_parse_int(arg, "--depth", 1, FS_CMS_MAX_DEPTH, &o->depth);
	}
	return LB_NOT_MINE;
}

/*
 * The command line: LB_LONGOPTS' options into *o, the tool's own through
 * mine(c, optarg, ctx) (NULL: none), --help through usage() and exit 0.
 * The four interfaces are required, and no argument beyond the options.
 */
static int lb_parse_args(int argc, char **argv, const struct option *longopts,
			 struct lb_opts *o,
			 int (*mine)(int c, const char *arg, void *ctx), void *ctx,
			 void (*usage)(FILE *out))
{
	int c, err = 0;

	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		err = lb_parse_opt(c, optarg, o);
		if (err == LB_NOT_MINE && mine)
			err = mine(c, optarg, ctx);
		if (err == LB_NOT_MINE) {
			fprintf(stderr, LB_TOOL ": '%s' is not an option or lacks its value (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, LB_TOOL ": unexpected argument \"%s\".\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->rx_netns || !o->rx_iface || !o->tx_netns || !o->tx_iface) {
		fprintf(stderr, LB_TOOL ": --rx-netns, --rx-iface, --tx-netns and --tx-iface are required.\n");
		return -EINVAL;
	}
	return 0;
}

#endif /* FLOWSKETCH_BENCH_LIVE_OPTS_H */
