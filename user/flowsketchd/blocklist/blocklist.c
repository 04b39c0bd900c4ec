// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* blocklist.c - the daemon's blocklist: list, tries, filter, file (blocklist.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include "keys.h"
#include "base/answer.h"
#include "base/safedir.h"
#include "blockfile.h"
#include "blocklist.h"
#include "blockpace.h"
#include "datapath/object.h"
#include "base/log.h"
#include "protocol.h"
#include "sizing.h"
#include "flowsketch.skel.h"

static int entry_cmp(const void *a, const void *b)
{
	return fs_cidr_cmp(&((const struct fsd_block_entry *)a)->c,
			   &((const struct fsd_block_entry *)b)->c);
}

static struct fsd_block_entry *find(const struct fsd_blocklist *bl,
				    const struct fs_cidr *c)
{
	struct fsd_block_entry key = { .c = *c };

	return bsearch(&key, bl->e, bl->n, sizeof(*bl->e), entry_cmp);
}

unsigned int fsd_blocklist_max_log2(unsigned int max)
{
	/* The maps hold a full list at its worst (bloom.h, "What it
	 * costs"), at least the 1024 keys a rebuild sizes for. */
	return fs_blocklist_max_log2(max);
}

/* The earliest expiry of e (n entries), for the loop's cheap look:
 * O(n), as every change is. */
static void note_expiry(struct fsd_blocklist *bl, const struct fsd_block_entry *e,
			size_t n)
{
	__s64 next = INT64_MAX;
	size_t i;

	for (i = 0; i < n; i++)
		if (e[i].expires_at && e[i].expires_at < next)
			next = e[i].expires_at;
	__atomic_store_n(&bl->next_expiry, next, __ATOMIC_RELAXED);
}

/* ---- the list file (blockfile.h) --------------------------------------- */

static int save_list(const struct fsd_blocklist *bl,
		     const struct fsd_block_entry *e, size_t n)
{
	return fsd_blockfile_write(bl->path, e, n, &bl->origins);
}

int fsd_blocklist_read(struct fsd_blocklist *bl, const char *path,
		       unsigned int max)
{
	char msg[512];
	size_t i;
	int err;

	memset(bl, 0, sizeof(*bl));
	bl->next_expiry = INT64_MAX;
	pthread_mutex_init(&bl->lock, NULL);
	bl->path = path;
	bl->max = max;
	bl->next_id = 1;
	bl->trie4_fd = bl->trie6_fd = bl->stats_fd = bl->cache_fd = -1;
	bl->free_ids = calloc((size_t)max + 1, sizeof(*bl->free_ids));
	if (!bl->free_ids)
		return -ENOMEM;
	err = fsd_blockfile_read(path, max, &bl->origins, &bl->e, &bl->n,
				 msg, sizeof(msg));
	if (err == -ENOENT)
		return 0;
	if (err) {
		fsd_err("blocklist %s", msg);
		return err;
	}
	for (i = 0; i < bl->n; i++)
		bl->e[i].id = bl->next_id++;
	note_expiry(bl, bl->e, bl->n);
	return 0;
}

/* ---- the datapath's maps ------------------------------------------------ */

static __u64 keys_of(const struct fs_cidr *c)
{
	return fs_cidr_filter_keys(c);
}

/*
 * The summary (bloom.h, "The summary") changes in place: a bit is set
 * (an atomic OR, cidr.c) once an entry's keys are in the live filter, and
 * cleared only when no entry needs it any more: after entries go, the
 * live summary is ANDed with the one the list left needs, recomputed
 * (O(n), like the rebuild that follows every delete).  A packet that sees
 * a bit probes the filter, and the trie decides.
 */
static void summary_narrow(struct fsd_blocklist *bl)
{
	struct fs_block_summary *x = bl->scratch;
	size_t i;

	memset(x, 0, sizeof(*x));
	fsd_blockset_summary(bl->e, bl->n, x);
	for (i = 0; i < sizeof(*x) / 8; i++)
		__atomic_fetch_and((__u64 *)bl->summary + i, ((__u64 *)x)[i], __ATOMIC_RELAXED);
}

static int trie_update(const struct fsd_blocklist *bl, const struct fs_cidr *c,
		       __u32 id)
{
	if (c->family == FS_FAMILY_IPV4) {
		struct fs_block_key4 k;

		fs_cidr_trie_key4(c, &k);
		return bpf_map_update_elem(bl->trie4_fd, &k, &id, BPF_ANY) ? -errno : 0;
	} else {
		struct fs_block_key6 k;

		fs_cidr_trie_key6(c, &k);
		return bpf_map_update_elem(bl->trie6_fd, &k, &id, BPF_ANY) ? -errno : 0;
	}
}

static void trie_delete(const struct fsd_blocklist *bl, const struct fs_cidr *c)
{
	if (c->family == FS_FAMILY_IPV4) {
		struct fs_block_key4 k;

		fs_cidr_trie_key4(c, &k);
		bpf_map_delete_elem(bl->trie4_fd, &k);
	} else {
		struct fs_block_key6 k;

		fs_cidr_trie_key6(c, &k);
		bpf_map_delete_elem(bl->trie6_fd, &k);
	}
}

/* An RCU grace period (maps.h, "Windows and slots"): after it no packet
 * still runs with what it read before. */
static int barrier(const struct fsd_blocklist *bl)
{
	__u32 zero = 0;
	int i, err = 0;

	for (i = 0; i < 3; i++) {
		if (!bpf_map_update_elem(bl->barrier_fd, &zero,
					 &bl->barrier_inner_fd, BPF_ANY))
			return 0;
		err = -errno;
	}
	return err;
}

