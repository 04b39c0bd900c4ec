/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * candidates.h - the set of heavy-hitter candidates of a window.
 *
 * The datapath reports a flow once per CPU and metric when its per-CPU
 * estimate crosses the window's threshold (cms.h), so the same key arrives
 * up to 2 * ncpus times: the set keeps one entry per key.  It is an open
 * addressing table with linear probing, indexed by the flow's keyed hash
 * (uniform, and not choosable by a sender who does not know the secret),
 * grown by doubling at load 1/2 so a probe stays short and a quiet window
 * costs little memory.  Past `limit` keys new ones are refused (the history
 * counts them), so a flood of distinct reported flows cannot exhaust the
 * daemon's memory.
 */
#ifndef FLOWSKETCHD_CANDIDATES_H
#define FLOWSKETCHD_CANDIDATES_H

#include <stddef.h>
#include "flowsketch/flow_key.h"

struct fsd_candidate {
	struct fs_flow_key key;	/* key.family == 0 marks a free slot */
	__u64 hash;
};

struct fsd_candidates {
	struct fsd_candidate *slots;
	__u32 capacity;		/* 0 or a power of two */
	__u32 count;
	__u32 limit;
};

void fsd_candidates_init(struct fsd_candidates *c, __u32 limit);
void fsd_candidates_free(struct fsd_candidates *c);
/* Forget every key, keep the memory. */
void fsd_candidates_clear(struct fsd_candidates *c);
/*
 * Add a key: 1 when new, 0 when already present, -EINVAL for a key of no
 * family, -ENOSPC when the set is full, -ENOMEM.
 */
int fsd_candidates_add(struct fsd_candidates *c, const struct fs_flow_key *key,
		       __u64 hash);
/* Grow now, so that n more keys (up to the limit) are added without
 * growing: 0 or -ENOMEM. */
int fsd_candidates_reserve(struct fsd_candidates *c, __u64 n);
size_t fsd_candidates_bytes(const struct fsd_candidates *c);
/* The most a set of `limit` keys can take: the table it has once full. */
size_t fsd_candidates_max_bytes(__u32 limit);

/* Visit every key: for (i = 0; i < c->capacity; i++) if (fsd_candidate_used()) */
static inline int fsd_candidate_used(const struct fsd_candidate *e)
{
	return e->key.family != 0;
}

#endif /* FLOWSKETCHD_CANDIDATES_H */
