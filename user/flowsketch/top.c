// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * top.c - `flowsketch top`: the heaviest flows, like `iftop -t`.
 *
 * One request per screen.  Between screens the command sleeps until just
 * after the daemon closes the next window (window_end + window_seconds),
 * so every screen shows a newly finished window rather than the same one
 * twice.  SIGINT ends the loop with status 0.  On a terminal the screens
 * are a full-screen view with keys (top_screen.c); otherwise each is
 * printed after the last, for a pipe or a log.
 *
 * With --by KEY the table is of prefixes (top_prefixes.c), printed once:
 * a prefix's estimate is sampled, not a flow's bound, and one table is
 * what a script or an operator's check wants of it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "args.h"
#include "cli.h"
#include "client.h"
#include "keyspec.h"
#include "show.h"
#include "top_screen.h"
#include "top_table.h"

#define TOP_DEFAULT_N 10
#define TOP_MAX_N 10000
/* Redraw this long after the window should have closed, so the daemon has
 * rotated and merged it by the time we ask. */
#define TOP_REDRAW_MARGIN_NS 200000000L

/* The window a table showed: when it ended and its length (seconds). */
struct top_window {
	__u64 end, seconds;
};

static volatile sig_atomic_t top_interrupted;

static void on_sigint(int sig)
{
	top_interrupted = 1;
}

static int opt_sort(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *o)
{
	static const char *const words[] = { "packets", "bytes", "connections", NULL };
	int i = fs_opt_word(set, opt, arg, words, "packets, bytes or connections");

	if (i >= 0)
		((struct top_opts *)o)->sort = arg;
	return i < 0 ? i : 0;
}

/* --json prints one answer: it implies --once. */
static int opt_json(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *o)
{
	((struct top_opts *)o)->json = ((struct top_opts *)o)->once = true;
	return 0;
}

/* --by KEY: prefixes (or hosts) instead of flows, one table. */
static int opt_by(const struct fs_optset *set, const struct fs_opt *opt,
		  const char *arg, void *o)
{
	struct fs_keyspec k;
	const char *why;

	if (fs_keyspec_parse(arg, &k, &why))
		return fs_bad_value(set, "--by '%s' is no KEY: %s (KEY: src, dst, src4/N, dst4/N, src6/N or dst6/N)",
				    arg, why);
	((struct top_opts *)o)->by = arg;
	((struct top_opts *)o)->once = true;
	return 0;
}

#define OFF(field) offsetof(struct top_opts, field)

