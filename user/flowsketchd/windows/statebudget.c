// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* statebudget.c - the state directory's budget (statebudget.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <stddef.h>
#include "base/log.h"
#include "statebudget.h"

int fsd_parse_size(const char *s, unsigned long long *out)
{
	static const char units[] = "KMGT";
	unsigned long long v = 0;
	unsigned int shift = 0;
	const char *p = s, *u;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned long long d = (unsigned long long)(*p - '0');

		if (v > (~0ULL - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (*p && (u = strchr(units, toupper((unsigned char)*p)))) {
		shift = 10 * (unsigned int)(u - units + 1);
		p++;
		if (!strcmp(p, "iB") || !strcmp(p, "B"))
			p += strlen(p);
	}
	if (*p || (shift && v > (~0ULL >> shift)))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

static unsigned long long round_up(unsigned long long v, unsigned long long block)
{
	return (v + block - 1) / block * block;
}

unsigned long long fsd_state_window_bytes(const struct fs_sketch_params *p,
					  unsigned long long block)
{
	return round_up(fsd_winfile_bytes(p, 0), block);
}

unsigned long long fsd_state_min_bytes(const struct fs_sketch_params *p)
{
	return FSD_STATE_RESERVE + FSD_STATE_USERS * fsd_state_window_bytes(p, 4096);
}

unsigned long long fsd_state_worst_bytes(const struct fs_sketch_params *p,
					 unsigned int windows, unsigned int candidates)
{
	unsigned long long set = (unsigned long long)candidates * sizeof(struct fsd_candidate);

	return FSD_STATE_RESERVE + FSD_STATE_USERS *
	       ((unsigned long long)windows * (fsd_state_window_bytes(p, 4096) + round_up(set, 4096)) +
		FS_NSLOTS * round_up(set, 4096));
}

unsigned long long fsd_state_default_max(unsigned long long f_blocks,
					 unsigned long long frsize,
					 unsigned long long phys_bytes)
{
	unsigned long long size = f_blocks * frsize;

	if (!f_blocks || size / frsize != f_blocks)
		size = phys_bytes;
	return size / 100 * FSD_STATE_SHARE_PCT;
}

void fsd_state_budget_init(struct fsd_state_budget *b, const char *dir,
			   unsigned long long max)
{
	struct statvfs v;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "%s", dir);
	b->block = 4096;
	b->used = FSD_STATE_RESERVE;
	if (!statvfs(dir, &v) && v.f_frsize)
		b->block = v.f_frsize;
	else
		memset(&v, 0, sizeof(v));
	b->max = max ? max : fsd_state_default_max(v.f_blocks, b->block,
			(unsigned long long)(pages > 0 ? pages : 0) *
			(unsigned long long)(page > 0 ? page : 0));
}

int fsd_state_budget_victim(const struct fsd_state_budget *b)
{
	__u64 best_end = 0;
	unsigned int i;
	int best = -1;

	for (i = 0; i < b->nusers; i++) {
		const struct fsd_history *h = b->users[i].h;
		const struct fsd_window *w;

		if (!b->users[i].ws->files || !h->count)
			continue;
		w = fsd_history_window(h, h->count - 1);
		if (best < 0 || w->end_ns < best_end) {
			best = (int)i;
			best_end = w->end_ns;
		}
	}
	return best;
}

int fsd_state_budget_evict_one(struct fsd_state_budget *b, bool for_room)
{
	struct fsd_state_user *u;
	bool mapped;
	__u64 seq;
	int i = fsd_state_budget_victim(b);

	if (i < 0)
		return -ENOENT;
	u = &b->users[i];
	/* The ring's oldest goes even when it is a window kept in memory only
	 * (its store failed then): oldest first, and a store that holds files
	 * has one further on. */
	if (fsd_history_evict_oldest(u->h, &seq, &mapped))
		return -ENOENT;
	if (mapped)
		fsd_winstore_drop(u->ws, seq);
	u->ws->evicted++;
	b->evicted++;
	if (for_room)
		b->no_room++;
	return 0;
}

/* Bytes the file system under the directory has free for us. */
static unsigned long long free_bytes(const struct fsd_state_budget *b)
{
	struct statvfs v;

	if (statvfs(b->dir, &v))
		return ~0ULL;	/* cannot tell: the write will */
	return (unsigned long long)v.f_bavail * v.f_frsize;
}

/* The budget behind a store's room. */
static struct fsd_state_budget *of_room(const struct fsd_winstore_room *r)
{
	return (struct fsd_state_budget *)((char *)r - offsetof(struct fsd_state_budget, room));
}

static unsigned long long room_round(const struct fsd_winstore_room *r,
				     unsigned long long bytes)
{
	return round_up(bytes, of_room(r)->block);
}

static void room_charge(struct fsd_winstore_room *r, long long bytes)
{
	struct fsd_state_budget *b = of_room(r);
	unsigned long long give = bytes < 0 ? (unsigned long long)-bytes : 0;

	if (bytes >= 0)
		b->used += (unsigned long long)bytes;
	else
		b->used = b->used > give ? b->used - give : 0;
}

static int room_reserve(struct fsd_winstore_room *r, unsigned long long need)
{
	struct fsd_state_budget *b = of_room(r);

	while (b->used + need > b->max) {
		if (fsd_state_budget_evict_one(b, false))
			return -ENOSPC;
	}
	while (need > free_bytes(b)) {
		if (fsd_state_budget_evict_one(b, true))
			return -ENOSPC;
	}
	return 0;
}

static int room_evict_one(struct fsd_winstore_room *r)
{
	return fsd_state_budget_evict_one(of_room(r), true);
}

void fsd_state_budget_add(struct fsd_state_budget *b, struct fsd_history *h,
			  struct fsd_winstore *ws)
{
	static const struct fsd_winstore_room room = {
		.round = room_round,
		.reserve = room_reserve,
		.evict_one = room_evict_one,
		.charge = room_charge,
	};

	if (b->nusers == FSD_STATE_USERS)
		return;
	b->room = room;
	b->users[b->nusers].h = h;
	b->users[b->nusers].ws = ws;
	b->nusers++;
	ws->budget = &b->room;
}

void fsd_state_budget_enforce(struct fsd_state_budget *b)
{
	while (b->used > b->max && !fsd_state_budget_evict_one(b, false))
		;
}

void fsd_state_budget_report(const struct fsd_state_budget *b, unsigned int windows,
			     unsigned long long quiet_bytes,
			     unsigned long long worst_bytes)
{
	unsigned long long room = free_bytes(b) + b->used;

	fsd_info("state directory %s: budget %llu MiB; the histories' files take %llu MiB with no heavy hitters and up to %llu MiB with every candidate set full",
		 b->dir, b->max >> 20, quiet_bytes >> 20, worst_bytes >> 20);
	if (quiet_bytes > b->max)
		fsd_warn("the state budget (%llu MiB, --state-max) holds about %llu of the %u windows of history asked even without heavy hitters: older windows are given up, so spans reach back less far",
			 b->max >> 20, windows * (b->max / 100) / (quiet_bytes / 100 ? quiet_bytes / 100 : 1),
			 windows);
	if (room < b->max)
		fsd_warn("%s has %llu MiB free, less than the state budget of %llu MiB: windows are given up, oldest first, when it fills",
			 b->dir, room >> 20, b->max >> 20);
}

void fsd_state_budget_warn(struct fsd_state_budget *b, __u64 now_ns)
{
	__u64 n = b->evicted - b->warned_evicted;
	const struct fsd_window *w;
	__u64 reach = 0;
	unsigned int i;

	if (!n || (b->warned_ns && now_ns - b->warned_ns < FSD_STATE_WARN_NS))
		return;
	/* How far back the histories still reach: the oldest window kept. */
	for (i = 0; i < b->nusers; i++) {
		const struct fsd_history *h = b->users[i].h;

		if (h->count && (w = fsd_history_window(h, h->count - 1)) &&
		    now_ns > w->start_ns && now_ns - w->start_ns > reach)
			reach = now_ns - w->start_ns;
	}
	fsd_warn("state directory %s: %llu windows evicted, oldest first, to keep within its budget of %llu MiB and the free space (%llu MiB charged, %llu evicted in all); spans now reach back %llu s",
		 b->dir, (unsigned long long)n, b->max >> 20, b->used >> 20,
		 (unsigned long long)b->evicted,
		 (unsigned long long)(reach / 1000000000ULL));
	b->warned_evicted = b->evicted;
	b->warned_ns = now_ns ? now_ns : 1;
}
