// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* topk.c - bounded min-heap selection of the largest flows (topk.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "topk.h"

static int cmp_u64(__u64 a, __u64 b)
{
	return (a > b) - (a < b);
}

int fsd_flow_count_rank(const struct fsd_flow_count *a,
			const struct fsd_flow_count *b, enum fsd_sort sort)
{
	/* FSD_SORT_CONNECTIONS ranks the connection frontend's packets
	 * metric, its connections opened. */
	__u64 a_first = sort == FSD_SORT_BYTES ? a->bytes : a->packets;
	__u64 b_first = sort == FSD_SORT_BYTES ? b->bytes : b->packets;
	__u64 a_second = sort == FSD_SORT_BYTES ? a->packets : a->bytes;
	__u64 b_second = sort == FSD_SORT_BYTES ? b->packets : b->bytes;
	int r;

	r = cmp_u64(a_first, b_first);
	if (r)
		return r;
	r = cmp_u64(a_second, b_second);
	if (r)
		return r;
	/* Lower key first, an arbitrary but fixed choice. */
	return -memcmp(&a->key, &b->key, sizeof(a->key));
}

int fsd_topk_init(struct fsd_topk *t, size_t n, enum fsd_sort sort)
{
	memset(t, 0, sizeof(*t));
	if (!n)
		return -EINVAL;
	t->heap = calloc(n, sizeof(*t->heap));
	if (!t->heap)
		return -ENOMEM;
	t->n = n;
	t->sort = sort;
	return 0;
}

void fsd_topk_free(struct fsd_topk *t)
{
	free(t->heap);
	memset(t, 0, sizeof(*t));
}

static int ranks_lower(const struct fsd_topk *t, size_t i, size_t j)
{
	return fsd_flow_count_rank(&t->heap[i], &t->heap[j], t->sort) < 0;
}

static void swap_entries(struct fsd_topk *t, size_t i, size_t j)
{
	struct fsd_flow_count tmp = t->heap[i];

	t->heap[i] = t->heap[j];
	t->heap[j] = tmp;
}

static void sift_up(struct fsd_topk *t, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!ranks_lower(t, i, parent))
			break;
		swap_entries(t, i, parent);
		i = parent;
	}
}

/* Restore the heap below i among the first len entries. */
static void sift_down(struct fsd_topk *t, size_t i, size_t len)
{
	for (;;) {
		size_t lowest = i, l = 2 * i + 1, r = l + 1;

		if (l < len && ranks_lower(t, l, lowest))
			lowest = l;
		if (r < len && ranks_lower(t, r, lowest))
			lowest = r;
		if (lowest == i)
			break;
		swap_entries(t, i, lowest);
		i = lowest;
	}
}

void fsd_topk_offer(struct fsd_topk *t, const struct fsd_flow_count *c)
{
	if (t->len < t->n) {
		t->heap[t->len] = *c;
		sift_up(t, t->len++);
		return;
	}
	if (fsd_flow_count_rank(c, &t->heap[0], t->sort) <= 0)
		return;
	t->heap[0] = *c;
	sift_down(t, 0, t->len);
}

size_t fsd_topk_finish(struct fsd_topk *t)
{
	size_t end;

	/* Heap sort: moving the lowest to the back leaves highest first. */
	for (end = t->len; end > 1; end--) {
		swap_entries(t, 0, end - 1);
		sift_down(t, 0, end - 1);
	}
	return t->len;
}
