/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stat_names.h - the names the daemon gives the datapath's counters.
 *
 * The fs_stats counters that say why a frame was not keyed (maps.h,
 * enum fs_stat) appear by these names in status ("malformed") and in
 * /metrics (reason="..."), so that both say the same thing.
 */
#ifndef FLOWSKETCH_STAT_NAMES_H
#define FLOWSKETCH_STAT_NAMES_H

#include <stddef.h>
#include "flowsketch/maps.h"

struct fs_stat_name {
	enum fs_stat stat;
	const char *name;
};

/* The counters of malformed frames, one per reason. */
extern const struct fs_stat_name fs_malformed_reasons[];
extern const size_t fs_malformed_reasons_n;

#endif /* FLOWSKETCH_STAT_NAMES_H */