/* Tell the datapath which filter to probe, and the verdict cache's
 * generation: one 64-bit store. */
static void publish(struct fsd_blocklist *bl)
{
	__u64 word = 0;

	if (bl->n)
		word = fs_bloom_ctl(bl->k, bl->log2, bl->live << bl->max_log2, bl->gen);
	__atomic_store_n(bl->ctl_bloom, word, __ATOMIC_RELEASE);
}

/*
 * The verdict cache's next generation, for an add (bloom.h, "The verdict
 * cache"): 1..255, and before 255 wraps to 1, a grace period and every
 * CPU's cache zeroed, so that no slot of generation 1 is left from 254
 * adds ago.  A failure leaves the cache off (generation 0) until the next
 * add: slower, never wrong.
 */
static void next_generation(struct fsd_blocklist *bl)
{
	if (bl->gen && bl->gen < 255) {
		bl->gen++;
		return;
	}
	bl->gen = 0;
	publish(bl);	/* nothing cached is used, nothing written, from here */
	if (barrier(bl) || bpf_map_update_elem(bl->cache_fd, &(__u32){ 0 },
					       bl->cache_zero, BPF_ANY))
		return;
	bl->gen = 1;
}

/*
 * Build the filter for the list as it is into the spare, sized for twice
 * its keys (at least 1024, at most the maps' size), and switch to it.
 * The barrier first: the spare was live before the last switch, and a
 * packet may still be probing it.
 */
static int rebuild(struct fsd_blocklist *bl)
{
	__u32 spare = !bl->live, log2 = 0, k = 0;
	__u64 keys = fsd_blockset_filter_keys(bl->e, bl->n), want;
	double rate, capacity;
	size_t i;
	int err;

	/* Twice the keys at the target, or the maps' largest (sizing.h). */
	rate = fs_blocklist_filter((double)keys, bl->max_log2, &log2, &k, &capacity);
	want = (__u64)capacity;
	if (rate > FSD_BLOCK_FPR)	/* more keys than the maps' worst case */
		fsd_warn("blocklist: %llu filter keys, more than the filter was sized for; false-positive rate %.4f",
			 (unsigned long long)keys, rate);
	err = barrier(bl);
	if (err)
		return err;
	memset(bl->filter[spare], 0, sizeof(struct fs_bloom_block) << log2);
	for (i = 0; i < bl->n; i++)
		fs_cidr_filter_add(&bl->key, &bl->e[i].c, bl->filter[spare], log2, k);
	pthread_mutex_lock(&bl->lock);
	bl->live = spare;
	bl->log2 = log2;
	bl->k = k;
	bl->keys = keys;
	bl->cap_keys = want;
	bl->rebuilds++;
	pthread_mutex_unlock(&bl->lock);
	publish(bl);
	return 0;
}

