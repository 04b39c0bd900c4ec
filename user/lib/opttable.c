// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* opttable.c - options from a table, on getopt_long (opttable.h). */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "opttable.h"

/* getopt_long's value for row i given by its long name: above any char,
 * so a row is told from a short option by value alone. */
#define LONG_VAL(i) (256 + (int)(i))

static int store(const struct fs_optset *set, const struct fs_opt *o,
		 const char *arg, void *base)
{
	char *at = (char *)base + o->off;

	if (o->parse)
		return o->parse(set, o, arg, base);
	if (o->arg)
		*(const char **)at = arg;
	else
		*(bool *)at = true;
	return 0;
}

/* The getopt_long() tables of set: a row for each option, then the
 * optstring of its short names ("+" first when it stops at an operand,
 * ":" to tell a missing value from an unknown option). */
static size_t build(const struct fs_optset *set, struct option *longs,
		    char *shorts)
{
	const struct fs_opt *o;
	size_t n = 0;

	if (set->stop_at_operand)
		*shorts++ = '+';
	*shorts++ = ':';
	for (o = set->opts; o->name && n < FS_OPT_MAX; o++, n++) {
		longs[n] = (struct option){ o->name,
			o->arg ? required_argument : no_argument, NULL,
			LONG_VAL(n) };
		if (!o->short_name)
			continue;
		*shorts++ = (char)o->short_name;
		if (o->arg)
			*shorts++ = ':';
	}
	longs[n] = (struct option){ 0 };
	*shorts = 0;
	return n;
}

static const struct fs_opt *row_of(const struct fs_optset *set, size_t n,
				   int c)
{
	size_t i;

	if (c >= LONG_VAL(0))
		return c < LONG_VAL(n) ? &set->opts[c - LONG_VAL(0)] : NULL;
	for (i = 0; i < n; i++)
		if (set->opts[i].short_name == c)
			return &set->opts[i];
	return NULL;
}

static int apply_defaults(const struct fs_optset *set, void *base)
{
	const struct fs_opt *o;
	int err;

	for (o = set->opts; o->name; o++) {
		if (o->def && (err = store(set, o, o->def, base)))
			return err;
	}
	return 0;
}

int fs_opt_parse(const struct fs_optset *set, int argc, char **argv,
		 void *base, uint64_t *given)
{
	struct option longs[FS_OPT_MAX + 1];
	char shorts[3 * FS_OPT_MAX + 3];
	const struct fs_opt *o;
	size_t n;
	int c, err;

	if (given)
		*given = 0;
	n = build(set, longs, shorts);
	err = apply_defaults(set, base);
	if (err)
		return err;
	/* optind 0: glibc starts afresh on this argv, whatever it parsed
	 * before (the CLI parses its global options, then a command's). */
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		o = row_of(set, n, c);
		if (!o)
			return set->getopt_error(set, c, argv);
		if (given)
			*given |= 1ULL << (o - set->opts);
		err = store(set, o, optarg, base);
		if (err)
			return err;
	}
	return 0;
}

bool fs_opt_given(const struct fs_optset *set, uint64_t given,
		  const char *name)
{
	size_t i;

	for (i = 0; set->opts[i].name && i < FS_OPT_MAX; i++)
		if (!strcmp(set->opts[i].name, name))
			return given & (1ULL << i);
	return false;
}

/* "  -i, --interface IFACE", and the help at the set's column: on the same
 * line when it fits, else two spaces on (or below, for a leading '\n'). */
static void help_row(FILE *f, const struct fs_optset *set,
		     const struct fs_opt *o)
{
	const char *help = o->help, *nl;
	int len;

	if (o->short_name)
		len = fprintf(f, "  -%c, --%s", o->short_name, o->name);
	else
		len = fprintf(f, "%s--%s", set->compact ? "  " : "      ", o->name);
	if (o->arg)
		len += fprintf(f, " %s", o->arg);
	if (*help == '\n') {
		help++;
		fprintf(f, "\n%*s", (int)set->help_col, "");
	} else {
		fprintf(f, "%*s", len < (int)set->help_col ?
			(int)set->help_col - len : 2, "");
	}
	while ((nl = strchr(help, '\n'))) {
		fprintf(f, "%.*s\n%*s", (int)(nl - help), help,
			(int)set->help_col, "");
		help = nl + 1;
	}
	fprintf(f, "%s\n", help);
}

void fs_opt_help(FILE *f, const struct fs_optset *set)
{
	const struct fs_opt *o;

	fputs(set->usage, f);
	for (o = set->opts; o->name; o++)
		if (o->help)
			help_row(f, set, o);
	if (set->footer)
		fputs(set->footer, f);
}

/* Text for roff: '\' and '-' escaped, a line never starting a request. */
static void man_text(FILE *f, const char *s)
{
	bool bol = true;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
		bol = *s == '\n';
	}
}

void fs_opt_man(FILE *f, const struct fs_optset *set)
{
	const struct fs_opt *o;

	for (o = set->opts; o->name; o++) {
		if (!o->help)
			continue;
		fputs(".TP\n", f);
		if (o->short_name)
			fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
		fputs("\\fB\\-\\-", f);
		man_text(f, o->name);
		fputs("\\fR", f);
		if (o->arg) {
			fputs(" \\fI", f);
			man_text(f, o->arg);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		man_text(f, o->help + (*o->help == '\n'));
		fputc('\n', f);
	}
}

int fs_opt_show_help(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *arg, void *base)
{
	fs_opt_help(stdout, set);
	return FS_OPT_STOP;
}

int fs_opt_show_man(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *base)
{
	fs_opt_man(stdout, set);
	return FS_OPT_STOP;
}

int fs_opt_count(const struct fs_optset *set, const struct fs_opt *opt,
		 const char *arg, void *base)
{
	(*(int *)((char *)base + opt->off))++;
	return 0;
}
