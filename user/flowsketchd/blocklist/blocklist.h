/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blocklist.h - the daemon's blocklist: the exact set, the filter the
 * datapath probes (include/flowsketch/bloom.h, bpf/blocklist.bpf.h) and
 * the list file.
 *
 * The daemon owns the list.  It keeps it sorted in memory (by family,
 * length, address) with an id per entry, mirrors it into the LPM tries
 * (which alone decide a drop) and into the live filter, and writes it to
 * --blocklist FILE after every change, atomically (blockfile.h, which
 * gives the format: a CIDR a line, with when it was added, when it
 * expires and which rule added it).
 *
 * Expiry.  An entry may expire (block add --for, a policy's ban): at the
 * first window boundary at or after its time the daemon deletes it as
 * block del does, with the same guarantees (fsd_blocklist_expired() says
 * which; blockreq.c hands the change to a query thread).  Times are
 * absolute (seconds since the epoch), so a ban runs out when it should
 * across restarts; an entry that expired while the daemon was down goes
 * at its first boundary.
 *
 * Changes, in an order that never drops a packet it should not and never
 * passes one it should drop once the request has returned:
 *   add   trie first, then the filter's bits (set in the live filter, or a
 *         grown filter built aside and switched to), then the summary's
 *         bits: until the summary sends a packet to the filter and the
 *         filter says "maybe" the trie is not asked, and it already knows
 *         the entry when it is;
 *   del   trie first (the source passes at once unless another entry
 *         covers it), then the summary narrowed to the bits the entries
 *         left need, then an RCU barrier (no packet still holds the old
 *         id or probes the spare filter), then the ids' counters zeroed,
 *         and a filter rebuilt from the entries left into the spare and
 *         switched to with one store.
 * A change whose file cannot be written is undone, and the request fails.
 *
 * Threads.  A change of a million entries is a million map updates (a
 * system call each, about 1 us) and a file of 20 MB: seconds, far more
 * than one turn of the event loop that rotates windows may take.  So the
 * changes run on a query thread (blockreq.c), one at a time: the loop
 * marks the list busy when it hands one over, answers any other change
 * "busy" until the job is freed, and the job works on its own copies.
 * What the loop and the threads read meanwhile (block list, status,
 * metrics) is guarded by lock, held only to swap the entry array and the
 * filter's description, never across a system call: the readers see the
 * list before the change or after it, never half of it, and wait for no
 * map update.  Every change is O((n + m) log (n + m)) (blockset.h).
 */
#ifndef FLOWSKETCHD_BLOCKLIST_H
#define FLOWSKETCHD_BLOCKLIST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "blockset.h"
#include "cidr.h"
#include "flowsketch/bloom.h"
#include "flowsketch/maps.h"
#include "sizing.h"

struct flowsketch;
struct fsd_object;
struct json_object;

#define FSD_BLOCKLIST_DEFAULT "/var/lib/flowsketch/blocklist"
#define FSD_BLOCKLIST_MAX_DEFAULT 100000U
#define FSD_BLOCKLIST_MAX_LIMIT 1000000U
/* The false-positive rate the filter is sized for (per probe, sizing.h). */
#define FSD_BLOCK_FPR FS_BLOCKLIST_FPR

/*
 * A change for a query thread, or CIDRs a `block load` is sending
 * (protocol.h, block_load_begin/_part/_commit): one allocation, so that
 * the job that carries it frees it whatever happens.
 */
enum fsd_block_op { FSD_BLOCK_ADD, FSD_BLOCK_DEL, FSD_BLOCK_CLEAR, FSD_BLOCK_LIST };
struct fsd_block_change {
	enum fsd_block_op op;
	size_t offset;			/* FSD_BLOCK_LIST */
	__u32 for_sec;			/* FSD_BLOCK_ADD: 0, for good */
	bool renew;			/* FSD_BLOCK_ADD: block_add's, not a load's */
	char origin[FSD_BLOCK_ORIGIN_TEXT_MAX];	/* FSD_BLOCK_ADD: "" manual */
	size_t n, cap;
	struct fs_cidr c[];
};

/* The one `block load` being sent: its token, and when it last sent. */
struct fsd_block_stage {
	__u64 token;			/* 0: none */
	__u64 touched_ms;
	size_t total;			/* CIDRs it said it sends */
	struct fsd_block_change *ch;	/* what came so far */
};
/* A load that sends nothing for this long gives way to another. */
#define FSD_BLOCK_STAGE_IDLE_MS 10000

