// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* blockset.c - merges of sorted entry arrays (blockset.h). */
#include "blockset.h"

size_t fsd_blockset_merge(const struct fsd_block_entry *e, size_t n,
			  const struct fs_cidr *add, size_t m,
			  struct fsd_block_entry *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < n || j < m) {
		if (j == m || (i < n && fs_cidr_cmp(&e[i].c, &add[j]) < 0)) {
			out[k++] = e[i++];
		} else {
			out[k].c = add[j++];
			out[k++].id = 0;
		}
	}
	return k;
}

size_t fsd_blockset_minus(const struct fsd_block_entry *e, size_t n,
			  const struct fs_cidr *drop, size_t d,
			  struct fsd_block_entry *out, __u32 *gone_ids,
			  size_t *ngone)
{
	size_t i = 0, j = 0, k = 0, g = 0;

	while (i < n) {
		int cmp = j < d ? fs_cidr_cmp(&e[i].c, &drop[j]) : -1;

		if (cmp < 0) {
			out[k++] = e[i++];
		} else if (cmp == 0) {
			gone_ids[g++] = e[i++].id;
			j++;
		} else {
			j++;	/* not listed */
		}
	}
	*ngone = g;
	return k;
}

void fsd_blockset_summary(const struct fsd_block_entry *e, size_t n,
			  struct fs_block_summary *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		fs_cidr_summary_set(out, &e[i].c);
}

__u64 fsd_blockset_filter_keys(const struct fsd_block_entry *e, size_t n)
{
	__u64 keys = 0;
	size_t i;

	for (i = 0; i < n; i++)
		keys += fs_cidr_filter_keys(&e[i].c);
	return keys;
}
