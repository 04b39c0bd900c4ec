// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* candidates.c - deduplicated candidate set of one window (candidates.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "candidates.h"

#define FSD_CANDIDATES_MIN_CAPACITY 64U

void fsd_candidates_init(struct fsd_candidates *c, __u32 limit)
{
	memset(c, 0, sizeof(*c));
	c->limit = limit;
}

void fsd_candidates_free(struct fsd_candidates *c)
{
	free(c->slots);
	c->slots = NULL;
	c->capacity = 0;
	c->count = 0;
}

void fsd_candidates_clear(struct fsd_candidates *c)
{
	if (c->slots)
		memset(c->slots, 0, (size_t)c->capacity * sizeof(*c->slots));
	c->count = 0;
}

/* The slot holding key, or the free slot where it belongs. */
static struct fsd_candidate *probe(const struct fsd_candidates *c,
				   const struct fs_flow_key *key, __u64 hash)
{
	__u32 mask = c->capacity - 1, i = (__u32)hash & mask;

	/* Load stays <= 1/2, so a free slot always ends the walk. */
	while (fsd_candidate_used(&c->slots[i]) &&
	       memcmp(&c->slots[i].key, key, sizeof(*key)))
		i = (i + 1) & mask;
	return &c->slots[i];
}

static int grow(struct fsd_candidates *c)
{
	struct fsd_candidates bigger = *c;
	__u32 i;

	bigger.capacity = c->capacity ? c->capacity * 2 :
					FSD_CANDIDATES_MIN_CAPACITY;
	bigger.slots = calloc(bigger.capacity, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; i < c->capacity; i++) {
		const struct fsd_candidate *e = &c->slots[i];

		if (fsd_candidate_used(e))
			*probe(&bigger, &e->key, e->hash) = *e;
	}
	free(c->slots);
	*c = bigger;
	return 0;
}

int fsd_candidates_reserve(struct fsd_candidates *c, __u64 n)
{
	__u64 want = c->count + n;
	int err;

	if (want > c->limit)
		want = c->limit;
	while (2 * want > c->capacity) {
		err = grow(c);
		if (err)
			return err;
	}
	return 0;
}

int fsd_candidates_add(struct fsd_candidates *c, const struct fs_flow_key *key,
		       __u64 hash)
{
	struct fsd_candidate *e;
	int err;

	if (!key->family)
		return -EINVAL;
	if (c->capacity) {
		e = probe(c, key, hash);
		if (fsd_candidate_used(e))
			return 0;
	}
	if (c->count >= c->limit)
		return -ENOSPC;
	if (2 * ((size_t)c->count + 1) > c->capacity) {
		err = grow(c);
		if (err)
			return err;
	}
	e = probe(c, key, hash);
	e->key = *key;
	e->hash = hash;
	c->count++;
	return 1;
}

size_t fsd_candidates_bytes(const struct fsd_candidates *c)
{
	return (size_t)c->capacity * sizeof(*c->slots);
}

/* The add before the limit-th key grows the table until
 * 2 * limit <= capacity (fsd_candidates_add), and never beyond. */
size_t fsd_candidates_max_bytes(__u32 limit)
{
	size_t capacity = FSD_CANDIDATES_MIN_CAPACITY;

	while (capacity < 2 * (size_t)limit)
		capacity *= 2;
	return capacity * sizeof(struct fsd_candidate);
}
