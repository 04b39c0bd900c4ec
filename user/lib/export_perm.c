// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* export_perm.c - the secret coordinates a sketch leaves the host in
 * (export_perm.h has the why and the maths). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export_perm.h"

#define FS_EXPORT_PERM_DOMAIN 0x74726f7078657366ULL	/* "fsexport" */

void fs_export_key_derive(const struct fs_hash_secret *secret,
			  struct fs_hash_secret *export_key)
{
	__u64 msg[2] = { FS_EXPORT_PERM_DOMAIN, 0 };

	export_key->k0 = fs_siphash_words(msg, 2, secret, 2, 4);
	msg[1] = 1;
	export_key->k1 = fs_siphash_words(msg, 2, secret, 2, 4);
}

void fs_export_perm(const struct fs_hash_secret *export_key, enum fs_kind k,
		    __u32 index, __u32 log2n, __u32 *perm)
{
	__u64 n = 1ULL << log2n, i, msg;

	for (i = 0; i < n; i++)
		perm[i] = (__u32)i;
	for (i = n - 1; i > 0; i--) {
		__u64 r, j;
		__u32 t;

		msg = (__u64)(k + 1) << 40 | (__u64)index << 32 | i;
		r = fs_siphash_words(&msg, 1, export_key, 2, 4);
		j = (__u64)(((unsigned __int128)r * (i + 1)) >> 64);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* The candidates' datapath columns (cms.h's iterator runs over rows), for
 * the Count-Min part's permutations to relabel row by row. */
static void fs_export_columns(const struct fs_sketch_params *p,
			      const __u64 *hashes, size_t n, __u32 *cols)
{
	__u32 row;
	size_t i;

	for (i = 0; i < n; i++) {
		struct fs_cms_columns it;

		fs_cms_columns_init(&it, hashes[i], p->cms_log2_width);
		for (row = 0; row < p->cms_depth; row++)
			cols[i * p->cms_depth + row] = fs_cms_next_column(&it);
	}
}

/* Kind k's part of in into out's, run by run (sketch_kind.h's
 * perm_shift); a candidate's column moves with its Count-Min row. */
static void fs_export_permute_part(const struct fs_sketch *in, enum fs_kind k,
				   const struct fs_hash_secret *export_key,
				   size_t n, __u32 *cols, __u32 *perm,
				   struct fs_sketch *out)
{
	const struct fs_sketch_kind *kind = &fs_sketch_kinds[k];
	const struct fs_sketch_params *p = &in->params;
	__u32 shift = kind->perm_shift(p), run, c;
	__u64 runs = kind->per_slot(p) >> shift;
	size_t eb = kind->elem_bytes, i;

	for (run = 0; run < runs; run++) {
		const __u8 *src = (const __u8 *)in->part[k] + ((size_t)run << shift) * eb;
		__u8 *dst = (__u8 *)out->part[k] + ((size_t)run << shift) * eb;

		fs_export_perm(export_key, k, run, shift, perm);
		for (c = 0; c < 1U << shift; c++) {
			memcpy(dst + perm[c] * eb, src + c * eb, eb);
			if (kind->export_elem)
				kind->export_elem(dst + perm[c] * eb, p);
		}
		if (k != FS_KIND_CMS)
			continue;
		for (i = 0; i < n; i++)
			cols[i * p->cms_depth + run] = perm[cols[i * p->cms_depth + run]];
	}
}

int fs_export_permute(const struct fs_sketch *in,
		      const struct fs_hash_secret *export_key,
		      const __u64 *hashes, size_t n, __u32 *cols,
		      struct fs_sketch *out)
{
	__u32 most = 0, *perm;
	int k, err;

	for (k = 0; k < FS_NKINDS; k++)
		if (most < 1U << fs_sketch_kinds[k].perm_shift(&in->params))
			most = 1U << fs_sketch_kinds[k].perm_shift(&in->params);
	perm = malloc(most * sizeof(*perm));
	if (!perm)
		return -ENOMEM;
	err = fs_sketch_init(out, &in->params);
	if (err)
		goto out;
	out->totals = in->totals;
	fs_export_columns(&in->params, hashes, n, cols);
	for (k = 0; k < FS_NKINDS; k++)
		fs_export_permute_part(in, (enum fs_kind)k, export_key, n, cols,
				       perm, out);
out:
	free(perm);
	return err;
}
