/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * log.h - flowsketchd's messages, one line each on stderr.
 *
 * The daemon runs in the foreground under a supervisor (systemd, a test
 * script) that captures stderr, so there is no syslog and no timestamp
 * here: the supervisor adds its own.  Errors and warnings always print,
 * info always (a handful of lines at start and stop), debug with -v.
 */
#ifndef FLOWSKETCHD_LOG_H
#define FLOWSKETCHD_LOG_H

enum fsd_log_level {
	FSD_LOG_ERR,
	FSD_LOG_WARN,
	FSD_LOG_INFO,
	FSD_LOG_DEBUG,
};

extern int fsd_verbose;

void fsd_log(enum fsd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define fsd_err(...) fsd_log(FSD_LOG_ERR, __VA_ARGS__)
#define fsd_warn(...) fsd_log(FSD_LOG_WARN, __VA_ARGS__)
#define fsd_info(...) fsd_log(FSD_LOG_INFO, __VA_ARGS__)
#define fsd_debug(...) fsd_log(FSD_LOG_DEBUG, __VA_ARGS__)

/* An error's message followed by ": " and err's text (err a negative
 * errno); returns err, for `return fsd_fail(err, ...)`. */
int fsd_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same without err's text, for a refusal that says why itself. */
int fsd_reject(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Route libbpf's messages here: warnings always, the rest with -v. */
void fsd_log_libbpf(void);

#endif /* FLOWSKETCHD_LOG_H */
