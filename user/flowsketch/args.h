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
#include "opttable.h"

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
/* fs_error() about a malformed answer of the daemon's; returns -EPROTO. */
int fs_bad_answer(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fs_error("out of memory"); returns -ENOMEM. */
int fs_no_memory(void);
/* From now on fs_error() keeps its last message in buf (len bytes, NUL
 * terminated) instead of printing it; NULL restores stderr. */
void fs_error_capture(char *buf, size_t len);

/* "flowsketch CMD: <message>" on stderr (no CMD when NULL); returns
 * FS_EXIT_USAGE. */
int fs_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Refuses words left after the options; FS_EXIT_OK when there are none. */
int fs_no_operands(const char *cmd, int argc, char **argv);

/* A parse function's refusal: fs_usage_error()'s line for the set's
 * command, and -EINVAL. */
int fs_bad_value(const struct fs_optset *set, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Every command set's getopt_error: the message for what getopt_long()
 * returned as '?' (unknown option) or ':' (missing value), naming the
 * offending word; returns -EINVAL.
 */
int fs_cli_getopt_error(const struct fs_optset *set, int ret, char **argv);

/* fs_opt_parse() for a command: FS_EXIT_OK (optind at the first operand),
 * FS_HELP_SHOWN or FS_EXIT_USAGE after a message. */
int fs_cli_parse(const struct fs_optset *set, int argc, char **argv,
		 void *base, uint64_t *given);

/* fs_cli_parse() for a command that takes no operands: fs_no_operands()
 * when the options are well-formed. */
int fs_cli_parse_all(const struct fs_optset *set, int argc, char **argv,
		     void *base);

/* Which of the NULL-terminated words arg is, or -EINVAL after "--NAME must
 * be LIST, not 'ARG'". */
int fs_opt_word(const struct fs_optset *set, const struct fs_opt *opt,
		const char *arg, const char *const *words, const char *list);

/*
 * Rows shared by the commands: --span SECONDS (fs_parse_seconds() into a
 * __u32), --direction in|out|both (the word, a const char *), -n N (a
 * __u32 in the row's [min, max]).
 */
fs_opt_parse_fn fs_opt_span, fs_opt_direction, fs_opt_number;

/* Help columns of the commands' option tables. */
#define FS_CLI_HELP_COL 21

/* Integer constants in help text. */
#define FS_STR_(x) #x
#define FS_STR(x) FS_STR_(x)

#endif /* FLOWSKETCH_CLI_ARGS_H */