static void *map_mmap(struct bpf_map *m, size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(m), 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The trie key k (family's) as a CIDR. */
static void cidr_of_key(__u32 family, __u32 prefixlen, const __u8 *addr,
			struct fs_cidr *c)
{
	memset(c, 0, sizeof(*c));
	c->family = (__u8)family;
	c->len = (__u8)prefixlen;
	memcpy(c->addr, addr, family == FS_FAMILY_IPV4 ? 4 : 16);
}

/* A key of an adopted trie that no entry of the list has any more. */
struct stale_key {
	struct fs_cidr c;
	__u32 id;
};

/*
 * One trie of an adopted datapath: each key an entry of the list still
 * has gives that entry its id (its counters stay where the datapath adds
 * to them); a key no entry has (the file was edited while no daemon ran)
 * goes to *stale.  used[id]: the id is some key's.
 */
static int adopt_trie(struct fsd_blocklist *bl, int fd, __u32 family,
		      __u8 *used, struct stale_key **stale, size_t *nstale,
		      size_t *nkeys)
{
	union { struct fs_block_key4 k4; struct fs_block_key6 k6; } key, next;
	const size_t klen = family == FS_FAMILY_IPV4 ? sizeof(key.k4) : sizeof(key.k6);
	bool first = true;
	__u32 id;

	memset(&key, 0, sizeof(key));
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		struct fsd_block_entry probe, *e;
		const __u8 *addr = family == FS_FAMILY_IPV4 ? next.k4.addr : next.k6.addr;

		first = false;
		(*nkeys)++;
		memcpy(&key, &next, klen);
		cidr_of_key(family, next.k4.prefixlen, addr, &probe.c);
		/* A key's own lookup returns its own id (it is the longest
		 * prefix matching itself). */
		if (bpf_map_lookup_elem(fd, &next, &id) || !id || id > bl->max)
			id = 0;
		if (id)
			used[id] = 1;
		e = bsearch(&probe, bl->e, bl->n, sizeof(*bl->e), fs_cidr_cmp);
		if (e) {
			e->id = id;	/* 0: none usable, one is given below */
			continue;
		}
		if (*nstale % 256 == 0) {
			struct stale_key *g = realloc(*stale, (*nstale + 256) * sizeof(**stale));

			if (!g)
				return -ENOMEM;
			*stale = g;
		}
		(*stale)[*nstale].c = probe.c;
		(*stale)[*nstale].id = id;
		(*nstale)++;
	}
	return errno == ENOENT ? 0 : -errno;
}

/*
 * The summary of an adopted datapath: the new list's bits set first, then
 * the stale cleared, so that no source the list covers passes in between
 * (an adopted summary of this layout holds the last daemon's; one of an
 * older release's is a fresh map, zero).
 */
static void adopt_summary(struct fsd_blocklist *bl)
{
	struct fs_block_summary *x = bl->scratch;
	size_t i;

	memset(x, 0, sizeof(*x));
	fsd_blockset_summary(bl->e, bl->n, x);
	for (i = 0; i < sizeof(*x) / 8; i++)
		__atomic_fetch_or((__u64 *)bl->summary + i, ((__u64 *)x)[i], __ATOMIC_RELAXED);
	for (i = 0; i < sizeof(*x) / 8; i++)
		__atomic_fetch_and((__u64 *)bl->summary + i, ((__u64 *)x)[i], __ATOMIC_RELAXED);
}

/*
 * Load the list over an adopted datapath's (header comment of
 * fsd_blocklist_start()).  Entries both lists have keep their ids, so
 * their counters are never copied or reset and no drop is lost or
 * counted to another entry; new entries take ids no pinned key uses,
 * zeroed before their key goes in; stale keys' ids are freed after the
 * rebuild's barrier (blocklist_start), when no packet holds them.
 */
static int adopt_maps(struct fsd_blocklist *bl, struct stale_key **stale_out,
		      size_t *nstale_out)
{
	size_t nstale = 0, i;
	size_t keys[2] = { 0, 0 }, stale_of[2] = { 0, 0 }, listed[2] = { 0, 0 };
	__u8 *used = calloc((size_t)bl->max + 1, 1);
	struct stale_key *stale = NULL;
	bool stale_first[2];
	__u32 id, max_id = 0;
	int err, f;

	*stale_out = NULL;
	*nstale_out = 0;
	if (!used) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < bl->n; i++)
		bl->e[i].id = 0;
	err = adopt_trie(bl, bl->trie4_fd, FS_FAMILY_IPV4, used, &stale, &nstale, &keys[0]);
	stale_of[0] = nstale;
	if (!err)
		err = adopt_trie(bl, bl->trie6_fd, FS_FAMILY_IPV6, used, &stale, &nstale, &keys[1]);
	stale_of[1] = nstale - stale_of[0];
	if (err)
		goto out;
	/* New entries: the lowest ids no key holds, counters zeroed (an id
	 * a killed daemon freed may still hold counts). */
	for (i = 0, id = 1; i < bl->n; i++) {
		if (!bl->e[i].id) {
			while (id <= bl->max && used[id])
				id++;
			if (id > bl->max) {
				err = -ENOSPC;
				goto out;
			}
			bl->e[i].id = id;
			used[id] = 1;
			memset(&bl->hits[id], 0, sizeof(bl->hits[id]));
		}
		if (bl->e[i].id > max_id)
			max_id = bl->e[i].id;
		listed[bl->e[i].c.family != FS_FAMILY_IPV4]++;
	}
	for (i = 0; i < nstale; i++)
		if (stale[i].id > max_id)
			max_id = stale[i].id;
	/* Ids below the highest one that nothing holds are free now; the
	 * stale keys' join them after the barrier. */
	bl->next_id = max_id + 1;
	bl->nfree = 0;
	for (id = max_id; id >= 1; id--)
		if (!used[id]) {
			memset(&bl->hits[id], 0, sizeof(bl->hits[id]));
			bl->free_ids[bl->nfree++] = id;
		}
	/* A trie holds --blocklist-max keys: when the old keys and the new
	 * ones would not fit together, the stale go first (their sources
	 * pass from then on, as they are to), at the price of a moment in
	 * which a source both a stale and a new entry cover passes too. */
	for (f = 0; f < 2; f++) {
		size_t shared = keys[f] - stale_of[f];

		stale_first[f] = keys[f] + (listed[f] - shared) > bl->max;
		if (stale_first[f])
			fsd_warn("blocklist: the %s entries no longer listed go before the new ones are added (the trie holds %u)",
				 f ? "IPv6" : "IPv4", bl->max);
	}
	for (i = 0; i < nstale; i++)
		if (stale_first[stale[i].c.family != FS_FAMILY_IPV4])
			trie_delete(bl, &stale[i].c);
	for (i = 0; !err && i < bl->n; i++)
		err = trie_update(bl, &bl->e[i].c, bl->e[i].id);
	if (err)
		goto out;
	adopt_summary(bl);
	/* The filter after the rebuild that follows knows none of the stale
	 * keys; the trie forgets them now. */
	for (i = 0; i < nstale; i++)
		if (!stale_first[stale[i].c.family != FS_FAMILY_IPV4])
			trie_delete(bl, &stale[i].c);
	if (nstale)
		fsd_info("blocklist: %zu entries of the adopted datapath are no longer in %s",
			 nstale, bl->path);
	*stale_out = stale;
	*nstale_out = nstale;
	stale = NULL;
out:
	free(used);
	free(stale);
	return err;
}

