// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sample_json.c - the accuracy answer's body (sample_json.h). */
#include "flow_json.h"
#include "keys.h"
#include "sample_json.h"

static void add_u64(struct json_object *o, const char *key, __u64 v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_double(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

/* The Count-Min figures of one metric, into o under its name. */
static void add_metric(struct json_object *o, const char *name,
		       const struct fs_sample_cmp *c)
{
	struct json_object *x = json_object_new_object();

	add_u64(x, FS_KEY_UNDERCOUNTS, c->undercounts);
	add_double(x, FS_KEY_OVERCOUNT_MAX_EPS, c->overcount_max_eps);
	add_u64(x, FS_KEY_OVER_BOUND, c->over_bound);
	add_double(x, FS_KEY_OVER_BOUND_SHARE, c->over_bound_share);
	json_object_object_add(o, name, x);
}

/* The alarms raised (sample.h, fs_sample_alarms()), by name. */
static void add_alarms(struct json_object *a, unsigned int alarms)
{
	struct json_object *why = json_object_new_array();
	size_t i;

	for (i = 0; i < FS_SAMPLE_NALARMS; i++)
		if (alarms & (1U << i))
			json_object_array_add(why,
				json_object_new_string(fs_sample_alarm_names[i]));
	json_object_object_add(a, FS_KEY_ALARM, json_object_new_boolean(alarms != 0));
	json_object_object_add(a, FS_KEY_ALARMS, why);
}

void fs_sample_check_json(struct json_object *a, const struct fs_sketch_params *p,
			  const struct fs_sample_check *k, const double *z, size_t nz)
{
	struct json_object *s = json_object_new_object();
	double delta = fs_cms_delta(p);

	add_u64(s, FS_KEY_RATE, 1ULL << p->sample_shift);
	add_u64(s, FS_KEY_BUCKETS, fs_params_sample_buckets(p));
	add_u64(s, FS_KEY_FLOWS, k->sum.flows);
	add_u64(s, FS_KEY_FULL, k->sum.full);
	add_double(s, FS_KEY_RATE_EFFECTIVE, k->sum.rate_mean);
	json_object_object_add(a, FS_KEY_SAMPLE, s);
	add_metric(a, FS_KEY_PACKETS, &k->c[0]);
	add_metric(a, FS_KEY_BYTES, &k->c[1]);
	/* The flat names: both metrics', the larger figure. */
	add_u64(a, FS_KEY_UNDERCOUNTS, k->c[0].undercounts + k->c[1].undercounts);
	add_double(a, FS_KEY_OVERCOUNT_MAX_EPS, fs_sample_check_overcount_max_eps(k));
	add_double(a, FS_KEY_OVER_BOUND_SHARE, fs_sample_check_over_bound_share(k));
	add_double(a, FS_KEY_DELTA, delta);
	add_double(a, FS_KEY_HLL, k->hll);
	add_double(a, FS_KEY_SAMPLE_DISTINCT, k->sum.n_hat);
	add_double(a, FS_KEY_HLL_Z, k->z);
	add_u64(a, FS_KEY_HLL_WINDOWS, nz);
	add_double(a, FS_KEY_HLL_WITHIN_2SE, fs_sample_share_within(z, nz, 2));
	add_alarms(a, fs_sample_alarms(k->c, delta, k->z, k->tells));
}

struct json_object *fs_sample_flow_json(const struct fs_sample_entry *e,
					const struct fs_cms_cell *est,
					const char *direction)
{
	struct json_object *f = fs_flow_key_json(&e->key);

	add_u64(f, FS_KEY_EXACT_PACKETS, e->packets);
	add_u64(f, FS_KEY_EXACT_BYTES, e->bytes);
	add_u64(f, FS_KEY_PACKETS, est->packets);
	add_u64(f, FS_KEY_BYTES, est->bytes);
	if (direction)
		json_object_object_add(f, FS_KEY_DIRECTION, json_object_new_string(direction));
	return f;
}
