// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* log.c - stderr logging and libbpf's log hook (log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "log.h"

int fsd_verbose;

/* One line, with ": " and *err's text after it when err is given. */
static void log_line(enum fsd_log_level level, const int *err, const char *fmt,
		     va_list ap)
{
	if (level == FSD_LOG_DEBUG && !fsd_verbose)
		return;
	/* One line at a time: query threads log too. */
	flockfile(stderr);
	fputs(level == FSD_LOG_WARN ? "flowsketchd: warning: " : "flowsketchd: ",
	      stderr);
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, ": %s", strerror(-*err));
	fputc('\n', stderr);
	funlockfile(stderr);
}

void fsd_log(enum fsd_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(level, NULL, fmt, ap);
	va_end(ap);
}

int fsd_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(FSD_LOG_ERR, &err, fmt, ap);
	va_end(ap);
	return err;
}

int fsd_reject(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(FSD_LOG_ERR, NULL, fmt, ap);
	va_end(ap);
	return err;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBBPF_WARN && !fsd_verbose)
		return 0;
	fputs("flowsketchd: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void fsd_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