int fsd_blocklist_start(struct fsd_blocklist *bl, const struct flowsketch *skel,
			const struct fsd_object *obj,
			const struct fs_hash_secret *secret,
			const __u64 *rotation_due_ns)
{
	struct stale_key *stale = NULL;
	size_t fbytes, nstale = 0;
	size_t i;
	int err;

	bl->max_log2 = fsd_blocklist_max_log2(bl->max);
	fbytes = sizeof(struct fs_bloom_block) << bl->max_log2;
	bl->trie4_fd = bpf_map__fd(skel->maps.fs_block4);
	bl->trie6_fd = bpf_map__fd(skel->maps.fs_block6);
	bl->stats_fd = bpf_map__fd(skel->maps.fs_block_stats);
	bl->barrier_fd = bpf_map__fd(skel->maps.fs_barrier);
	bl->barrier_inner_fd = bpf_map__fd(skel->maps.fs_barrier_inner);
	bl->ncpus = obj->ncpus;
	bl->rotation_due_ns = rotation_due_ns;
	bl->ctl_bloom = &obj->ctl->bloom;
	fs_bloom_key_derive(secret, &bl->key);
	bl->filter[0] = map_mmap(skel->maps.fs_bfilter, 2 * fbytes);
	bl->filter[1] = bl->filter[0] ? bl->filter[0] + ((size_t)1 << bl->max_log2) : NULL;
	bl->hits = map_mmap(skel->maps.fs_block_hits,
			    (size_t)(bl->max + 1) * sizeof(struct fs_block_hits));
	bl->summary = map_mmap(skel->maps.fs_bsummary, sizeof(struct fs_block_summary));
	bl->scratch = malloc(sizeof(*bl->scratch));
	bl->cache_fd = bpf_map__fd(skel->maps.fs_block_cache);
	bl->cache_zero = calloc(bl->ncpus ? bl->ncpus : 1, sizeof(struct fs_block_cache));
	if (!bl->filter[0] || !bl->filter[1] || !bl->hits || !bl->summary ||
	    !bl->scratch || !bl->cache_zero) {
		fsd_err("cannot map the blocklist's filters and counters: %s",
			strerror(errno));
		return -errno;
	}
	bl->started = true;
	if (obj->adopted) {
		err = adopt_maps(bl, &stale, &nstale);
		if (err)
			return fsd_fail(err, "cannot load the blocklist into the adopted datapath");
		/* The rebuild fills the half the datapath is not probing (a
		 * word of an older layout names a filter of another map).
		 * The verdict cache's generation moves on from the adopted
		 * word's: the program that wrote its cache runs until the
		 * link moves, and the list may have grown meanwhile (this
		 * program's own cache is new, empty: nothing to zero). */
		bl->live = FS_BLOOM_CTL_OURS(*bl->ctl_bloom) &&
			   FS_BLOOM_CTL_BASE(*bl->ctl_bloom) ? 1 : 0;
		bl->gen = FS_BLOOM_CTL_OURS(*bl->ctl_bloom) ?
			  FS_BLOOM_CTL_GEN(*bl->ctl_bloom) % 255 + 1 : 1;
	} else {
		for (i = 0; i < bl->n; i++) {
			err = trie_update(bl, &bl->e[i].c, bl->e[i].id);
			if (err)
				return fsd_fail(err, "cannot load the blocklist into the datapath");
		}
		bl->live = 1;	/* so that the first rebuild fills filter 0 */
		bl->gen = 1;	/* a fresh cache: no slot holds anything */
	}
	err = rebuild(bl);
	/* Fresh: the summary after the filter (nothing is attached yet,
	 * but the order is the one every add keeps). */
	for (i = 0; !err && !obj->adopted && i < bl->n; i++)
		fs_cidr_summary_set(bl->summary, &bl->e[i].c);
	/* Past the rebuild's barrier no packet holds a stale key's id: its
	 * counters go, and it is free for the next entry. */
	for (i = 0; !err && i < nstale; i++)
		if (stale[i].id) {
			memset(&bl->hits[stale[i].id], 0, sizeof(bl->hits[stale[i].id]));
			bl->free_ids[bl->nfree++] = stale[i].id;
		}
	free(stale);
	if (err)
		fsd_fail(err, "cannot build the blocklist filter");
	else if (bl->n)
		fsd_info("blocklist: %zu entries from %s", bl->n, bl->path);
	return err;
}

void fsd_blocklist_free(struct fsd_blocklist *bl)
{
	size_t fbytes = sizeof(struct fs_bloom_block) << bl->max_log2;

	if (bl->filter[0])
		munmap(bl->filter[0], 2 * fbytes);
	if (bl->hits)
		munmap(bl->hits, (size_t)(bl->max + 1) * sizeof(struct fs_block_hits));
	if (bl->summary)
		munmap(bl->summary, sizeof(struct fs_block_summary));
	free(bl->scratch);
	free(bl->cache_zero);
	free(bl->e);
	free(bl->free_ids);
	free(bl->stage.ch);
	fsd_block_origins_free(&bl->origins);
	pthread_mutex_destroy(&bl->lock);
	memset(bl, 0, sizeof(*bl));
}

/* ---- requests ------------------------------------------------------------ */

/* An id for a new entry; free_ids always has room for every id ever
 * given out, so that freeing never allocates. */
static int take_id(struct fsd_blocklist *bl, __u32 *id)
{
	if (bl->nfree) {
		*id = bl->free_ids[--bl->nfree];
		return 0;
	}
	if (bl->next_id > bl->max)
		return -ENOSPC;
	*id = bl->next_id++;
	return 0;
}

static struct json_object *added(size_t fresh, size_t renewed, size_t entries)
{
	struct json_object *a = json_object_new_object();

	json_object_object_add(a, FS_KEY_ADDED, json_object_new_uint64(fresh));
	json_object_object_add(a, FS_KEY_RENEWED, json_object_new_uint64(renewed));
	json_object_object_add(a, FS_KEY_ENTRIES, json_object_new_uint64(entries));
	return a;
}

