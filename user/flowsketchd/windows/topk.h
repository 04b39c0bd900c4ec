/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * topk.h - the n largest flows of a candidate set, by packets or bytes.
 *
 * A min-heap of at most n entries whose root is the smallest flow kept:
 * each candidate is compared with the root only, so choosing the top n of
 * c candidates costs O(c log n) time and O(n) memory, whatever c is.
 *
 * The order is total, so the result does not depend on the order the
 * candidates arrive in: by the sort metric, then the other metric, then
 * the flow key's bytes.  Equal estimates are common (Count-Min cells are
 * shared), and a query must give the same answer twice.
 */
#ifndef FLOWSKETCHD_TOPK_H
#define FLOWSKETCHD_TOPK_H

#include <stddef.h>
#include "flowsketch/flow_key.h"

enum fsd_sort {
	FSD_SORT_PACKETS,
	FSD_SORT_BYTES,
	FSD_SORT_CONNECTIONS,	/* the connection frontend's packets metric:
				   connections opened (bpf/conn.bpf.c) */
};

/* A flow and its estimated counts over some span. */
struct fsd_flow_count {
	struct fs_flow_key key;
	__u64 hash;
	__u64 packets;
	__u64 bytes;
	__u32 direction;	/* request.h's FSD_DIR_IN or _OUT */
};

struct fsd_topk {
	struct fsd_flow_count *heap;	/* heap[0] ranks lowest */
	size_t len;
	size_t n;
	enum fsd_sort sort;
	__u32 direction;		/* what offers from fsd_history_top() are tagged */
};

/* > 0 when a ranks above b, < 0 below, 0 only for the same key and counts. */
int fsd_flow_count_rank(const struct fsd_flow_count *a,
			const struct fsd_flow_count *b, enum fsd_sort sort);

/* Keep the top n (n >= 1): 0, -EINVAL or -ENOMEM. */
int fsd_topk_init(struct fsd_topk *t, size_t n, enum fsd_sort sort);
void fsd_topk_free(struct fsd_topk *t);
/* Consider one flow. */
void fsd_topk_offer(struct fsd_topk *t, const struct fsd_flow_count *c);
/*
 * Sort the kept flows in place, highest first, and return how many there
 * are (min(n, candidates offered)); t->heap then holds them in that order
 * and is no longer a heap: only fsd_topk_free() may follow.
 */
size_t fsd_topk_finish(struct fsd_topk *t);

#endif /* FLOWSKETCHD_TOPK_H */
