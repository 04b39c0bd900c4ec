// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sample_check.c - a sketch's keyed sample against it (sample_check.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sample_check.h"

const char *const fs_sample_alarm_names[FS_SAMPLE_NALARMS] = {
	"undercount", "overcount", "distinct",
};

int fs_sample_estimate_hashed(const struct fs_sketch *s, const struct fs_flow_key *key,
			      void *arg, struct fs_cms_cell *est)
{
	struct fs_packet_hashes h;

	fs_packet_hash(key, arg, &h);
	fs_sketch_query(s, h.flow, est);
	return 0;
}

int fs_sample_check(const struct fs_sketch *s, fs_sample_estimate_fn *estimate,
		    void *earg, fs_sample_flow_fn *each, void *arg,
		    struct fs_sample_check *out)
{
	const struct fs_sketch_params *p = &s->params;
	__u64 nb = fs_params_sample_buckets(p), cap = nb * FS_SAMPLE_WAYS, n = 0, i;
	__u64 *v = calloc(4 * (cap ? cap : 1), sizeof(*v));
	double eps = fs_cms_epsilon(p);
	int err = 0;
	__u32 w;

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOMEM;
	/* exact packets, their estimates, exact bytes, theirs */
	for (i = 0; i < nb && !err; i++) {
		const struct fs_sample_bucket *b = &s->sample[i];
		__u64 limit = fs_sample_limit(b, p->sample_shift);

		for (w = 0; w < FS_SAMPLE_WAYS && !err; w++) {
			const struct fs_sample_entry *e = &b->e[w];
			struct fs_cms_cell est;

			if (!fs_sample_live(e, limit))
				continue;
			err = estimate(s, &e->key, earg, &est);
			if (err)
				break;
			v[n] = e->packets;
			v[cap + n] = est.packets;
			v[2 * cap + n] = e->bytes;
			v[3 * cap + n++] = est.bytes;
			if (each)
				err = each(e, &est, arg);
		}
	}
	fs_sample_compare(v, v + cap, n, eps * (double)s->totals.packets, &out->c[0]);
	fs_sample_compare(v + 2 * cap, v + 3 * cap, n, eps * (double)s->totals.bytes, &out->c[1]);
	fs_sample_summarize(s->sample, nb, p->sample_shift, &out->sum);
	out->hll = fs_sketch_distinct(s, FS_HLL_FLOWS);
	out->var = fs_sample_hll_sd(out->hll, p->hll_p) * fs_sample_hll_sd(out->hll, p->hll_p) +
		   fs_sample_distinct_var(out->hll, out->sum.rate_mean);
	out->z = fs_sample_hll_z(out->hll, out->sum.n_hat, out->sum.rate_mean, p->hll_p);
	out->tells = fs_sample_z_meaningful(out->hll, out->sum.rate_mean);
	free(v);
	return err;
}

static void cmp_add(struct fs_sample_cmp *a, const struct fs_sample_cmp *b)
{
	a->flows += b->flows;
	a->undercounts += b->undercounts;
	a->over_bound += b->over_bound;
	if (b->overcount_max_eps > a->overcount_max_eps)
		a->overcount_max_eps = b->overcount_max_eps;
	a->over_bound_share = a->flows ? (double)a->over_bound / (double)a->flows : 0;
}

void fs_sample_check_add(struct fs_sample_check *a, const struct fs_sample_check *b)
{
	double d;

	cmp_add(&a->c[0], &b->c[0]);
	cmp_add(&a->c[1], &b->c[1]);
	a->sum.flows += b->sum.flows;
	a->sum.n_hat += b->sum.n_hat;
	a->sum.var_hat += b->sum.var_hat;
	a->sum.full += b->sum.full;
	a->sum.cut += b->sum.cut;
	if (b->sum.rate_mean > a->sum.rate_mean)
		a->sum.rate_mean = b->sum.rate_mean;
	a->hll += b->hll;
	a->var += b->var;
	d = a->hll - a->sum.n_hat;
	a->z = d == 0 ? 0 : a->var > 0 ? d / sqrt(a->var) :
	       d > 0 ? FS_SAMPLE_FIGURE_MAX : -FS_SAMPLE_FIGURE_MAX;
	a->tells = a->tells || b->tells;
}

double fs_sample_check_overcount_max_eps(const struct fs_sample_check *k)
{
	return k->c[0].overcount_max_eps > k->c[1].overcount_max_eps ?
	       k->c[0].overcount_max_eps : k->c[1].overcount_max_eps;
}

double fs_sample_check_over_bound_share(const struct fs_sample_check *k)
{
	return k->c[0].over_bound_share > k->c[1].over_bound_share ?
	       k->c[0].over_bound_share : k->c[1].over_bound_share;
}