static struct json_object *done(const char *what, size_t changed, size_t entries)
{
	struct json_object *a = json_object_new_object();

	json_object_object_add(a, what, json_object_new_uint64(changed));
	json_object_object_add(a, FS_KEY_ENTRIES, json_object_new_uint64(entries));
	return a;
}

/* The list is now e (n entries): the readers see it from here on. */
static void swap_list(struct fsd_blocklist *bl, struct fsd_block_entry *e, size_t n)
{
	struct fsd_block_entry *old;

	note_expiry(bl, e, n);
	pthread_mutex_lock(&bl->lock);
	old = bl->e;
	bl->e = e;
	__atomic_store_n(&bl->n, n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&bl->lock);
	free(old);
}

/* OR the bits of every key of c into the live filter: what a packet may
 * see at any moment, and each bit set only widens "maybe". */
static void filter_set_live(struct fsd_blocklist *bl, const struct fs_cidr *c)
{
	__u64 keys = keys_of(c), i;
	unsigned int w;

	for (i = 0; i < keys; i++) {
		__u64 h = fs_cidr_key_hash(&bl->key, c, i);
		struct fs_bloom_block one = { 0 };
		struct fs_bloom_block *b =
			&bl->filter[bl->live][fs_bloom_block_index(h, bl->log2)];

		fs_bloom_block_set(&one, h, bl->k);
		for (w = 0; w < 8; w++)
			if (one.w[w])
				__atomic_fetch_or(&b->w[w], one.w[w], __ATOMIC_RELAXED);
	}
}

static int cidr_cmp(const void *a, const void *b)
{
	return fs_cidr_cmp(a, b);
}

/*
 * after (na entries, sorted) is the list with fresh (m, sorted) added,
 * their ids 0: give them ids and put them into the tries, then make after
 * the list, then the filter.  On an error nothing of it is left, and
 * after is the caller's still.
 */
static int insert_entries(struct fsd_blocklist *bl, struct fsd_block_entry *after,
			  size_t na, const struct fs_cidr *fresh, size_t m)
{
	struct fsd_block_pace pace = { .due_ns = bl->rotation_due_ns };
	__u64 keys = 0;
	size_t i, j;
	int err = 0, grown = 0;

	for (i = 0; i < na; i++) {
		struct fsd_block_entry *e = &after[i];

		if (e->id)
			continue;
		err = take_id(bl, &e->id);
		if (err)
			break;
		memset(&bl->hits[e->id], 0, sizeof(bl->hits[e->id]));
		fsd_block_pace(&pace, false);
		err = trie_update(bl, &e->c, e->id);
		if (err) {
			bl->free_ids[bl->nfree++] = e->id;
			e->id = 0;
			break;
		}
		keys += keys_of(&e->c);
	}
	if (err) {
		/* The new ones before i are those of fresh: O(i log m). */
		for (j = 0; j < i; j++)
			if (bsearch(&after[j].c, fresh, m, sizeof(*fresh), cidr_cmp)) {
				trie_delete(bl, &after[j].c);
				bl->free_ids[bl->nfree++] = after[j].id;
			}
		return err;
	}
	swap_list(bl, after, na);
	if (bl->keys + keys > bl->cap_keys) {
		err = rebuild(bl);	/* grown, aside, then switched */
		grown = !err;
		if (err)
			/* The entries are in the tries: their bits go into
			 * the live filter all the same, which only fills it
			 * past its design. */
			fsd_warn("blocklist: the filter cannot grow (%s); its false-positive rate rises",
				 strerror(-err));
	}
	if (!grown) {
		for (i = 0; i < m; i++)
			filter_set_live(bl, &fresh[i]);
		pthread_mutex_lock(&bl->lock);
		bl->keys += keys;
		pthread_mutex_unlock(&bl->lock);
	}
	/* Their keys are in the live filter: now the summary sends their
	 * /16s' packets there, and a new generation of the verdict cache
	 * forgets every source it passed before. */
	for (i = 0; i < m; i++)
		fs_cidr_summary_set(bl->summary, &fresh[i]);
	next_generation(bl);
	publish(bl);
	return 0;
}

/*
 * Every change writes the file first and then the maps: a file that
 * cannot be written changes nothing, and a map update that fails puts
 * the old file back.  So the file and the datapath agree whatever fails.
 * O(m log m + n) for m CIDRs to a list of n: the request sorted, each
 * looked up (log n), one merge.
 */
/* Whether an add of meta m renews entry e: a manual add sets a listed
 * entry's expiry (and makes it manual); the policy's never touches one. */
static bool renews(const struct fsd_block_entry *e, const struct fsd_block_meta *m)
{
	return m->renew && !m->origin && (e->origin || e->expires_at != m->expires_at);
}

/* A manual add's renewals, made in the list in place (under the lock:
 * a page being copied sees an entry before or after); then the file.
 * 0, or -errno with the list as it was. */
static int renew(struct fsd_blocklist *bl, const struct fs_cidr *c, size_t u,
		 const struct fsd_block_meta *m, size_t *renewed)
{
	struct fsd_block_entry *was = malloc((bl->n ? bl->n : 1) * sizeof(*was));
	size_t i, k = 0;
	int err;

	if (!was)
		return -ENOMEM;
	memcpy(was, bl->e, bl->n * sizeof(*was));
	pthread_mutex_lock(&bl->lock);
	for (i = 0; i < u; i++) {
		struct fsd_block_entry *e = find(bl, &c[i]);

		if (e && renews(e, m)) {
			e->origin = 0;
			e->expires_at = m->expires_at;
			k++;
		}
	}
	pthread_mutex_unlock(&bl->lock);
	err = k ? save_list(bl, bl->e, bl->n) : 0;
	if (err) {
		pthread_mutex_lock(&bl->lock);
		memcpy(bl->e, was, bl->n * sizeof(*was));
		pthread_mutex_unlock(&bl->lock);
	}
	note_expiry(bl, bl->e, bl->n);
	free(was);
	*renewed = err ? 0 : k;
	return err;
}

