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
 *
 * The bursty pattern's options (three veth pairs fed in turn; fs-livebench's
 * bursty phase) are a group of their own: a tool that measures it lists
 * LB_BURSTY_LONGOPTS too, passes their characters to lb_parse_bursty() from
 * its option function, prints lb_usage_bursty() in its --help and checks
 * the whole with lb_bursty_check() after lb_parse_args() (inline: the
 * tools that do not measure it leave them unused).
 */
#ifndef FLOWSKETCH_BENCH_LIVE_OPTS_H
#define FLOWSKETCH_BENCH_LIVE_OPTS_H

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
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

/* ------------------------------------------------------------ bursty */

#define LB_PAIRS 3		/* veth pairs of the bursty pattern: --pair twice */
#define LB_MAX_CYCLES 10	/* --bursty-cycles at most */

struct lb_bursty_opts {
	/* The pairs beside --tx-iface/--rx-iface (--pair TX:RX), between the
	 * same two namespaces: none, or LB_PAIRS - 1 of them. */
	char tx[LB_PAIRS - 1][IF_NAMESIZE], rx[LB_PAIRS - 1][IF_NAMESIZE];
	__u32 npairs;
	__u32 cycles;		/* measured cycles per program and round; 0: none */
	__u32 burst;		/* packets measured per turn */
	double load_s;		/* traffic after each burst, on its pair */
	__u32 flows;		/* flows of the bursty traffic */
};

/* 10,000-packet bursts: the lines a burst misses on are a larger share
 * of a short one (full / parse-only went 5.1x, 4.3x, 3.9x and 3.8x at
 * 5,000, 10,000, 20,000 and 50,000 packets in one series of runs). */
#define LB_BURSTY_DEFAULTS { .cycles = 1, .burst = 10000, .load_s = 1.0, .flows = 20000 }

static inline void lb_usage_bursty(FILE *out)
{
	fprintf(out,
		"  bursty phase (three veth pairs fed in turn, each pair's burst after a quiet\n"
		"  spell during which the two others carry traffic on the same CPU):\n"
		"  --pair TX:RX        one more veth pair between the same namespaces, TX\n"
		"                      sending, RX receiving with --rx-iface's MAC; give it\n"
		"                      twice for the bursty phase (bench/live.sh does), or\n"
		"                      not at all to skip it\n"
		"  --bursty-cycles N   cycles measured per program and round, a burst on\n"
		"                      each pair, after one unmeasured cycle (default 1,\n"
		"                      max %u; 0 skips the phase)\n"
		"  --bursty-burst N    packets measured per burst (default 10000)\n"
		"  --bursty-load S     seconds of traffic on a pair after its burst: the\n"
		"                      others' quiet spell is two of these (default 1)\n"
		"  --bursty-flows F    flows of the bursty traffic, drawn with --seed + 1\n"
		"                      (default 20000)\n",
		LB_MAX_CYCLES);
}

#define LB_BURSTY_LONGOPTS						\
	{ "pair", required_argument, NULL, 'P' + 512 },			\
	{ "bursty-cycles", required_argument, NULL, 'c' + 512 },	\
	{ "bursty-burst", required_argument, NULL, 'b' + 512 },		\
	{ "bursty-load", required_argument, NULL, 'l' + 512 },		\
	{ "bursty-flows", required_argument, NULL, 'f' + 512 }

/* "TX:RX", each a possible interface name. */
static inline int lb_parse_pair(const char *arg, struct lb_bursty_opts *b)
{
	const char *colon = strchr(arg, ':');
	size_t ntx = colon ? (size_t)(colon - arg) : 0;

	if (b->npairs == LB_PAIRS - 1) {
		fprintf(stderr, LB_TOOL ": --pair is given at most twice (%u pairs in all).\n",
			LB_PAIRS);
		return -EINVAL;
	}
	if (!colon || !ntx || ntx >= IF_NAMESIZE || !colon[1] ||
	    strlen(colon + 1) >= IF_NAMESIZE || strchr(colon + 1, ':')) {
		fprintf(stderr, LB_TOOL ": --pair must be TX:RX, two interface names, not \"%s\".\n",
			arg);
		return -EINVAL;
	}
	memcpy(b->tx[b->npairs], arg, ntx);
	b->tx[b->npairs][ntx] = 0;
	strcpy(b->rx[b->npairs], colon + 1);
	b->npairs++;
	return 0;
}

/* One of LB_BURSTY_LONGOPTS' options: 0, an error, or LB_NOT_MINE. */
static inline int lb_parse_bursty(int c, const char *arg, struct lb_bursty_opts *b)
{
	switch (c) {
	case 'P' + 512: return lb_parse_pair(arg, b);
	case 'c' + 512: return lb_parse_int(arg, "--bursty-cycles", 0, LB_MAX_CYCLES, &b->cycles);
	case 'b' + 512: return lb_parse_int(arg, "--bursty-burst", 1, 1e9, &b->burst);
	case 'l' + 512: return lb_parse_num(arg, "--bursty-load", 0, 600, &b->load_s);
	case 'f' + 512: return lb_parse_int(arg, "--bursty-flows", 1, 1e6, &b->flows);
	}
	return LB_NOT_MINE;
}

/* After lb_parse_args(): the pairs are all or none.  The phase runs when
 * they are all there and --bursty-cycles is not 0. */
static inline int lb_bursty_check(const struct lb_bursty_opts *b)
{
	if (b->npairs && b->npairs != LB_PAIRS - 1) {
		fprintf(stderr, LB_TOOL ": --pair is given twice (%u pairs in all) or not at all, not once.\n",
			LB_PAIRS);
		return -EINVAL;
	}
	return 0;
}

static inline bool lb_bursty_on(const struct lb_bursty_opts *b)
{
	return b->npairs == LB_PAIRS - 1 && b->cycles > 0;
}

#endif /* FLOWSKETCH_BENCH_LIVE_OPTS_H */
