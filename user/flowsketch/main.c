// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * main.c - `flowsketch`: global options, then one command.
 *
 * Global options stop at the first word that is not one ("+" in the
 * optstring), so each command parses its own options from its own argv.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "args.h"
#include "cli.h"
#include "client.h"
#include "protocol.h"

static const struct {
	const char *name;
	int (*run)(const struct fs_cli *cli, int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "top", fs_cmd_top, "heaviest flows of the last window(s)" },
	{ "flows", fs_cmd_flows, "distinct flows, sources and destinations" },
	{ "status", fs_cmd_status, "daemon, datapath, sketch parameters, counters" },
	{ "size", fs_cmd_size, "sizing calculator for Bloom, Count-Min, HyperLogLog" },
	{ "block", fs_cmd_block, "sources the datapath drops: add, del, list, load, clear" },
	{ "export", fs_cmd_export, "a span's sketches for Redis, PostgreSQL or merge" },
	{ "merge", fs_cmd_merge, "top or flows of many hosts' exports together" },
	{ "plot", fs_cmd_plot, "a span's packets, bytes, flows and top talkers, as a PNG" },
};

static void usage(void)
{
	size_t i;

	printf("Usage: flowsketch [--socket PATH] [--timeout SECONDS] COMMAND [OPTIONS]\n"
	       "\n"
	       "Ask flowsketchd what its sketches saw, export them, merge many hosts'\n"
	       "exports, or size a sketch.\n"
	       "\n"
	       "Commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].summary);
	printf("\n"
	       "Options:\n"
	       "  -s, --socket PATH  daemon socket (default %s)\n"
	       "  -t, --timeout SECONDS\n"
	       "                     give up on the daemon after this long, per request\n"
	       "                     (default %u; 90s, 2m also accepted)\n"
	       "  -h, --help         this text; 'flowsketch COMMAND --help' for a command\n"
	       "\n"
	       "Exit status: 0 ok, 1 the daemon could not answer, 2 bad arguments.\n",
	       FS_SOCKET_DEFAULT, FS_CLIENT_TIMEOUT_S);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct fs_cli cli = {
		.socket_path = FS_SOCKET_DEFAULT,
		.timeout_s = FS_CLIENT_TIMEOUT_S,
	};
	const char *name;
	size_t i;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:s:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			cli.socket_path = optarg;
			break;
		case 't':
			if (fs_parse_seconds(optarg, &cli.timeout_s))
				return fs_usage_error(NULL, "--timeout needs a positive number of seconds up to a day (5, 90s, 2m), not '%s'",
						      optarg);
			break;
		case 'h':
			usage();
			return FS_EXIT_OK;
		default:
			return fs_option_error(NULL, c, argv);
		}
	}
	if (!*cli.socket_path || strlen(cli.socket_path) > fs_client_max_path())
		return fs_usage_error(NULL, "--socket needs a path of 1 to %u bytes",
				      fs_client_max_path());
	if (optind >= argc)
		return fs_usage_error(NULL, "no command given (see 'flowsketch --help')");
	name = argv[optind];
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		/* optind = 0 makes glibc's getopt start afresh on the
		 * command's argv, whose argv[0] is the command name. */
		argc -= optind;
		argv += optind;
		optind = 0;
		return commands[i].run(&cli, argc, argv);
	}
	return fs_usage_error(NULL, "unknown command '%s' (see 'flowsketch --help')",
			      name);
}
