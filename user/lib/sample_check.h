/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sample_check.h - a merged sketch's keyed sample against the sketch
 * itself (include/flowsketch/sample.h, "The comparison"): what the daemon
 * reports for a span (`flowsketch accuracy`) and watches window by window
 * (status, /metrics).
 */
#ifndef FLOWSKETCH_SAMPLE_CHECK_H
#define FLOWSKETCH_SAMPLE_CHECK_H

#include "flowsketch/sample.h"
#include "sketch.h"

struct fs_sample_check {
	struct fs_sample_cmp c[2];	/* packets, bytes */
	struct fs_sample_sum sum;	/* the sample's flows, n_hat, rate */
	double hll;			/* the HyperLogLog of flows */
	double var;			/* Var(hll - n_hat): both errors' */
	double z;			/* (hll - n_hat) / sqrt(var), fs_sample_hll_z() */
	int tells;			/* the sample is large enough for z to tell */
};

/* The names of fs_sample_alarms()'s bits, lowest first, as status,
 * the accuracy answers and /metrics spell them. */
#define FS_SAMPLE_NALARMS 3
extern const char *const fs_sample_alarm_names[FS_SAMPLE_NALARMS];

/* Each sampled flow with its estimates (fs_sample_check()'s each). */
typedef int fs_sample_flow_fn(const struct fs_sample_entry *e,
			      const struct fs_cms_cell *est, void *arg);

/* A sampled flow's estimates in s: 0, or -ENOENT when it cannot be
 * found (a merge's flow of no file's candidates). */
typedef int fs_sample_estimate_fn(const struct fs_sketch *s,
				  const struct fs_flow_key *key, void *arg,
				  struct fs_cms_cell *est);

/* The host's own: key hashed with the packet hash's key, arg. */
fs_sample_estimate_fn fs_sample_estimate_hashed;

/*
 * s's sample against s: every live entry's exact counts with the
 * estimates estimate(s, key, earg) gives it, eps N from s's totals; each
 * (NULL: none) sees every sampled flow.  0, -ENOMEM, or estimate's or
 * each's error.
 */
int fs_sample_check(const struct fs_sketch *s, fs_sample_estimate_fn *estimate,
		    void *earg, fs_sample_flow_fn *each, void *arg,
		    struct fs_sample_check *out);

/* a += b, the checks of two sketches (directions) as one: counts add,
 * shares over the flows of both, the largest overcount of either, the
 * distinct counts and their variances added (two sketches' errors are
 * independent) and z taken again. */
void fs_sample_check_add(struct fs_sample_check *a, const struct fs_sample_check *b);

/* The larger of the packets' and the bytes' figure, as status and
 * /metrics give one (the alarm looks at both). */
double fs_sample_check_overcount_max_eps(const struct fs_sample_check *k);
double fs_sample_check_over_bound_share(const struct fs_sample_check *k);

#endif /* FLOWSKETCH_SAMPLE_CHECK_H */
