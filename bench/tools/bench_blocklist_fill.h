/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_blocklist_fill.h - a blocklist of n random entries for the
 * benchmarks (fs-bench.c, fs-livebench.c): IPv4 prefixes /16 to /32
 * (a few /8 to /15) outside 10.0.0.0/8 and IPv6 prefixes /16 to /128
 * outside fd00::/8, every length about equally likely, so that the
 * benchmarks' own traffic (10.x and fd00:: sources) is never blocked and
 * shares no /16 with an entry ("far" traffic).
 * bb_near_source() draws "near" sources: next to an entry, inside none.
 * bb_size() sizes the maps before load, bb_fill() fills the tries, the
 * filter and the summary after it the way the daemon does
 * (user/flowsketchd/blocklist/blocklist.c) and returns the fs_ctl.bloom
 * word that turns the list on.
 */
#ifndef FLOWSKETCH_BENCH_BLOCKLIST_FILL_H
#define FLOWSKETCH_BENCH_BLOCKLIST_FILL_H

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cidr.h"
#include "flowsketch/bloom.h"

static __u64 bb_rng = 0x5851f42d4c957f2dULL;
static unsigned int bb_near_keep;	/* 0, or 16 / 24: bb_near_source() */

static __u64 bb_rand(void)
{
	bb_rng = bb_rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return bb_rng ^ (bb_rng >> 29);
}

static void bb_prefix(struct fs_cidr *c)
{
	unsigned int len, i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < 16; i++)
		c->addr[i] = (__u8)bb_rand();
	if (bb_rand() & 1) {
		c->family = FS_FAMILY_IPV4;
		/* 1 in 200 from /8 to /15, else /16 to /32: with every
		 * length up to /32 equally likely, a list of 100,000 held
		 * some 2,000 /8s, all 256 of them, and no IPv4 source outside
		 * 10/8 was unblocked, near or far. */
		len = bb_rand() % 200 == 0 ? 8 + (unsigned int)(bb_rand() % 8) :
					     16 + (unsigned int)(bb_rand() % 17);
		if (c->addr[0] == 10)
			c->addr[0] = 11;
		memset(c->addr + 4, 0, 12);
	} else {
		c->family = FS_FAMILY_IPV6;
		len = 16 + (unsigned int)(bb_rand() % 113);
		if (c->addr[0] == 0xfd)
			c->addr[0] = 0xfe;
	}
	for (i = len; i < 128; i++)
		c->addr[i / 8] &= (__u8)~(0x80 >> (i % 8));
	c->len = (__u8)len;
}

static double bb_ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* n random entries, sorted and unique, their filter keys (expanded) and
 * a filter sized for them; pick[f]: the indexes of family f's entries
 * longer than /16, which near sources are drawn beside
 * (bb_near_source()). */
struct bb_list {
	struct fs_cidr *c;
	unsigned int n, log2, k;
	__u64 keys;
	unsigned int *pick[2], npick[2];
};

static int bb_make(unsigned int n, struct bb_list *l)
{
	unsigned int i;

	memset(l, 0, sizeof(*l));
	l->c = calloc(n ? n : 1, sizeof(*l->c));
	if (!l->c)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		bb_prefix(&l->c[i]);
	l->n = (unsigned int)fs_cidr_sort_unique(l->c, n);
	l->pick[0] = calloc(l->n ? l->n : 1, sizeof(*l->pick[0]));
	l->pick[1] = calloc(l->n ? l->n : 1, sizeof(*l->pick[1]));
	if (!l->pick[0] || !l->pick[1])
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		int f = l->c[i].family != FS_FAMILY_IPV4;

		if (l->c[i].len > 16)
			l->pick[f][l->npick[f]++] = i;
		l->keys += fs_cidr_filter_keys(&l->c[i]);
	}
	/* Full at 1 %: the daemon sizes for twice the keys, so its filters
	 * run below the rate measured here. */
	if (l->n && fs_bloom_size((double)(l->keys ? l->keys : 1), 0.01, &l->log2, &l->k))
		return -E2BIG;
	return 0;
}

static inline void bb_free(struct bb_list *l)
{
	free(l->c);
	free(l->pick[0]);
	free(l->pick[1]);
	memset(l, 0, sizeof(*l));
}

/* Whether an entry of l covers (family, addr): one search per length
 * (l->c is sorted by family, length, address). */
static inline int bb_covered(const struct bb_list *l, __u8 family, const __u8 *addr)
{
	unsigned int max = family == FS_FAMILY_IPV4 ? 32 : 128, len, b;
	struct fs_cidr probe;

	for (len = 0; len <= max; len++) {
		memset(&probe, 0, sizeof(probe));
		probe.family = family;
		probe.len = (__u8)len;
		memcpy(probe.addr, addr, family == FS_FAMILY_IPV4 ? 4 : 16);
		for (b = len; b < 128; b++)
			probe.addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
		if (bsearch(&probe, l->c, l->n, sizeof(*l->c), fs_cidr_cmp))
			return 1;
	}
	return 0;
}