struct json_object *fsd_blocklist_add(struct fsd_blocklist *bl,
				      const struct fs_cidr *c, size_t n,
				      const struct fsd_block_meta *meta)
{
	struct fs_cidr *req = malloc((n ? n : 1) * sizeof(*req));
	struct fs_cidr *fresh = malloc((n ? n : 1) * sizeof(*fresh));
	struct fsd_block_entry *after = NULL;
	size_t i, m, u, na, renewed = 0;
	__u32 origin = 0;
	int err;

	if (!req || !fresh) {
		free(req);
		free(fresh);
		return fsd_answer_error("out of memory");
	}
	memcpy(req, c, n * sizeof(*c));
	u = fs_cidr_sort_unique(req, n);
	for (i = 0, m = 0; i < u; i++)
		if (!find(bl, &req[i]))
			fresh[m++] = req[i];
	if (bl->n + m > bl->max) {
		free(req);
		free(fresh);
		return fsd_answer_error("the blocklist would hold %zu entries, more than --blocklist-max %u",
					bl->n + m, bl->max);
	}
	if (!m) {
		/* All listed: a manual add may renew them. */
		err = renew(bl, req, u, meta, &renewed);
		free(req);
		free(fresh);
		if (err)
			return fsd_answer_error("blocklist not changed: %s", strerror(-err));
		return added(0, renewed, bl->n);
	}
	if (meta->origin) {
		int o = fsd_block_origin_intern(&bl->origins, meta->origin);

		origin = o > 0 ? (__u32)o : FSD_BLOCK_ORIGINS_MAX;
	}
	after = malloc((bl->n + m) * sizeof(*after));
	if (!after) {
		free(req);
		free(fresh);
		return fsd_answer_error("out of memory");
	}
	na = fsd_blockset_merge(bl->e, bl->n, fresh, m, after);
	/* The new ones (id 0) are of this change; a manual add renews the
	 * others it names, in the same file write.  O(na log u). */
	for (i = 0; i < na; i++) {
		if (!after[i].id) {
			after[i].origin = origin;
			after[i].added_at = meta->now;
			after[i].expires_at = meta->expires_at;
		} else if (renews(&after[i], meta) &&
			   bsearch(&after[i].c, req, u, sizeof(*req), cidr_cmp)) {
			after[i].origin = 0;
			after[i].expires_at = meta->expires_at;
			renewed++;
		}
	}
	free(req);
	err = save_list(bl, after, na);
	if (!err) {
		err = insert_entries(bl, after, na, fresh, m);	/* all or nothing */
		if (!err)
			after = NULL;	/* the list's now */
		else if (save_list(bl, bl->e, bl->n))
			fsd_err("blocklist: %s may now list entries the datapath does not have",
				bl->path);
	}
	free(after);
	free(fresh);
	if (err)
		return fsd_answer_error("blocklist not changed: %s", strerror(-err));
	return added(m, renewed, bl->n);
}

/*
 * Take drop (m, sorted, unique, every one listed) out: file, tries, list,
 * then the rebuild whose barrier ends every packet that still holds one
 * of their ids, then their counters and ids.  O(n + m).
 */
static struct json_object *remove_sorted(struct fsd_blocklist *bl,
					 const struct fs_cidr *drop, size_t m)
{
	struct fsd_block_entry *after = malloc((bl->n - m ? bl->n - m : 1) * sizeof(*after));
	__u32 *ids = malloc((m ? m : 1) * sizeof(*ids));
	struct fsd_block_pace pace = { .due_ns = bl->rotation_due_ns };
	size_t i, na, ngone;
	int err;

	if (!after || !ids) {
		free(after);
		free(ids);
		return fsd_answer_error("out of memory");
	}
	na = fsd_blockset_minus(bl->e, bl->n, drop, m, after, ids, &ngone);
	err = save_list(bl, after, na);
	if (err) {
		free(after);
		free(ids);
		return fsd_answer_error("blocklist not changed: %s", strerror(-err));
	}
	for (i = 0; i < m; i++) {
		fsd_block_pace(&pace, true);
		trie_delete(bl, &drop[i]);
	}
	swap_list(bl, after, na);
	summary_narrow(bl);
	/* Out of the tries and the list even if the rebuild fails: the old
	 * filter only answers "maybe" more often.  But its barrier is what
	 * frees the ids: without it they stay taken (a leak of ids, never a
	 * count given to the wrong entry). */
	err = rebuild(bl);
	if (err)
		fsd_warn("blocklist: %zu entries deleted, the filter not rebuilt: %s",
			 ngone, strerror(-err));
	for (i = 0; !err && i < ngone; i++) {
		memset(&bl->hits[ids[i]], 0, sizeof(bl->hits[ids[i]]));
		bl->free_ids[bl->nfree++] = ids[i];
	}
	free(ids);
	return done(FS_KEY_DELETED, ngone, bl->n);
}

