/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * statebudget.h - the state directory's budget, shared by every history.
 *
 * Each frontend (XDP or tracepoint ingress, egress, connections) keeps its
 * finished windows as files in the state directory (winstore.h), by
 * default on /run, a tmpfs: RAM that every other service of the host
 * shares.  A flood of spoofed sources fills every window's candidate set
 * (48 bytes a candidate, --max-candidates of them), and the host's replies
 * fill the egress history's the same way, so the files of three histories
 * could otherwise fill /run.  One budget covers them all:
 *
 *   --state-max SIZE   the most the directory may hold (K, M, G, T suffixes,
 *                      powers of 1024); default FSD_STATE_SHARE_PCT % of the
 *                      file system's size (statvfs f_blocks * f_frsize).
 *
 * Why a quarter.  systemd mounts /run with size=20% of RAM, shared by every
 * service; a quarter of it (5 % of RAM) leaves three quarters to the rest,
 * yet holds the full default history of the three frontends in normal
 * traffic on a host of 8 GiB or more (3 x 300 windows x 372 KiB, 330 MiB;
 * /run is 1.6 GiB there, the budget 410 MiB).  A smaller host, or a flood,
 * keeps fewer windows: the span reaches back less far, and the log says so.
 *
 * What is charged.  Every byte the stores write, rounded up to the file
 * system's block (what du counts): window files, charged before they are
 * written and released when removed, and the open windows' candidate
 * journals as they grow; plus FSD_STATE_RESERVE for the metrics' counter
 * file (metrics.c, a few KiB, written beside a temporary copy).
 *
 * Keeping within.  A window that would pass the budget, or not fit the
 * free space the file system reports, makes room first by evicting
 * finished windows, oldest first across every history: the one of all
 * histories that ended first goes (file removed, mapping dropped, gone from
 * spans), until the new one fits.  Oldest first across all rather than
 * proportionally per frontend because the frontends' windows end together
 * (one timer closes them all), so this keeps every direction's history
 * reaching back to the same instant: a `--direction both` span then sums
 * the same time on both sides, and "how far back can I ask" has one answer.
 * Proportional shares would let a flooded direction keep a shorter reach
 * than a quiet one, and a span over both would silently cover less of one.
 * A write that still fails for want of room (ENOSPC, EDQUOT: something
 * else filled the file system since the check) evicts the oldest window
 * and is retried.  Rotation never fails for it: a window that cannot be
 * stored at all is kept in memory only (winstore.h), as before.
 */
#ifndef FLOWSKETCHD_STATEBUDGET_H
#define FLOWSKETCHD_STATEBUDGET_H

#include <stdbool.h>
#include <linux/types.h>
#include "flowsketch/params.h"
#include "history.h"
#include "winstore.h"

#define FSD_STATE_SHARE_PCT 25
/* The metrics' counter file and its temporary copy (metrics.c). */
#define FSD_STATE_RESERVE (64ULL << 10)
/* Histories that share one budget: ingress, egress, connections. */
#define FSD_STATE_USERS 3
/* Evictions are logged at most this often (and the first at once). */
#define FSD_STATE_WARN_NS (60ULL * 1000000000ULL)

struct fsd_state_user {
	struct fsd_history *h;
	struct fsd_winstore *ws;
};

struct fsd_state_budget {
	struct fsd_winstore_room room;	/* what each store calls */
	unsigned long long max;		/* bytes the directory may hold */
	unsigned long long used;	/* charged, FSD_STATE_RESERVE included */
	unsigned long long block;	/* allocation unit (f_frsize) */
	char dir[256];			/* for statvfs() and messages */
	struct fsd_state_user users[FSD_STATE_USERS];
	unsigned int nusers;
	__u64 evicted;			/* windows evicted, all histories */
	__u64 no_room;			/* evictions for free space or ENOSPC,
					   rather than for the budget */
	__u64 warned_evicted;		/* evicted at the last warning */
	__u64 warned_ns;		/* CLOCK_MONOTONIC of the last one */
};

/*
 * A --state-max value: decimal digits, then optionally K, M, G or T
 * (powers of 1024, either case, "iB" or "B" may follow).  0 or -EINVAL
 * (nothing printed).
 */
int fsd_parse_size(const char *s, unsigned long long *out);

/* What one window with no candidates takes on disk, rounded to block:
 * the least the budget must hold for each history (winstore.h layout). */
unsigned long long fsd_state_window_bytes(const struct fs_sketch_params *p,
					  unsigned long long block);
/* The least --state-max taken: one empty window of each history and the
 * reserve, in 4 KiB blocks. */
unsigned long long fsd_state_min_bytes(const struct fs_sketch_params *p);
/* The most the histories' files can take: every window's candidate set
 * full, and two journals of full sets per history. */
unsigned long long fsd_state_worst_bytes(const struct fs_sketch_params *p,
					 unsigned int windows, unsigned int candidates);

/*
 * The default budget for a file system of f_blocks blocks of frsize
 * bytes: FSD_STATE_SHARE_PCT % of it; a file system that states no size
 * (tmpfs mounted with size=0) gets that share of phys_bytes instead.
 */
unsigned long long fsd_state_default_max(unsigned long long f_blocks,
					 unsigned long long frsize,
					 unsigned long long phys_bytes);

/* Set up for dir (which exists): max bytes, or the default when 0. */
void fsd_state_budget_init(struct fsd_state_budget *b, const char *dir,
			   unsigned long long max);
/* A history and its store share the budget from now on: the store's
 * budget is b's room (winstore.h), which charges sizes rounded up to the
 * block, and reserves room for more by evicting oldest first until it
 * fits the budget and the file system's free space (-ENOSPC when
 * evicting every window would not make it). */
void fsd_state_budget_add(struct fsd_state_budget *b, struct fsd_history *h,
			  struct fsd_winstore *ws);

/*
 * The user whose history's oldest finished window ended first, among
 * those whose store holds a window file: the next to evict.  -1: none.
 * Ties go to the first user added.
 */
int fsd_state_budget_victim(const struct fsd_state_budget *b);

/* Evict the oldest window (above).  0, or -ENOENT when no store holds a
 * window any more. */
int fsd_state_budget_evict_one(struct fsd_state_budget *b, bool for_room);

/* Evict until what is charged fits (after windows were read back). */
void fsd_state_budget_enforce(struct fsd_state_budget *b);

/*
 * Say at start what the budget holds: quiet_bytes, what the histories'
 * files take with no candidates, and worst_bytes, with every set full,
 * for windows windows each.  Warns when the budget holds less than the
 * quiet history, and when the file system has less room than the budget.
 */
void fsd_state_budget_report(const struct fsd_state_budget *b, unsigned int windows,
			     unsigned long long quiet_bytes,
			     unsigned long long worst_bytes);

/* The windows evicted since the last warning, logged at most every
 * FSD_STATE_WARN_NS (now_ns: CLOCK_MONOTONIC). */
void fsd_state_budget_warn(struct fsd_state_budget *b, __u64 now_ns);

#endif /* FLOWSKETCHD_STATEBUDGET_H */
