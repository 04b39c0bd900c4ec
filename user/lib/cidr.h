/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cidr.h - blocklist entries in user space: CIDR text, and the
 * filter keys and summary bits an entry puts into the datapath's filter
 * (bloom.h).
 *
 * Text format (what `flowsketch block` takes, and the daemon's list file
 * holds, one a line): an IPv4 or IPv6 address, optionally "/" and a
 * prefix length in decimal (0..32, 0..128); a bare address is the host
 * prefix.  Host bits must be zero: "10.0.0.1/8" is refused, not silently
 * widened, because the operator who wrote it meant something the list
 * cannot say.
 */
#ifndef FLOWSKETCH_CIDR_H
#define FLOWSKETCH_CIDR_H

#include <stddef.h>
#include <stdio.h>
#include "flowsketch/bloom.h"
#include "flowsketch/maps.h"

struct fs_cidr {
	__u8 family;		/* FS_FAMILY_IPV4 or FS_FAMILY_IPV6 */
	__u8 len;		/* prefix length */
	__u8 addr[16];		/* network order; IPv4 in bytes 0..3, rest zero */
};

/* Longest text fs_cidr_format() writes, with its NUL. */
#define FS_CIDR_TEXT_MAX 64

/*
 * Parse s (the whole string: no spaces, nothing after).  0, or -EINVAL
 * with *why set to a static phrase naming what is wrong ("prefix length
 * above 32", "host bits set", ...).
 */
int fs_cidr_parse(const char *s, struct fs_cidr *c, const char **why);
/* "a.b.c.d/len" or "x::y/len", always with the length. */
void fs_cidr_format(const struct fs_cidr *c, char *buf, size_t n);
/* Whether c covers the address addr (16 bytes, IPv4 in 0..3) of family. */
int fs_cidr_covers(const struct fs_cidr *c, __u32 family, const __u8 *addr);
/* Same family, length and address. */
int fs_cidr_equal(const struct fs_cidr *a, const struct fs_cidr *b);

/* The group of c (bloom.h: 0 the summary's cover group, b >= 1 filter
 * group b) and how many keys it has there (/16s marked, or filter keys);
 * -1 for a CIDR out of range. */
int fs_cidr_group(const struct fs_cidr *c, __u64 *keys);
/* The bit c sets in its /16s' summary words: 1 << group. */
__u32 fs_cidr_summary_bit(const struct fs_cidr *c);

/* Key i (0 .. keys - 1, fs_cidr_group()) of c, its address in out: for a
 * filter group the i-th prefix of the group's end length under c (bits
 * len .. end - 1 spell i), for the cover group the i-th /16 under c.
 * Returns the group. */
int fs_cidr_key_addr(const struct fs_cidr *c, __u64 i, __u8 out[16]);
/* The filter hash of key i of c (a filter group's entry). */
__u64 fs_cidr_key_hash(const struct fs_bloom_key *key, const struct fs_cidr *c,
		       __u64 i);

/* The keys c puts into the filter: 0 for the cover group's entries (the
 * summary only), else 1 .. FS_BLOOM_MAX_EXPAND. */
__u64 fs_cidr_filter_keys(const struct fs_cidr *c);

/*
 * Set the bits of every key of c (nothing for a cover entry) in a filter
 * of 2^log2_blocks blocks with k bits a key (bloom.h).
 */
void fs_cidr_filter_add(const struct fs_bloom_key *key, const struct fs_cidr *c,
			struct fs_bloom_block *blocks, __u32 log2_blocks, __u32 k);

/*
 * Set c's bits in the summary s (bloom.h, "The summary"): its /16's group
 * bit, or the cover bit of every /16 it covers.  Atomic ORs: the datapath
 * reads the words while they change.
 */
void fs_cidr_summary_set(struct fs_block_summary *s, const struct fs_cidr *c);

/*
 * Before load: size fs_bfilter (maps.bpf.h) for two filters of
 * 2^log2_blocks blocks each, as its one value, and set the mask the
 * datapath indexes it with (its .rodata fs_bfilter_mask).  0 or -errno.
 */
struct bpf_map;
int fs_bfilter_size(struct bpf_map *m, __u32 *rodata_mask, unsigned int log2_blocks);

/* The LPM trie keys of c (fs_block4 for IPv4, fs_block6 for IPv6). */
void fs_cidr_trie_key4(const struct fs_cidr *c, struct fs_block_key4 *k);
void fs_cidr_trie_key6(const struct fs_cidr *c, struct fs_block_key6 *k);

/* Order by family, length, address; sort and drop repeats (returns the
 * count left). */
int fs_cidr_cmp(const void *a, const void *b);
size_t fs_cidr_sort_unique(struct fs_cidr *c, size_t n);

/*
 * A list in the text format above, one CIDR a line; '#' starts a comment
 * (to the end of the line), blank lines and surrounding blanks are
 * skipped; a list the daemon wrote (flowsketchd's blockfile.h) has fields
 * after a CIDR, which are checked and not kept.  *out (malloc'd) gets *n
 * entries, sorted, repeats removed.
 * 0, or -EINVAL / -E2BIG (more than max) / -ENOMEM / -EIO with msg naming
 * "NAME:LINE: ..." (name is how the list is called in messages; for
 * -E2BIG, LINE is one by which more than max distinct entries were read).
 * O(L log max) for L lines, however many repeats they hold.  A line
 * with a NUL byte or longer than FS_CIDR_LINE_MAX is an error, so a
 * binary or corrupt file is refused, not half read.
 */
#define FS_CIDR_LINE_MAX 256
int fs_cidr_list_parse(FILE *f, const char *name, unsigned int max,
		       struct fs_cidr **out, size_t *n, char *msg, size_t msg_len);

#endif /* FLOWSKETCH_CIDR_H */
