// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * main.c - `flowsketch`: global options, then one command.
 *
 * Global options stop at the first word that is not one (stop_at_operand),
 * so each command parses its own options, from its own table, from its own
 * argv.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "args.h"
#include "cli.h"
#include "client.h"
#include "protocol.h"
#include "flowsketch/compat.h"

static const struct {
	const char *name;
	int (*run)(const struct fs_cli *cli, int argc, char **argv);
	const char *summary;
	const struct fs_optset *opts;	/* NULL: subcommands (block) */
} commands[] = {
	{ "top", fs_cmd_top, "heaviest flows of the last window(s)", &fs_top_optset },
	{ "spread", fs_cmd_spread, "sources or destinations with the most distinct peers", &fs_spread_optset },
	{ "accuracy", fs_cmd_accuracy, "the sketches' error, measured against a keyed sample", &fs_accuracy_optset },
	{ "flows", fs_cmd_flows, "distinct flows, sources and destinations", &fs_flows_optset },
	{ "status", fs_cmd_status, "daemon, datapath, sketch parameters, counters", &fs_status_optset },
	{ "size", fs_cmd_size, "sizing calculator for Bloom, Count-Min, HyperLogLog", &fs_size_optset },
	{ "policy", fs_cmd_policy, "the mitigation policy: rules, keys above them, decisions; reload", &fs_policy_optset },
	{ "block", fs_cmd_block, "sources the datapath drops: add, del, list, load, clear", NULL },
	{ "export", fs_cmd_export, "a span's sketches for Redis, PostgreSQL or merge", &fs_export_optset },
	{ "merge", fs_cmd_merge, "top, flows, prefixes or spreaders of many hosts' exports", &fs_merge_optset },
	{ "plot", fs_cmd_plot, "a span's packets, bytes, flows and top talkers, as a PNG", &fs_plot_optset },
};

static int show_help(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *arg, void *base)
{
	size_t i;

	printf("Usage: flowsketch [--socket PATH] [--timeout SECONDS] COMMAND [OPTIONS]\n"
	       "\n"
	       "Ask flowsketchd what its sketches saw, export them, merge many hosts'\n"
	       "exports, or size a sketch.\n"
	       "\n"
	       "Commands:\n");
	for (i = 0; i < FS_ARRAY_SIZE(commands); i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].summary);
	fs_opt_help(stdout, set);
	return FS_OPT_STOP;
}

/* --roff (hidden): flowsketch(8)'s GLOBAL OPTIONS and COMMANDS sections,
 * each command with its summary and options. */
static int show_man(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *base)
{
	size_t i;

	printf(".SH GLOBAL OPTIONS\n");
	fs_opt_man(stdout, set);
	printf(".SH COMMANDS\n");
	for (i = 0; i < FS_ARRAY_SIZE(commands); i++) {
		printf(".SS %s\n%s.\n", commands[i].name, commands[i].summary);
		if (commands[i].opts)
			fs_opt_man(stdout, commands[i].opts);
	}
	return FS_OPT_STOP;
}

static int opt_timeout(const struct fs_optset *set, const struct fs_opt *opt,
		       const char *arg, void *cli)
{
	if (fs_parse_seconds(arg, &((struct fs_cli *)cli)->timeout_s))
		return fs_bad_value(set, "--timeout needs a positive number of seconds up to a day (5, 90s, 2m), not '%s'",
				    arg);
	return 0;
}

static const struct fs_opt global_opts[] = {
	{ "socket", 's', "PATH", NULL, offsetof(struct fs_cli, socket_path), 0, 0,
	  FS_SOCKET_DEFAULT, "daemon socket (default " FS_SOCKET_DEFAULT ")" },
	{ "timeout", 't', "SECONDS", opt_timeout, 0, 0, 0, FS_STR(FS_CLIENT_TIMEOUT_S),
	  "\ngive up on the daemon after this long, per request\n"
	  "(default " FS_STR(FS_CLIENT_TIMEOUT_S) "; 90s, 2m also accepted)" },
	{ "help", 'h', NULL, show_help, 0, 0, 0, NULL,
	  "this text; 'flowsketch COMMAND --help' for a command" },
	{ "roff", 0, NULL, show_man, 0, 0, 0, NULL, NULL },
	{ 0 }
};

static const struct fs_optset global_optset = {
	.usage = "\nOptions:\n",
	.footer = "\nExit status: 0 ok, 1 the daemon could not answer, 2 bad arguments.\n",
	.opts = global_opts,
	.help_col = FS_CLI_HELP_COL,
	.stop_at_operand = true,
	.getopt_error = fs_cli_getopt_error,
};

int main(int argc, char **argv)
{
	struct fs_cli cli = { 0 };
	const char *name;
	size_t i;
	int ret;

	ret = fs_cli_parse(&global_optset, argc, argv, &cli, NULL);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	if (!*cli.socket_path || strlen(cli.socket_path) > fs_client_max_path())
		return fs_usage_error(NULL, "--socket needs a path of 1 to %u bytes",
				      fs_client_max_path());
	if (optind >= argc)
		return fs_usage_error(NULL, "no command given (see 'flowsketch --help')");
	name = argv[optind];
	for (i = 0; i < FS_ARRAY_SIZE(commands); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		/* The command's argv[0] is its name (fs_opt_parse() starts
		 * getopt afresh on it). */
		return commands[i].run(&cli, argc - optind, argv + optind);
	}
	return fs_usage_error(NULL, "unknown command '%s' (see 'flowsketch --help')",
			      name);
}