/*
 * A "near" source of family (16 bytes, IPv4 in 0..3): one that shares an
 * allocation boundary with a random entry without being inside any entry.
 * The boundary is the longest of /16 and /24 (IPv4) or /16, /32, /48,
 * /56 and /64 (IPv6) shorter than the entry: the neighbours in the same
 * /24 or /16, the same site /48, ..., where a list's near misses sit.
 * The rest of the address is random.  -ENOENT when the family has no
 * entry longer than /16, or no uncovered neighbour turned up.
 */
static inline int bb_near_source(const struct bb_list *l, __u8 family, __u8 out[16])
{
	static const __u8 bound4[] = { 24, 16 }, bound6[] = { 64, 56, 48, 32, 16 };
	int f = family != FS_FAMILY_IPV4;
	unsigned int tries, b, i;

	if (!l->npick[f])
		return -ENOENT;
	for (tries = 0; tries < 100000; tries++) {
		const struct fs_cidr *e = &l->c[l->pick[f][bb_rand() % l->npick[f]]];

		/* Breakdown runs only (fs-livebench --near-keep): IPv4
		 * sources that share just their entry's /16, or its /24. */
		if (!f && bb_near_keep && (e->len > 24) != (bb_near_keep == 24))
			continue;
		const __u8 *bound = f ? bound6 : bound4;
		unsigned int nb = f ? sizeof(bound6) : sizeof(bound4), keep = 16;

		for (i = 0; i < nb; i++)
			if (bound[i] < e->len) {
				keep = bound[i];
				break;
			}
		memset(out, 0, 16);
		for (i = 0; i < (f ? 16U : 4U); i++)
			out[i] = (__u8)bb_rand();
		for (b = 0; b < keep; b++) {
			__u8 m = (__u8)(0x80 >> (b % 8));

			out[b / 8] = (__u8)((out[b / 8] & ~m) | (e->addr[b / 8] & m));
		}
		if (!bb_covered(l, family, out))
			return 0;
	}
	return -ENOENT;
}

/* Before load: the blocklist maps of an object built on maps.bpf.h
 * (filter_mask: its .rodata fs_bfilter_mask). */
static void bb_size(struct bpf_map *trie4, struct bpf_map *trie6,
		    struct bpf_map *hits, struct bpf_map *filter,
		    __u32 *filter_mask, const struct bb_list *l)
{
	bpf_map__set_max_entries(trie4, l->n ? l->n : 1);
	bpf_map__set_max_entries(trie6, l->n ? l->n : 1);
	bpf_map__set_max_entries(hits, l->n + 1);
	fs_bfilter_size(filter, filter_mask, l->log2);
}

/* After load: tries, then filter 0 of fs_bfilter and the summary;
 * *ctl_word the fs_ctl.bloom that turns the list on (0 for an empty
 * list).  trie_ms, filter_ms: what each took. */
static int bb_fill(int trie4_fd, int trie6_fd, int filter_fd, int summary_fd,
		   const struct fs_hash_secret *secret, const struct bb_list *l,
		   __u64 *ctl_word, double *trie_ms, double *filter_ms)
{
	size_t fbytes = sizeof(struct fs_bloom_block) << (l->log2 + 1);
	struct fs_bloom_block *filter;
	struct fs_block_summary *sum;
	struct fs_bloom_key bkey;
	struct timespec t0;
	unsigned int i;
	int err = 0;

	*ctl_word = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < l->n && !err; i++) {
		__u32 id = i + 1;

		if (l->c[i].family == FS_FAMILY_IPV4) {
			struct fs_block_key4 k;

			fs_cidr_trie_key4(&l->c[i], &k);
			err = bpf_map_update_elem(trie4_fd, &k, &id, 0);
		} else {
			struct fs_block_key6 k;

			fs_cidr_trie_key6(&l->c[i], &k);
			err = bpf_map_update_elem(trie6_fd, &k, &id, 0);
		}
	}
	if (err)
		return -errno;
	if (trie_ms)
		*trie_ms = bb_ms_since(&t0);
	if (!l->n)
		return 0;
	filter = mmap(NULL, fbytes, PROT_READ | PROT_WRITE, MAP_SHARED, filter_fd, 0);
	if (filter == MAP_FAILED)
		return -errno;
	sum = mmap(NULL, sizeof(*sum), PROT_READ | PROT_WRITE, MAP_SHARED,
		   summary_fd, 0);
	if (sum == MAP_FAILED) {
		munmap(filter, fbytes);
		return -errno;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fs_bloom_key_derive(secret, &bkey);
	for (i = 0; i < l->n; i++)
		fs_cidr_filter_add(&bkey, &l->c[i], filter, l->log2, l->k);
	for (i = 0; i < l->n; i++)
		fs_cidr_summary_set(sum, &l->c[i]);
	if (filter_ms)
		*filter_ms = bb_ms_since(&t0);
	munmap(sum, sizeof(*sum));
	munmap(filter, fbytes);
	/* Generation 1: the verdict cache on, as the daemon starts it. */
	*ctl_word = fs_bloom_ctl(l->k, l->log2, 0, 1);
	return 0;
}

#endif /* FLOWSKETCH_BENCH_BLOCKLIST_FILL_H */