struct fsd_blocklist {
	const char *path;
	unsigned int max;		/* entries at most (--blocklist-max) */
	pthread_mutex_t lock;		/* e, n, and the filter's description */
	struct fsd_block_entry *e;	/* sorted, n of them */
	size_t n;
	int busy;			/* a change is on a query thread */
	size_t changing;		/* its CIDRs (status) */
	struct fsd_block_stage stage;	/* the loop's only */
	struct fsd_block_origins origins;	/* the entries' origin */
	__s64 next_expiry;		/* the entries' earliest expires_at */
	__u32 *free_ids;		/* ids to reuse */
	size_t nfree;
	__u32 next_id;
	/* datapath */
	bool started;
	int trie4_fd, trie6_fd, stats_fd, barrier_fd, barrier_inner_fd;
	struct fs_block_hits *hits;	/* fs_block_hits, mmapped */
	struct fs_block_summary *summary;	/* fs_bsummary, mmapped */
	struct fs_block_summary *scratch;	/* a summary recomputed */
	struct fs_bloom_block *filter[2];	/* fs_bfilter's two halves, mmapped */
	__u32 max_log2;			/* their size: 2^max_log2 blocks */
	__u32 live, log2, k;		/* the filter the datapath probes */
	__u32 gen;			/* the verdict cache's (bloom.h) */
	int cache_fd;			/* fs_block_cache */
	void *cache_zero;		/* zeros for every CPU's cache */
	__u64 keys;			/* keys in it (with repeats) */
	__u64 cap_keys;			/* keys it was sized for */
	__u64 rebuilds;
	struct fs_bloom_key key;
	__u64 *ctl_bloom;		/* &fs_ctl.bloom, mmapped */
	const __u64 *rotation_due_ns;	/* the loop's (blockpace.h) */
	unsigned int ncpus;
};

/* The filter size for `max` entries at their worst, FS_BLOOM_MAX_EXPAND
 * keys each (bloom.h): 2^log2 blocks at FSD_BLOCK_FPR. */
unsigned int fsd_blocklist_max_log2(unsigned int max);

/*
 * Read the list file before anything is loaded: a missing file is an
 * empty list; a bad line is an error naming the file and line (nothing
 * else is done, the file is not touched).  0 or -errno.
 */
int fsd_blocklist_read(struct fsd_blocklist *bl, const char *path,
		       unsigned int max);
/* Mirror the list into the loaded datapath's maps (before attach).
 * rotation_due_ns: the loop's next window boundary, which later changes
 * keep quiet for (blockpace.h). */
int fsd_blocklist_start(struct fsd_blocklist *bl, const struct flowsketch *skel,
			const struct fsd_object *obj,
			const struct fs_hash_secret *secret,
			const __u64 *rotation_due_ns);
void fsd_blocklist_free(struct fsd_blocklist *bl);

/* What an add gives its new entries: now (seconds since the epoch), and
 * expires_at (0: never) and origin (NULL: manual, else a rule's text). */
struct fsd_block_meta {
	__s64 now, expires_at;
	const char *origin;
	bool renew;		/* a manual block add (not a load) */
};

/*
 * The changes (blockreq.c runs them on a query thread, one at a time);
 * each answers an object.  c: any order, repeats allowed.  A block add
 * (meta->renew) renews the entries it names that are listed already
 * (their expiry becomes meta's, and they manual); a load (a list restored,
 * perhaps the daemon's own file) and the policy leave them.
 */
struct json_object *fsd_blocklist_add(struct fsd_blocklist *bl,
				      const struct fs_cidr *c, size_t n,
				      const struct fsd_block_meta *meta);
struct json_object *fsd_blocklist_del(struct fsd_blocklist *bl,
				      const struct fs_cidr *c, size_t n);
struct json_object *fsd_blocklist_clear(struct fsd_blocklist *bl);
/* A page of the list from entry offset (protocol.h, block_list): any
 * thread, a copy of the page taken under the lock. */
struct json_object *fsd_blocklist_list(struct fsd_blocklist *bl, size_t offset);
/* The datapath's verdict counters summed over CPUs into *sum (zeros and
 * a negative errno when unreadable or not started). */
int fsd_blocklist_stats(const struct fsd_blocklist *bl, struct fs_block_stats *sum);
/* The "blocklist" object of status: any thread. */
struct json_object *fsd_blocklist_status(struct fsd_blocklist *bl);
/* The entries expired at now (seconds since the epoch) into *out
 * (malloc'd, *n, sorted; NULL and 0 for none): for the loop, cheap when
 * none is due.  0 or -ENOMEM. */
int fsd_blocklist_expired(struct fsd_blocklist *bl, __s64 now,
			  struct fs_cidr **out, size_t *n);
/* Entries now (metrics). */
size_t fsd_blocklist_entries(const struct fsd_blocklist *bl);
/* Whether an entry covers the source (family, addr[16]): top's "blocked".
 * Safe on a query thread: it reads only the tries. */
bool fsd_blocklist_covers(const struct fsd_blocklist *bl, __u32 family,
			  const __u8 *addr);
/* Whether an entry holds all of c (is c or contains it): what a policy
 * block of c would add nothing to.  A smaller entry inside c does not. */
bool fsd_blocklist_holds(const struct fsd_blocklist *bl, const struct fs_cidr *c);

#endif /* FLOWSKETCHD_BLOCKLIST_H */
