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

/* Each sampled flow with its estimates (fs_sample_check()'s each). */
typedef int fs_sample_flow_fn(const struct fs_sample_entry *e,
			      const struct fs_cms_cell *est, void *arg);

/*
 * s's sample against s: every live entry's exact counts with the
 * estimates s gives its key (hashed with hk), eps N from s's totals; each
 * (NULL: none) sees every sampled flow.  0, -ENOMEM, or each's error.
 */
int fs_sample_check(const struct fs_sketch *s, const struct fs_hash_key *hk,
		    fs_sample_flow_fn *each, void *arg, struct fs_sample_check *out);

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
