/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blockset.h - the blocklist's sorted entry array and its set operations.
 *
 * The daemon keeps its entries sorted by fs_cidr_cmp() (family, length,
 * address), so that a change is a merge: adding m entries to n, or taking
 * d out of n, is one pass over both sorted arrays, O(n + m), into a new
 * array; with the O(m log m) sort of the request that makes every change
 * O((n + m) log (n + m)) at worst.  (A linear search of the list for each
 * entry deleted made `block clear` of a million entries 10^12 steps.)
 * Pure: no maps, no daemon, so the unit test runs them at full size.
 */
#ifndef FLOWSKETCHD_BLOCKSET_H
#define FLOWSKETCHD_BLOCKSET_H

#include <stddef.h>
#include "cidr.h"

struct fsd_block_entry {
	struct fs_cidr c;
	__u32 id;		/* fs_block_hits index, >= 1; 0: not given yet */
	__u32 origin;		/* fsd_block_origins index; 0: manual */
	__s64 added_at;		/* seconds since the epoch; 0: not known */
	__s64 expires_at;	/* seconds since the epoch; 0: never */
};

/*
 * Who added the entries: "manual", or the text of a policy rule
 * (policy_file.h), kept once however many entries it added.  Texts are
 * added, never changed or taken out, so an index read once stays good; a
 * reader on another thread loads n (acquire) before it reads a text.
 * Bounded: past FSD_BLOCK_ORIGINS_MAX texts an entry is said to be of
 * FSD_BLOCK_ORIGIN_OTHER.
 */
#define FSD_BLOCK_ORIGINS_MAX 4096
#define FSD_BLOCK_ORIGIN_TEXT_MAX 128
#define FSD_BLOCK_ORIGIN_MANUAL "manual"
#define FSD_BLOCK_ORIGIN_OTHER "policy"
struct fsd_block_origins {
	char *text[FSD_BLOCK_ORIGINS_MAX];	/* [0]: unused, manual */
	__u32 n;
};

/* text's index (>= 1; added if new): -EINVAL for a text that is empty,
 * too long, or has a '#' or a control character (the list file's
 * comment and line end), -ENOSPC when full, -ENOMEM. */
int fsd_block_origin_intern(struct fsd_block_origins *o, const char *text);
/* The text of index i: "manual" for 0. */
const char *fsd_block_origin_text(const struct fsd_block_origins *o, __u32 i);
void fsd_block_origins_free(struct fsd_block_origins *o);

/*
 * out (room for n + m) = e (n, sorted, unique) merged with add (m, sorted,
 * unique, none of them in e), in order; the entries of add get id 0.
 * Returns n + m.
 */
size_t fsd_blockset_merge(const struct fsd_block_entry *e, size_t n,
			  const struct fs_cidr *add, size_t m,
			  struct fsd_block_entry *out);

/*
 * out (room for n) = e (n, sorted, unique) minus drop (d, sorted, unique);
 * the ids of the entries dropped go to gone_ids (room for d), in drop's
 * order.  Returns the entries kept; an entry of drop that e does not have
 * is skipped (the caller checks membership first when that is an error).
 */
size_t fsd_blockset_minus(const struct fsd_block_entry *e, size_t n,
			  const struct fs_cidr *drop, size_t d,
			  struct fsd_block_entry *out, __u32 *gone_ids,
			  size_t *ngone);

/*
 * The summary (bloom.h, "The summary") that e (n entries) needs, into
 * out, which the caller zeroed: what the live one is narrowed to (an AND)
 * after entries go, so that a bit stays set exactly while an entry needs
 * it.  O(n), plus the /16s a cover entry marks.
 */
void fsd_blockset_summary(const struct fsd_block_entry *e, size_t n,
			  struct fs_block_summary *out);

/* The filter keys e (n entries) puts into the filter, repeats counted
 * (entries that share a key count it twice): what a filter is sized for. */
__u64 fsd_blockset_filter_keys(const struct fsd_block_entry *e, size_t n);

#endif /* FLOWSKETCHD_BLOCKSET_H */