struct json_object *fsd_blocklist_del(struct fsd_blocklist *bl,
				      const struct fs_cidr *c, size_t n)
{
	struct fs_cidr *req = malloc((n ? n : 1) * sizeof(*req));
	struct json_object *a;
	char text[FS_CIDR_TEXT_MAX];
	size_t i, m;

	if (!req)
		return fsd_answer_error("out of memory");
	for (i = 0; i < n; i++) {
		if (!find(bl, &c[i])) {
			fs_cidr_format(&c[i], text, sizeof(text));
			free(req);
			return fsd_answer_error("cidrs[%zu] %s is not in the blocklist; nothing deleted",
						i, text);
		}
		req[i] = c[i];
	}
	m = fs_cidr_sort_unique(req, n);	/* a repeat in the request counts once */
	a = remove_sorted(bl, req, m);
	free(req);
	return a;
}

/* Every entry: already sorted and unique, so one pass. */
struct json_object *fsd_blocklist_clear(struct fsd_blocklist *bl)
{
	struct fs_cidr *all = malloc((bl->n ? bl->n : 1) * sizeof(*all));
	struct json_object *a;
	size_t i, n = bl->n;

	if (!all)
		return fsd_answer_error("out of memory");
	for (i = 0; i < n; i++)
		all[i] = bl->e[i].c;
	a = n ? remove_sorted(bl, all, n) : done(FS_KEY_DELETED, 0, 0);
	free(all);
	return a;
}

int fsd_blocklist_expired(struct fsd_blocklist *bl, __s64 now,
			  struct fs_cidr **out, size_t *n)
{
	struct fs_cidr *c = NULL;
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (now < __atomic_load_n(&bl->next_expiry, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&bl->lock);
	for (i = 0; i < bl->n; i++)
		if (bl->e[i].expires_at && bl->e[i].expires_at <= now)
			k++;
	if (k)
		c = malloc(k * sizeof(*c));
	for (i = 0, k = 0; c && i < bl->n; i++)
		if (bl->e[i].expires_at && bl->e[i].expires_at <= now)
			c[k++] = bl->e[i].c;
	pthread_mutex_unlock(&bl->lock);
	if (k && !c)
		return -ENOMEM;
	*out = c;
	*n = k;
	return 0;
}

size_t fsd_blocklist_entries(const struct fsd_blocklist *bl)
{
	return __atomic_load_n(&bl->n, __ATOMIC_RELAXED);
}

struct json_object *fsd_blocklist_list(struct fsd_blocklist *bl, size_t offset)
{
	struct json_object *a = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	char text[FS_CIDR_TEXT_MAX];
	struct fsd_block_entry *page;
	size_t i, count, total;

	/* A page at a time (protocol.h): an answer stays a few MB however
	 * long the list.  The page is copied under the lock (a memcpy of
	 * about 1 MB) and made into JSON outside it, so that status on the
	 * loop never waits for it. */
	page = malloc(FS_BLOCK_LIST_PAGE * sizeof(*page));
	if (!page) {
		json_object_put(arr);
		json_object_put(a);
		return fsd_answer_error("out of memory");
	}
	pthread_mutex_lock(&bl->lock);
	total = bl->n;
	offset = offset < total ? offset : total;
	count = total - offset > FS_BLOCK_LIST_PAGE ? FS_BLOCK_LIST_PAGE : total - offset;
	memcpy(page, bl->e + offset, count * sizeof(*page));
	pthread_mutex_unlock(&bl->lock);
	for (i = 0; i < count; i++) {
		struct json_object *o = json_object_new_object();
		const struct fs_block_hits *h = &bl->hits[page[i].id];

		fs_cidr_format(&page[i].c, text, sizeof(text));
		json_object_object_add(o, FS_KEY_CIDR, json_object_new_string(text));
		json_object_object_add(o, FS_KEY_PACKETS,
				       json_object_new_uint64(__atomic_load_n(&h->packets, __ATOMIC_RELAXED)));
		json_object_object_add(o, FS_KEY_BYTES,
				       json_object_new_uint64(__atomic_load_n(&h->bytes, __ATOMIC_RELAXED)));
		json_object_object_add(o, FS_KEY_ORIGIN,
				       json_object_new_string(fsd_block_origin_text(&bl->origins, page[i].origin)));
		json_object_object_add(o, FS_KEY_ADDED_AT, json_object_new_int64(page[i].added_at));
		if (page[i].expires_at)
			json_object_object_add(o, FS_KEY_EXPIRES_AT,
					       json_object_new_int64(page[i].expires_at));
		json_object_array_add(arr, o);
	}
	free(page);
	json_object_object_add(a, FS_KEY_ENTRIES, arr);
	json_object_object_add(a, FS_KEY_OFFSET, json_object_new_uint64(offset));
	json_object_object_add(a, FS_KEY_TOTAL, json_object_new_uint64(total));
	json_object_object_add(a, FS_KEY_BLOCKLIST, fsd_blocklist_status(bl));
	return a;
}

int fsd_blocklist_stats(const struct fsd_blocklist *bl, struct fs_block_stats *sum)
{
	struct fs_block_stats *v;
	__u32 zero = 0;
	unsigned int c;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!bl->started)
		return -ENOENT;
	v = calloc(bl->ncpus ? bl->ncpus : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bl->stats_fd, &zero, v)) {
		err = -errno;
		goto out;
	}
	for (c = 0; c < bl->ncpus; c++) {
		sum->checked += v[c].checked;
		sum->probes += v[c].probes;
		sum->maybe += v[c].maybe;
		sum->dropped += v[c].dropped;
		sum->dropped_bytes += v[c].dropped_bytes;
		sum->unjudged += v[c].unjudged;
		sum->unjudged_bytes += v[c].unjudged_bytes;
		sum->cached += v[c].cached;
	}
