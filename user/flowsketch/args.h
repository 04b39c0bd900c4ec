/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * args.h - command-line values and the one-line errors about them.
 *
 * Parsers return 0 or -EINVAL and print nothing: the caller knows which
 * option the value belongs to and says so in its single message.
 */
#ifndef FLOWSKETCH_CLI_ARGS_H
#define FLOWSKETCH_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A decimal integer in [min, max], nothing else around it. */
int fs_parse_u32(const char *s, __u32 min, __u32 max, __u32 *out);

/* A positive whole number of seconds, with an optional unit s, m or h
 * ("90", "90s", "5m", "1h"); at most a day. */
int fs_parse_seconds(const char *s, __u32 *out);

/* A probability in (0, 1): "0.01" or "1%". */
int fs_parse_probability(const char *s, double *out);

/* A positive count, integral, up to 2^53 (exact in a double): "1000000"
 * or "1e6". */
int fs_parse_count(const char *s, double *out);

/* "flowsketch: <message>" on stderr. */
void fs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* From now on fs_error() keeps its last message in buf (len bytes, NUL
 * terminated) instead of printing it; NULL restores stderr. */
void fs_error_capture(char *buf, size_t len);

/* "flowsketch CMD: <message>" on stderr (no CMD when NULL); returns
 * FS_EXIT_USAGE. */
int fs_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The message for what getopt_long() returned as '?' (unknown option) or
 * ':' (missing value), naming the offending word; returns FS_EXIT_USAGE.
 * Needs opterr = 0 and an optstring starting with ':'.
 */
int fs_option_error(const char *cmd, int ret, char **argv);

/* Refuses words left after the options; FS_EXIT_OK when there are none. */
int fs_no_operands(const char *cmd, int argc, char **argv);

/*
 * The options of a command that takes only --json and --help (cmd names
 * it in messages; usage prints its help): FS_EXIT_OK, FS_HELP_SHOWN or
 * FS_EXIT_USAGE after a message.
 */
int fs_parse_json_only(const char *cmd, int argc, char **argv, bool *json,
		       void (*usage)(void));

#endif /* FLOWSKETCH_CLI_ARGS_H */
