/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * opttable.h - a program's options as one table: parsed with getopt_long,
 * printed as --help and as the OPTIONS of a man page from the same rows.
 *
 * A row (struct fs_opt) is one option:
 *   name        long name without "--"            "window"
 *   short_name  its letter, 0 when it has none     'i'
 *   arg         the argument's name in help, NULL  "SECONDS"
 *               when the option takes none
 *   parse       what the option does (below); NULL stores the argument
 *               (const char *) or, without one, true (bool) at off
 *   off         where in the caller's struct (offsetof) it stores
 *   min, max    bounds, for parse functions that check a number
 *   def         a default, fed to parse before argv (NULL: none)
 *   help        help text, lines split at '\n', each printed at the set's
 *               help column; a leading '\n' starts it on the next line;
 *               NULL: a hidden option, left out of --help and the man page
 * A table ends with a row whose name is NULL ({ 0 }).
 *
 * A parse function prints exactly one message when it refuses a value and
 * returns a negative errno; a positive return stops parsing (--help has
 * been printed): fs_opt_parse() returns it.  The caller's own checks
 * between options (one needs another) come after fs_opt_parse(), with
 * fs_opt_given() telling which options were on the command line.
 */
#ifndef FLOWSKETCH_OPTTABLE_H
#define FLOWSKETCH_OPTTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* At most this many rows a table: fs_opt_parse() reports them in a
 * 64-bit mask. */
#define FS_OPT_MAX 64

/* What a parse function returns once it has printed --help or the man
 * page text: stop, the program exits 0. */
#define FS_OPT_STOP 1

struct fs_opt;
struct fs_optset;

typedef int fs_opt_parse_fn(const struct fs_optset *set,
			    const struct fs_opt *opt, const char *arg,
			    void *base);

struct fs_opt {
	const char *name;
	int short_name;
	const char *arg;
	fs_opt_parse_fn *parse;
	size_t off;
	long long min, max;
	const char *def;
	const char *help;
};

struct fs_optset {
	const char *name;	/* the program or command, for messages */
	const char *usage;	/* --help before the options */
	const char *footer;	/* --help after them; NULL: none */
	const struct fs_opt *opts;
	/* The column help text starts at; an option line that reaches it
	 * is followed by two spaces. */
	unsigned int help_col;
	/* No four-column slot for a short name where there is none. */
	bool compact;
	/* Stop at the first operand (the CLI's global options). */
	bool stop_at_operand;
	/*
	 * The message for what getopt_long() returned as '?' (unknown
	 * option, or a value given to one that takes none) or ':' (missing
	 * value); returns a negative errno.
	 */
	int (*getopt_error)(const struct fs_optset *set, int ret, char **argv);
};

/*
 * Applies the defaults, then parses argv[1..] into base.  0: done, optind
 * is the first operand; FS_OPT_STOP: --help (or the man page) has been
 * printed; a negative errno after one message.  *given (may be NULL)
 * gets bit i set for each row i on the command line.
 */
int fs_opt_parse(const struct fs_optset *set, int argc, char **argv,
		 void *base, uint64_t *given);

/* Whether the option named name was in given (from fs_opt_parse()). */
bool fs_opt_given(const struct fs_optset *set, uint64_t given,
		  const char *name);

/* --help: usage, the options, the footer. */
void fs_opt_help(FILE *f, const struct fs_optset *set);
/* The options as man(7) .TP paragraphs. */
void fs_opt_man(FILE *f, const struct fs_optset *set);

/* Parse functions for rows: print the set's help (or its man page
 * options) on stdout and stop; count the option in an int. */
fs_opt_parse_fn fs_opt_show_help, fs_opt_show_man, fs_opt_count;

#endif /* FLOWSKETCH_OPTTABLE_H */