out:
	free(v);
	return err;
}

struct json_object *fsd_blocklist_status(struct fsd_blocklist *bl)
{
	struct json_object *o = json_object_new_object();
	struct fs_block_stats sum;
	__u32 live, log2, k;
	__u64 keys, cap_keys, rebuilds;
	size_t n, w, set = 0;
	double blocks, bits;

	/* A snapshot of what a change on a query thread updates. */
	pthread_mutex_lock(&bl->lock);
	n = bl->n;
	live = bl->live;
	log2 = bl->log2;
	k = bl->k;
	keys = bl->keys;
	cap_keys = bl->cap_keys;
	rebuilds = bl->rebuilds;
	pthread_mutex_unlock(&bl->lock);
	blocks = ldexp(1, (int)log2);
	bits = blocks * FS_BLOOM_BLOCK_BITS;
	fsd_blocklist_stats(bl, &sum);	/* zeros when unreadable */
	/* The filter live then: a switch meanwhile only makes the figure
	 * a moment old (both halves stay mapped). */
	if (bl->started)
		for (w = 0; w < ((size_t)8 << log2); w++)
			set += (size_t)__builtin_popcountll(((const __u64 *)bl->filter[live])[w]);
	json_object_object_add(o, "file", json_object_new_string(bl->path));
	json_object_object_add(o, FS_KEY_ENTRIES, json_object_new_uint64(n));
	json_object_object_add(o, "max_entries", json_object_new_uint64(bl->max));
	/* A change being applied on a query thread, and its CIDRs: entries
	 * is the list before it until it is answered. */
	json_object_object_add(o, "changing",
			       json_object_new_uint64(__atomic_load_n(&bl->busy, __ATOMIC_RELAXED) ?
						      __atomic_load_n(&bl->changing, __ATOMIC_RELAXED) : 0));
	json_object_object_add(o, "filter_keys", json_object_new_uint64(keys));
	json_object_object_add(o, "filter_capacity", json_object_new_uint64(cap_keys));
	json_object_object_add(o, "filter_blocks", json_object_new_uint64((__u64)blocks));
	json_object_object_add(o, "filter_k", json_object_new_uint64(k));
	json_object_object_add(o, "filter_bytes", json_object_new_uint64((__u64)(bits / 8)));
	json_object_object_add(o, "fill_ratio", json_object_new_double(bits ? set / bits : 0));
	json_object_object_add(o, "design_fpr",
			       json_object_new_double(fs_bloom_fpr((double)keys, blocks, k)));
	json_object_object_add(o, "target_fpr", json_object_new_double(FSD_BLOCK_FPR));
	json_object_object_add(o, "checked_packets", json_object_new_uint64(sum.checked));
	json_object_object_add(o, "probes", json_object_new_uint64(sum.probes));
	/* Passed by the verdict cache, without a probe (bloom.h). */
	json_object_object_add(o, "cached", json_object_new_uint64(sum.cached));
	json_object_object_add(o, "maybe", json_object_new_uint64(sum.maybe));
	json_object_object_add(o, "dropped_packets", json_object_new_uint64(sum.dropped));
	json_object_object_add(o, "dropped_bytes", json_object_new_uint64(sum.dropped_bytes));
	/* Frames behind more VLAN tags than the verdict walks, dropped
	 * unjudged while the list is in force (parse.bpf.h). */
	json_object_object_add(o, "unjudged_dropped_packets", json_object_new_uint64(sum.unjudged));
	json_object_object_add(o, "unjudged_dropped_bytes", json_object_new_uint64(sum.unjudged_bytes));
	/* Unconfirmed "maybe" answers per probe: the filter's false positives
	 * (every key a source can match is an entry's that covers it, bloom.h),
	 * and a source seen while its entry was being deleted. */
	json_object_object_add(o, "measured_fpr",
			       json_object_new_double(sum.probes ?
					(double)(sum.maybe - sum.dropped) / (double)sum.probes : 0));
	json_object_object_add(o, "rebuilds", json_object_new_uint64(rebuilds));
	return o;
}

/* The tries' longest match for addr's first len bits: an entry at most
 * len long that holds them. */
static bool trie_holds(const struct fsd_blocklist *bl, __u32 family,
		       const __u8 *addr, __u32 len)
{
	__u32 id;

	/* Query threads call this while the loop changes the list: only
	 * the tries (their own locking) and what start set are read. */
	if (!bl->started)
		return false;
	if (family == FS_FAMILY_IPV4) {
		struct fs_block_key4 k = { .prefixlen = len };

		memcpy(k.addr, addr, 4);
		return !bpf_map_lookup_elem(bl->trie4_fd, &k, &id);
	} else {
		struct fs_block_key6 k = { .prefixlen = len };

		memcpy(k.addr, addr, 16);
		return !bpf_map_lookup_elem(bl->trie6_fd, &k, &id);
	}
}

bool fsd_blocklist_covers(const struct fsd_blocklist *bl, __u32 family,
			  const __u8 *addr)
{
	return trie_holds(bl, family, addr, family == FS_FAMILY_IPV4 ? 32 : 128);
}

bool fsd_blocklist_holds(const struct fsd_blocklist *bl, const struct fs_cidr *c)
{
	return trie_holds(bl, c->family, c->addr, c->len);
}
