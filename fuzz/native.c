// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * native.c - fuzz the reader of native export files (native.h), which
 * `flowsketch merge` and `export --input` run on files from anywhere.
 *
 * A file is taken or refused with a message; one taken is canonical (it
 * encodes back to the very same bytes: there is one file per export; a
 * version-2 or -3 file, to the current version's, canonical in turn), and what
 * was allocated follows from the file's own size.  What merge estimates
 * from a file's detection sketches keeps its invariants (own_estimates()),
 * and its sample merged with itself doubles (own_sample()).
 */
#include <stdlib.h>
#include <string.h>
#include "native.h"
#include "prefix_estimate.h"
#include "spread_estimate.h"

/*
 * What `flowsketch merge ... accuracy` makes of a file taken, merged with
 * itself: the same sampled flows (the same limits, values and keys),
 * each a candidate of the file and with twice its counts.
 */
static void own_sample(const struct fs_native *n)
{
	const struct fs_sketch_params *p = &n->sketch.params;
	__u64 nb = fs_params_sample_buckets(p), i;
	struct fs_sketch m;
	__u32 w, v;

	if (!nb)
		return;
	if (fs_sketch_init(&m, p) || fs_sketch_merge(&m, &n->sketch) ||
	    fs_sketch_merge(&m, &n->sketch))
		abort();
	for (i = 0; i < nb; i++) {
		const struct fs_sample_bucket *a = &n->sketch.sample[i], *b = &m.sample[i];
		__u64 la = fs_sample_limit(a, p->sample_shift), lb = fs_sample_limit(b, p->sample_shift);

		if (la != lb || fs_sample_bucket_live(a, p->sample_shift) !=
				fs_sample_bucket_live(b, p->sample_shift))
			abort();
		for (w = 0; w < FS_SAMPLE_WAYS; w++) {
			if (!fs_sample_live(&b->e[w], lb))
				continue;
			if (!fs_native_find(n, &b->e[w].key))
				abort();
			for (v = 0; v < FS_SAMPLE_WAYS; v++)
				if (fs_sample_live(&a->e[v], la) &&
				    fs_sample_key_equal(&a->e[v].key, &b->e[w].key))
					break;
			if (v == FS_SAMPLE_WAYS || b->e[w].s != a->e[v].s ||
			    b->e[w].packets != 2 * a->e[v].packets ||
			    b->e[w].bytes != 2 * a->e[v].bytes)
				abort();
		}
	}
	fs_sketch_free(&m);
}

/*
 * What `flowsketch merge ... top --by` and `spread` make of a file taken:
 * every tag's prefixes and each side's spreaders from their own buckets
 * (no secret), each found in 1 .. d rows, at most one a bucket, and a
 * prefix's estimate a multiple of V.
 */
static void own_estimates(const struct fs_native *n)
{
	struct fs_prefix_params pp;
	struct fs_spread_params sp;
	__u32 i, nb;
	int got, j;

	fs_params_prefix(&n->sketch.params, &pp);
	if (pp.log2_width) {
		struct fs_heavy_prefix *top;
		__u8 tag;

		nb = fs_prefix_buckets(&pp);
		top = calloc(nb, sizeof(*top));
		if (!top)
			abort();
		for (tag = 1; tag <= 16; tag++) {
			got = fs_prefix_top_own(n->sketch.prefix, &pp, tag,
						tag & 1 ? FS_PREFIX_BY_BYTES : FS_PREFIX_BY_PACKETS,
						top, nb);
			if (got < 0 || (__u32)got > nb)
				abort();
			for (j = 0; j < got; j++)
				if (top[j].tag != tag || top[j].rows < 1 || top[j].rows > pp.depth ||
				    top[j].packets % fs_prefix_scale(&pp))
					abort();
		}
		free(top);
	}
	fs_params_spread(&n->sketch.params, &sp);
	if (sp.log2_width) {
		struct fs_spreader *top;

		nb = sp.depth << sp.log2_width;
		top = calloc(nb, sizeof(*top));
		if (!top)
			abort();
		for (i = 0; i < FS_SPREAD_NSIDES; i++) {
			got = fs_spread_top_own(n->sketch.spread, &sp, i, top, nb);
			if (got < 0 || (__u32)got > nb)
				abort();
			for (j = 0; j < got; j++)
				if (top[j].rows < 1 || top[j].rows > sp.depth ||
				    !(top[j].distinct >= 0) ||
				    (j && top[j].distinct > top[j - 1].distinct))
					abort();
		}
		free(top);
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char err[FS_NATIVE_ERR_MAX];
	struct fs_native n;
	unsigned char *back;
	int ret;

	err[0] = 0;
	ret = fs_native_decode(data, size, &n, err);
	if (ret) {
		/* Refused: with a sentence, and nothing left to free. */
		if (ret != -22 || !err[0] || !memchr(err, 0, sizeof(err)) ||
		    n.sketch.cms || n.candidates)
			abort();
		return 0;
	}
	/* Format versions 2 (before the detection sketches) and 3 (before
	 * the sample) read as the current version's file with three or one
	 * empty parts, 24 or 8 bytes longer, which is canonical in turn. */
	if (size > 8 && data[8] < FS_NATIVE_VERSION) {
		size_t len = fs_native_size(&n);
		struct fs_native again;

		back = malloc(len);
		if (len != size + (data[8] == 2 ? 24 : 8) || !back ||
		    fs_native_encode(&n, back, len) ||
		    fs_native_decode(back, len, &again, err))
			abort();
		fs_native_free(&n);
		n = again;
		data = back;
		size = len;
	} else {
		back = NULL;
	}
	if (fs_native_size(&n) != size)
		abort();
	{
		unsigned char *out = malloc(size);

		if (!out || fs_native_encode(&n, out, size) || memcmp(out, data, size))
			abort();
		free(out);
	}
	own_estimates(&n);
	own_sample(&n);
	free(back);
	fs_native_free(&n);
	return 0;
}
