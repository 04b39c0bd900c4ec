// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* args.c - command-line values and the one-line errors about them. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "cli.h"
#include "duration.h"

#define FS_MAX_SECONDS (24 * 3600)
#define FS_MAX_EXACT_COUNT 9007199254740992.0 /* 2^53 */

int fs_parse_u32(const char *s, __u32 min, __u32 max, __u32 *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts "-1" and leading blanks; a count does not. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (__u32)v;
	return 0;
}

int fs_parse_seconds(const char *s, __u32 *out)
{
	__u64 sec;
	int err = fs_duration_parse(s, FS_MAX_SECONDS, &sec);

	if (!err)
		*out = (__u32)sec;
	return err;
}

/* A finite number with nothing after it but, optionally, `suffix`. */
static int parse_double(const char *s, const char *suffix, double *out,
			int *had_suffix)
{
	char *end;
	double v;

	if (!*s || (*s != '.' && *s != '-' && (*s < '0' || *s > '9')))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -EINVAL;
	*had_suffix = suffix && *end && !strcmp(end, suffix);
	if (*end && !*had_suffix)
		return -EINVAL;
	*out = v;
	return 0;
}

int fs_parse_probability(const char *s, double *out)
{
	int percent;
	double v;

	if (parse_double(s, "%", &v, &percent))
		return -EINVAL;
	if (percent)
		v /= 100;
	if (!(v > 0 && v < 1))
		return -EINVAL;
	*out = v;
	return 0;
}

int fs_parse_count(const char *s, double *out)
{
	int unused;
	double v;

	if (parse_double(s, NULL, &v, &unused))
		return -EINVAL;
	if (!(v >= 1 && v <= FS_MAX_EXACT_COUNT) || v != floor(v))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Where fs_error() writes instead of stderr, while a full-screen view owns
 * the terminal (fs_error_capture()). */
static char *error_buf;
static size_t error_len;

void fs_error_capture(char *buf, size_t len)
{
	error_buf = buf;
	error_len = len;
	if (buf && len)
		buf[0] = 0;
}

static void say(const char *fmt, va_list ap)
{
	if (error_buf && error_len) {
		vsnprintf(error_buf, error_len, fmt, ap);
		return;
	}
	fputs("flowsketch: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void fs_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

int fs_bad_answer(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return -EPROTO;
}

int fs_no_memory(void)
{
	fs_error("out of memory");
	return -ENOMEM;
}

static void usage_message(const char *cmd, const char *fmt, va_list ap)
{
	if (cmd)
		fprintf(stderr, "flowsketch %s: ", cmd);
	else
		fputs("flowsketch: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int fs_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_message(cmd, fmt, ap);
	va_end(ap);
	return FS_EXIT_USAGE;
}

int fs_bad_value(const struct fs_optset *set, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_message(set->name, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int fs_cli_getopt_error(const struct fs_optset *set, int ret, char **argv)
{
	/*
	 * getopt_long has stepped past a long option or a short option that
	 * ends its word, but not past "-x" inside a group such as "-x1"; a
	 * short option is therefore named from optopt.  optopt is 0 for an
	 * unknown long option, and a long option's val otherwise: '?' for a
	 * known long option means it was given a value it does not take.
	 */
	const char *word = argv[optind - 1], *cmd = set->name;
	char shortopt[3] = { '-', (char)optopt, 0 };
	bool long_word = !strncmp(word, "--", 2);

	if (optopt && !long_word)
		word = shortopt;
	if (ret == ':')
		return fs_bad_value(set, "option %s needs a value", word);
	if (optopt && long_word)
		return fs_bad_value(set, "option %.*s takes no value",
				    (int)strcspn(word, "="), word);
	return fs_bad_value(set, "unknown option %s (see 'flowsketch%s%s --help')",
			    word, cmd ? " " : "", cmd ? cmd : "");
}

int fs_cli_parse(const struct fs_optset *set, int argc, char **argv,
		 void *base, uint64_t *given)
{
	int ret = fs_opt_parse(set, argc, argv, base, given);

	if (ret == FS_OPT_STOP)
		return FS_HELP_SHOWN;
	return ret < 0 ? FS_EXIT_USAGE : FS_EXIT_OK;
}

int fs_cli_parse_all(const struct fs_optset *set, int argc, char **argv,
		     void *base)
{
	int ret = fs_cli_parse(set, argc, argv, base, NULL);

	return ret ? ret : fs_no_operands(set->name, argc, argv);
}

int fs_no_operands(const char *cmd, int argc, char **argv)
{
	if (optind < argc)
		return fs_usage_error(cmd, "unexpected argument '%s'",
				      argv[optind]);
	return FS_EXIT_OK;
}

int fs_opt_word(const struct fs_optset *set, const struct fs_opt *opt,
		const char *arg, const char *const *words, const char *list)
{
	int i;

	for (i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	return fs_bad_value(set, "--%s must be %s, not '%s'", opt->name, list, arg);
}

int fs_opt_span(const struct fs_optset *set, const struct fs_opt *opt,
		const char *arg, void *base)
{
	if (fs_parse_seconds(arg, (__u32 *)((char *)base + opt->off)))
		return fs_bad_value(set, "--span must be a positive number of seconds (at most a day), not '%s'",
				    arg);
	return 0;
}

int fs_opt_direction(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *arg, void *base)
{
	static const char *const words[] = { "in", "out", "both", NULL };
	int i = fs_opt_word(set, opt, arg, words, "in, out or both");

	if (i >= 0)
		*(const char **)((char *)base + opt->off) = arg;
	return i < 0 ? i : 0;
}

int fs_opt_number(const struct fs_optset *set, const struct fs_opt *opt,
		  const char *arg, void *base)
{
	if (fs_parse_u32(arg, (__u32)opt->min, (__u32)opt->max,
			 (__u32 *)((char *)base + opt->off)))
		return fs_bad_value(set, "-n must be a whole number from %lld to %lld, not '%s'",
				    opt->min, opt->max, arg);
	return 0;
}
