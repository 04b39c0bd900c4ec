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

void fs_export_perm(const struct fs_hash_secret *export_key, __u32 what,
		    __u32 index, __u32 log2n, __u32 *perm)
{
	__u64 n = 1ULL << log2n, i, msg;

	for (i = 0; i < n; i++)
		perm[i] = (__u32)i;
	for (i = n - 1; i > 0; i--) {
		__u64 r, j;
		__u32 t;

		msg = (__u64)what << 40 | (__u64)index << 32 | i;
		r = fs_siphash_words(&msg, 1, export_key, 2, 4);
		j = (__u64)(((unsigned __int128)r * (i + 1)) >> 64);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

int fs_export_permute(const struct fs_sketch *in,
		      const struct fs_hash_secret *export_key,
		      const __u64 *hashes, size_t n, __u32 *cols,
		      struct fs_sketch *out)
{
	const struct fs_sketch_params *p = &in->params;
	__u32 w = 1U << p->cms_log2_width, m = 1U << p->hll_p;
	__u32 *perm = malloc((w > m ? w : m) * sizeof(*perm));
	__u32 row, s, c;
	size_t i;
	int err;

	if (!perm)
		return -ENOMEM;
	err = fs_sketch_init(out, p);
	if (err)
		goto out;
	out->totals = in->totals;
	/* The candidates' datapath columns first (cms.h's iterator runs
	 * over rows), relabelled row by row below. */
	for (i = 0; i < n; i++) {
		struct fs_cms_columns it;

		fs_cms_columns_init(&it, hashes[i], p->cms_log2_width);
		for (row = 0; row < p->cms_depth; row++)
			cols[i * p->cms_depth + row] = fs_cms_next_column(&it);
	}
	for (row = 0; row < p->cms_depth; row++) {
		const struct fs_cms_cell *src = in->cms + ((size_t)row << p->cms_log2_width);
		struct fs_cms_cell *dst = out->cms + ((size_t)row << p->cms_log2_width);

		fs_export_perm(export_key, FS_EXPORT_PERM_CMS, row, p->cms_log2_width, perm);
		for (c = 0; c < w; c++)
			dst[perm[c]] = src[c];
		for (i = 0; i < n; i++)
			cols[i * p->cms_depth + row] = perm[cols[i * p->cms_depth + row]];
	}
	for (s = 0; s < FS_HLL_NSKETCH; s++) {
		const __u8 *src = in->hll + ((size_t)s << p->hll_p);
		__u8 *dst = out->hll + ((size_t)s << p->hll_p);

		fs_export_perm(export_key, FS_EXPORT_PERM_HLL, s, p->hll_p, perm);
		for (c = 0; c < m; c++)
			dst[perm[c]] = src[c];
	}
out:
	free(perm);
	return err;
}
