/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cmdline.h - flowsketchd's command line, checked before anything else.
 *
 * Every check that needs no privilege and changes nothing on the host is
 * done here, so that bad input exits with one message before the daemon
 * mounts, pins or attaches anything.  It sits above the modules whose
 * limits it checks (blocklist, metrics, server, state budget, workers).
 */
#ifndef FLOWSKETCHD_CMDLINE_H
#define FLOWSKETCHD_CMDLINE_H

#include "base/options.h"

/*
 * Parse and check argv (the options are one table, cmdline.c; the hidden
 * --roff prints them as the OPTIONS of flowsketchd(8)).  0: run; 1: --help
 * (or --roff) was printed, exit 0; -EINVAL: a message was printed, exit 1.
 */
int fsd_options_parse(struct fsd_options *o, int argc, char **argv);

/* The most the window histories (one per frontend, FSD_FE_MAX) can
 * take with these options, with the query threads and rotation buffers
 * (history.h). */
unsigned long long fsd_options_history_max_bytes(const struct fsd_options *o);

/* Sizes that only make sense together (per CPU, history, --state-max):
 * 0, or -EINVAL with one message; again after an adoption changed them. */
int fsd_options_check_sizes(struct fsd_options *o);

#endif /* FLOWSKETCHD_CMDLINE_H */
