/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sample_json.h - the body of the accuracy answer (protocol.h), made once
 * for the daemon, which answers from its own windows (`flowsketch
 * accuracy`), and for `flowsketch merge ... accuracy`, which answers from
 * export files: the keyed sample's figures (sample_check.h) under the
 * names the issue gave them, and each sampled flow with the key fields
 * top uses.
 *
 *   sample            rate R, buckets, flows X, full events, the
 *                     effective rate R_mean (sample.h)
 *   packets, bytes    each metric's undercounts, overcount_max_eps,
 *                     over_bound, over_bound_share
 *   undercounts       both metrics'; overcount_max_eps, over_bound_share:
 *                     the larger of the two metrics' figures
 *   delta, hll, sample_distinct, hll_z
 *   hll_windows, hll_within_2se   the windows whose z tells, and the
 *                     share of them within 2 standard errors (0 windows
 *                     for a merge, which holds one span)
 *   alarm, alarms     fs_sample_alarms(), by name
 *   flows             added by the caller (fs_sample_flow_json())
 */
#ifndef FLOWSKETCH_SAMPLE_JSON_H
#define FLOWSKETCH_SAMPLE_JSON_H

#include <stddef.h>
#include <json-c/json.h>
#include "sample_check.h"

/* Into a: the figures of k, a check of a sketch of parameters p, and the
 * share within 2 of the nz window z-scores z. */
void fs_sample_check_json(struct json_object *a, const struct fs_sketch_params *p,
			  const struct fs_sample_check *k, const double *z, size_t nz);

/* A new object: a sampled flow's key, its exact counts and its estimates,
 * and direction when not NULL. */
struct json_object *fs_sample_flow_json(const struct fs_sample_entry *e,
					const struct fs_cms_cell *est,
					const char *direction);

#endif /* FLOWSKETCH_SAMPLE_JSON_H */
