// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* blockset.c - merges of sorted entry arrays (blockset.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
			out[k++] = (struct fsd_block_entry){ .c = add[j++] };
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

int fsd_block_origin_intern(struct fsd_block_origins *o, const char *text)
{
	size_t len = strlen(text), i;
	__u32 n = __atomic_load_n(&o->n, __ATOMIC_ACQUIRE), j;
	char *copy;

	if (!len || len >= FSD_BLOCK_ORIGIN_TEXT_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f || text[i] == '#')
			return -EINVAL;
	if (!strcmp(text, FSD_BLOCK_ORIGIN_MANUAL))
		return 0;
	/* A handful of rules: a linear search is what the list needs. */
	for (j = 1; j < n; j++)
		if (!strcmp(o->text[j], text))
			return (int)j;
	if (!n)
		n = 1;
	if (n == FSD_BLOCK_ORIGINS_MAX)
		return -ENOSPC;
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	o->text[n] = copy;
	__atomic_store_n(&o->n, n + 1, __ATOMIC_RELEASE);
	return (int)n;
}

const char *fsd_block_origin_text(const struct fsd_block_origins *o, __u32 i)
{
	if (!i || i >= __atomic_load_n(&o->n, __ATOMIC_ACQUIRE))
		return i ? FSD_BLOCK_ORIGIN_OTHER : FSD_BLOCK_ORIGIN_MANUAL;
	return o->text[i];
}

void fsd_block_origins_free(struct fsd_block_origins *o)
{
	__u32 i;

	for (i = 1; i < o->n; i++)
		free(o->text[i]);
	o->n = 0;
}
