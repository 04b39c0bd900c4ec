/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cli.h - the commands of `flowsketch` and what they share.
 *
 * Every command is a function taking its own argv (argv[0] is the command
 * name) and returning the process exit status: FS_EXIT_OK, FS_EXIT_RUNTIME
 * when the daemon could not be asked or answered badly, FS_EXIT_USAGE for
 * bad arguments.  Whatever fails prints exactly one line on stderr, at the
 * place that knows what went wrong; callers only pass the status up.
 */
#ifndef FLOWSKETCH_CLI_H
#define FLOWSKETCH_CLI_H

#include "opttable.h"

#define FS_EXIT_OK 0
#define FS_EXIT_RUNTIME 1
#define FS_EXIT_USAGE 2
/* What a command's option parser returns once it has printed --help:
 * nothing left to do, exit FS_EXIT_OK. */
#define FS_HELP_SHOWN (-1)

struct fs_cli {
	const char *socket_path;
	/* Seconds the daemon has for a whole exchange (--timeout). */
	unsigned int timeout_s;
};

/* The commands' option tables (opttable.h): --help and flowsketch(8). */
extern const struct fs_optset fs_top_optset, fs_flows_optset, fs_status_optset,
	fs_size_optset, fs_export_optset, fs_merge_optset, fs_plot_optset,
	fs_spread_optset, fs_policy_optset, fs_accuracy_optset;

int fs_cmd_top(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_plot(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_flows(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_status(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_size(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_block(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_policy(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_export(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_merge(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_spread(const struct fs_cli *cli, int argc, char **argv);
int fs_cmd_accuracy(const struct fs_cli *cli, int argc, char **argv);

#endif /* FLOWSKETCH_CLI_H */