static const struct fs_opt top_opts[] = {
	{ "number", 'n', "N", fs_opt_number, OFF(n), 1, TOP_MAX_N, NULL,
	  "flows to list (default " FS_STR(TOP_DEFAULT_N) ", at most " FS_STR(TOP_MAX_N) ")" },
	{ "sort", 'o', "KEY", opt_sort, 0, 0, 0, NULL,
	  "packets (default), bytes, or connections: who opens the\n"
	  "most TCP connections (source: the side that opened\n"
	  "them; destination: the port connected to)" },
	{ "span", 't', "SECONDS", fs_opt_span, OFF(span), 0, 0, NULL,
	  "span to sum, rounded up to whole windows (default one\n"
	  "window); units s, m, h accepted (90, 5m, 1h)" },
	{ "direction", 'd', "D", fs_opt_direction, OFF(direction), 0, 0, NULL,
	  "in (what the interfaces receive), out (what they\n"
	  "send) or both (default); sent flows are marked" },
	{ "by", 'b', "KEY", opt_by, 0, 0, 0, NULL,
	  "the heaviest prefixes instead of flows (flowsketchd\n"
	  "--detect prefixes): src or dst (hosts), src4/N or\n"
	  "dst4/N (N 8, 16, 24, 32), src6/N or dst6/N (N 32,\n"
	  "48, 64, 128); prints one table (implies --once)" },
	{ "once", '1', NULL, NULL, OFF(once), 0, 0, NULL, "print one table and exit" },
	{ "json", 'j', NULL, opt_json, 0, 0, 0, NULL,
	  "print the daemon's answer as JSON (implies --once)" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_top_optset = {
	.name = "top",
	.usage =
	"Usage: flowsketch [--socket PATH] [--timeout SECONDS] top [-n N] [--sort packets|bytes|connections]\n"
	"                  [--span SECONDS] [--direction in|out|both] [--by KEY] [--once] [--json]\n"
	"\n"
	"The flows with the most packets (or bytes), redrawn every window until\n"
	"interrupted.  Counts are Count-Min estimates: never below the truth, and\n"
	"above it by at most the bound printed in the header (probability 1 - delta).\n"
	"With --by, prefix counts are sampled: each has its bound either way.\n"
	"\n",
	.opts = top_opts,
	.help_col = FS_CLI_HELP_COL,
	.getopt_error = fs_cli_getopt_error,
};

static int parse_opts(int argc, char **argv, struct top_opts *o)
{
	int ret = fs_cli_parse(&fs_top_optset, argc, argv, o, NULL);

	if (ret)
		return ret;
	if (!strcmp(o->sort, "connections") && o->direction &&
	    strcmp(o->direction, "both"))
		return fs_usage_error("top", "--direction does not apply to --sort connections: a connection's source is the side that opened it");
	if (o->by && !strcmp(o->sort, "connections"))
		return fs_usage_error("top", "--sort connections does not apply to --by %s: prefixes are counted in packets and bytes, sort by one of them",
				      o->by);
	return fs_no_operands("top", argc, argv);
}

/* Sleep until shortly after the window following `w` closes, or until a
 * signal unblocked in `mask` arrives. */
static void wait_next_window(const struct top_window *w, const sigset_t *mask)
{
	struct timespec now, delay = { 0 };
	double until = (double)(w->end + w->seconds) +
		       TOP_REDRAW_MARGIN_NS / 1e9, left;

	clock_gettime(CLOCK_REALTIME, &now);
	left = until - (now.tv_sec + now.tv_nsec / 1e9);
	/* A clock stepped by more than a window: fall back to the period. */
	if (left <= 0 || left > (double)w->seconds + 1)
		left = (double)w->seconds;
	delay.tv_sec = (time_t)left;
	delay.tv_nsec = (long)((left - (double)delay.tv_sec) * 1e9);
	ppoll(NULL, 0, &delay, mask);	/* cut short by SIGINT: the point */
}

int fs_cmd_top(const struct fs_cli *cli, int argc, char **argv)
{
	struct top_opts o = { .n = TOP_DEFAULT_N, .sort = "packets" };
	struct sigaction sa = { .sa_handler = on_sigint };
	sigset_t sigint, old_mask;
	bool tty = isatty(STDOUT_FILENO);
	struct top_window w;
	int ret, err;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	if (o.by)
		return fs_client_show(cli, fs_top_request(&o), o.json,
				      fs_prefixes_show);
	if (o.once)
		return fs_client_show(cli, fs_top_request(&o), o.json, fs_top_show);
	if (tty) {
		err = fs_top_screen(cli, &o);
		if (err != -ENOTTY)
			return err ? FS_EXIT_RUNTIME : FS_EXIT_OK;
	}

	/* SA_RESTART keeps an interrupted request going; the loop checks
	 * the flag once the screen is complete. */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&sigint);
	sigaddset(&sigint, SIGINT);
	for (;;) {
		if (tty)
			fputs("\033[H\033[2J", stdout);
		err = fs_top_table(cli, &o, stdout, &w.end, &w.seconds);
		fflush(stdout);
		if (err)
			return FS_EXIT_RUNTIME;
		/* SIGINT stays blocked from the check to the sleep, which
		 * unblocks it atomically: one arriving in between would
		 * otherwise be noticed only a whole window later. */
		sigprocmask(SIG_BLOCK, &sigint, &old_mask);
		if (!top_interrupted)
			wait_next_window(&w, &old_mask);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (top_interrupted)
			return FS_EXIT_OK;
		if (!tty)
			putchar('\n');
	}
}
