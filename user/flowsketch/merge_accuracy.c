// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * merge_accuracy.c - the fleet's keyed sample against its merged sketches
 * (merge_accuracy.h).
 *
 * Each host's export carries its sample cut to power-of-two limits and
 * leading bits (include/flowsketch/sample.h, "Exports"), in the secret
 * bucket order all hosts of one secret share, so the files' samples merge
 * bucket by bucket (sketch.h) into the sample of the union: the flows of
 * any host below every host's limit of their bucket, each with its
 * packets and bytes summed over the hosts, exactly, since a flow below a
 * host's limit had every packet counted there.  Its exact counts are
 * compared with the merged Count-Min sketch's estimates, found at the
 * flow's exported columns, which every file gives each of its sampled
 * flows as a candidate (native.h checks it when reading): a flow of the
 * merged sample came from some file's sample, and its columns are the same
 * in every file of the secret.  The merged HyperLogLog of flows is
 * compared with the merged sample's distinct count.  The bounds are those
 * of one sketch of the union stream: eps N of the union's N, delta, and
 * the standard errors of sample.h, at the merged sample's rates.
 *
 * A merge holds one span, so its answer has no window z-scores
 * ("hll_windows" 0).
 */
#include <errno.h>
#include "flowsketch/sample.h"
#include "keys.h"
#include "args.h"
#include "merge_accuracy.h"
#include "sample_json.h"

struct merge_files {
	const struct fs_native *f;
	size_t n;
	struct json_object *flows;
};

/* A sampled flow's estimates at its columns in whichever file lists it. */
static int estimate(const struct fs_sketch *s, const struct fs_flow_key *key,
		    void *arg, struct fs_cms_cell *est)
{
	const struct merge_files *m = arg;
	size_t i;

	for (i = 0; i < m->n; i++) {
		const struct fs_native_candidate *c = fs_native_find(&m->f[i], key);

		if (c) {
			fs_sketch_query_columns(s, c->cols, est);
			return 0;
		}
	}
	return -ENOENT;
}

static int add_flow(const struct fs_sample_entry *e, const struct fs_cms_cell *est,
		    void *arg)
{
	struct merge_files *m = arg;

	json_object_array_add(m->flows, fs_sample_flow_json(e, est, NULL));
	return 0;
}

int fs_merge_accuracy(struct json_object *a, const struct fs_native *f,
		      size_t nfiles, const struct fs_sketch *sum)
{
	struct merge_files m = { .f = f, .n = nfiles };
	struct fs_sample_check k;
	int err;

	m.flows = json_object_new_array();
	if (!m.flows)
		return -ENOMEM;
	err = fs_sample_check(sum, estimate, &m, add_flow, &m, &k);
	if (err == -ENOENT)
		fs_error("merge: a flow of the merged sample is no file's candidate: the files were not written by flowsketch export");
	if (err) {
		json_object_put(m.flows);
		return err;
	}
	json_object_object_add(a, FS_KEY_TOTAL_PACKETS, json_object_new_uint64(sum->totals.packets));
	json_object_object_add(a, FS_KEY_TOTAL_BYTES, json_object_new_uint64(sum->totals.bytes));
	fs_sample_check_json(a, &sum->params, &k, NULL, 0);
	json_object_object_add(a, FS_KEY_FLOWS, m.flows);
	return 0;
}
