// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_opttable.c - the option-table engine (user/lib/opttable.h): values,
 * defaults, repeats, the errors getopt finds and the one message each gets,
 * and the --help and man text made from the rows.
 */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "opttable.h"

struct opts {
	unsigned int count;
	const char *name;
	bool flag;
	int verbose;
};

/* The last message, as a program would print it. */
static char msg[256];

static int bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int opt_count(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *arg, void *o)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || end == arg || v < opt->min || v > opt->max)
		return bad("--%s must be from %lld to %lld, not '%s'", opt->name,
			   opt->min, opt->max, arg);
	*(unsigned int *)((char *)o + opt->off) = (unsigned int)v;
	return 0;
}

static int getopt_error(const struct fs_optset *set, int ret, char **argv)
{
	if (ret == ':')
		return bad("%s needs a value", argv[optind - 1]);
	return bad("unknown option %s", argv[optind - 1]);
}

static const struct fs_opt rows[] = {
	{ "count", 'c', "N", opt_count, offsetof(struct opts, count), 1, 9, "3",
	  "how many (default 3)" },
	{ "name", 0, "NAME", NULL, offsetof(struct opts, name), 0, 0, "anon",
	  "who\n(default anon)" },
	{ "flag", 'f', NULL, NULL, offsetof(struct opts, flag), 0, 0, NULL,
	  "\nset the flag" },
	{ "verbose", 'v', NULL, fs_opt_count, offsetof(struct opts, verbose), 0, 0,
	  NULL, "more" },
	{ "secret", 0, NULL, NULL, offsetof(struct opts, flag), 0, 0, NULL, NULL },
	{ 0 }
};

static const struct fs_optset set = {
	.name = "t",
	.usage = "Usage: t [options]\n\n",
	.footer = "end\n",
	.opts = rows,
	.help_col = 16,
	.getopt_error = getopt_error,
};

/* Parse a NULL-terminated word list (argv[0] "t" added). */
static int parse(struct opts *o, uint64_t *given, ...)
{
	static char *argv[16];
	va_list ap;
	int argc = 1, ret;

	argv[0] = "t";
	va_start(ap, given);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	memset(o, 0, sizeof(*o));
	msg[0] = 0;
	ret = fs_opt_parse(&set, argc, argv, o, given);
	return ret;
}

static void test_defaults(void **state)
{
	struct opts o;
	uint64_t given;

	assert_int_equal(parse(&o, &given, NULL), 0);
	assert_int_equal(o.count, 3);
	assert_string_equal(o.name, "anon");
	assert_false(o.flag);
	assert_int_equal(given, 0);
	assert_false(fs_opt_given(&set, given, "count"));
	assert_string_equal(msg, "");
}

static void test_values_and_given(void **state)
{
	struct opts o;
	uint64_t given;

	assert_int_equal(parse(&o, &given, "-c", "7", "--name=bob", "-f", NULL), 0);
	assert_int_equal(o.count, 7);
	assert_string_equal(o.name, "bob");
	assert_true(o.flag);
	assert_true(fs_opt_given(&set, given, "count"));
	assert_true(fs_opt_given(&set, given, "name"));
	assert_true(fs_opt_given(&set, given, "flag"));
	assert_false(fs_opt_given(&set, given, "verbose"));
	assert_false(fs_opt_given(&set, given, "no-such-row"));
}

static void test_bad_value(void **state)
{
	struct opts o;

	assert_int_equal(parse(&o, NULL, "--count", "12", NULL), -EINVAL);
	assert_string_equal(msg, "--count must be from 1 to 9, not '12'");
	assert_int_equal(parse(&o, NULL, "-cx", NULL), -EINVAL);
	assert_string_equal(msg, "--count must be from 1 to 9, not 'x'");
}

static void test_missing_argument(void **state)
{
	struct opts o;

	assert_int_equal(parse(&o, NULL, "--count", NULL), -EINVAL);
	assert_string_equal(msg, "--count needs a value");
	assert_int_equal(parse(&o, NULL, "-f", "-c", NULL), -EINVAL);
	assert_string_equal(msg, "-c needs a value");
}

static void test_unknown_option(void **state)
{
	struct opts o;

	assert_int_equal(parse(&o, NULL, "--bogus", NULL), -EINVAL);
	assert_string_equal(msg, "unknown option --bogus");
	assert_int_equal(parse(&o, NULL, "-q", NULL), -EINVAL);
	assert_string_equal(msg, "unknown option -q");
	/* A value for an option that takes none is getopt's '?' too. */
	assert_int_equal(parse(&o, NULL, "--flag=1", NULL), -EINVAL);
	assert_string_equal(msg, "unknown option --flag=1");
	/* The first bad word wins: nothing after it is looked at. */
	assert_int_equal(parse(&o, NULL, "--count", "0", "--bogus", NULL), -EINVAL);
	assert_string_equal(msg, "--count must be from 1 to 9, not '0'");
}

static void test_repeated_option(void **state)
{
	struct opts o;

	assert_int_equal(parse(&o, NULL, "-c", "2", "--count", "5", NULL), 0);
	assert_int_equal(o.count, 5);
	assert_int_equal(parse(&o, NULL, "-vv", "--verbose", NULL), 0);
	assert_int_equal(o.verbose, 3);
	/* A hidden row parses like any other. */
	assert_int_equal(parse(&o, NULL, "--secret", NULL), 0);
	assert_true(o.flag);
}

static void test_operands(void **state)
{
	struct opts o;

	assert_int_equal(parse(&o, NULL, "-f", "word", "-c", "4", NULL), 0);
	/* glibc permutes: the operand is left after the options. */
	assert_int_equal(o.count, 4);
	assert_int_equal(optind, 4);
}

static char *text(void (*fn)(FILE *, const struct fs_optset *))
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	fn(f, &set);
	fclose(f);
	return buf;
}

static void test_help(void **state)
{
	assert_string_equal(text(fs_opt_help),
		"Usage: t [options]\n\n"
		"  -c, --count N how many (default 3)\n"
		"      --name NAME  who\n"
		"                (default anon)\n"
		"  -f, --flag\n"
		"                set the flag\n"
		"  -v, --verbose more\n"
		"end\n");
}

static void test_man(void **state)
{
	assert_string_equal(text(fs_opt_man),
		".TP\n\\fB\\-c\\fR, \\fB\\-\\-count\\fR \\fIN\\fR\nhow many (default 3)\n"
		".TP\n\\fB\\-\\-name\\fR \\fINAME\\fR\nwho\n(default anon)\n"
		".TP\n\\fB\\-f\\fR, \\fB\\-\\-flag\\fR\nset the flag\n"
		".TP\n\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR\nmore\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values_and_given),
		cmocka_unit_test(test_bad_value),
		cmocka_unit_test(test_missing_argument),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_repeated_option),
		cmocka_unit_test(test_operands),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_man),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
