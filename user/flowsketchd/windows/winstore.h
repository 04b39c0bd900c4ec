/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * winstore.h - finished windows kept in files, for the next daemon.
 *
 * A daemon killed with SIGKILL loses its memory, but not the pinned
 * datapath (loader.h) nor the files it wrote: each finished window is a
 * file in the state directory (--state-dir, default /run/flowsketch, a
 * tmpfs: the windows and the pinned maps both last until reboot), and a
 * daemon that adopts the pinned datapath reads them back, so that its
 * span queries reach windows from before the kill.
 *
 * Crash safety.  A window is written to window-SEQ.tmp and renamed to
 * window-SEQ once whole: a window-* file is complete whenever the writer
 * died (rename is atomic; a .tmp left behind is removed at the next
 * start).  Nothing is fsync'ed: a process that dies leaves its written
 * pages in the page cache, and a machine that dies takes the datapath
 * with it.  The rotation writes the file before it zeroes the window's
 * slot in the datapath and records the window as done in fs_ctl.done_seq
 * in between (maps.h), so at every instant a window's counts are in its
 * slot, in its file, or both: the adopting daemon folds a slot whose
 * window has no file, and re-zeroes one whose window has.
 *
 * One copy in memory.  The daemon maps each file it wrote (read only,
 * shared: the page cache's pages) and its history reads the sketch there
 * (history.h, struct fsd_window_map), so keeping windows on disk costs no
 * second copy.
 *
 * File format, version 1, little-endian (this host's order: the files
 * never leave it; `flowsketch export` writes the portable format):
 *
 *   off   size  field
 *     0      8  magic "FSWINDOW"
 *     8      4  version (1)
 *    12      4  data offset (4096: the cells start on a page)
 *    16     32  struct fs_sketch_params, secret zeroed (params.h)
 *    48      8  fingerprint of the secret (fs_params_fingerprint())
 *    56      8  window sequence number
 *    64      8  start, CLOCK_MONOTONIC ns
 *    72      8  end, CLOCK_MONOTONIC ns (valid within one boot, as /run)
 *    80     16  the window's totals: packets, bytes
 *    96     16  the history's totals after this window: packets, bytes
 *   112      8  windows the history had finished after this one
 *   120      8  Count-Min bytes C = depth * width * 16
 *   128      8  HyperLogLog bytes H = 3 * 2^p
 *   136      8  candidates N
 *   144      8  prefix sketch bytes P = depth * width * 64 (detect.h), 0 off
 *   152      8  spread sketch bytes S = 2 * depth * width * 64, 0 off
 *   160      8  keyed sample bytes Q = 2^b * 512 (sample.h), 0 off
 *   168   3928  zero
 *  4096      C  Count-Min cells, row-major (struct fs_cms_cell)
 *  4096+C    H  HyperLogLog registers (flows, sources, destinations)
 *  +H        P  prefix buckets (struct fs_prefix_bucket), then S spread
 *               buckets (struct fs_spread_bucket), then Q of the sample's
 *               buckets (struct fs_sample_bucket), each in sketch.h's order
 *  +P+S+Q   48N candidates, struct fsd_candidate (key, keyed hash)
 *
 * P, S and Q were zero bytes of version 1 before those structures, and
 * a file with them off is the same bytes: files of either release read
 * with the other's (one with a sketch on has parameters an earlier release
 * refuses, params.h).
 *
 * A reader refuses another magic or version, parameters or a fingerprint
 * other than its own datapath's, sizes that disagree with the parameters
 * or with the file's length, a zero history count, and a candidate of no
 * address family; it removes such a file.  A file it cannot read now
 * (out of memory) stays for the next start.  Names are window- and
 * exactly 20 digits.  Sketches read back carry the store's parameters,
 * secret zeroed, like the daemon's history (options.h).
 *
 * Candidates of the windows still open.  A flow is reported once per
 * window, CPU and metric, when it crosses the threshold, so a report the
 * daemon took from the ring buffer before it was killed is not sent
 * again: each new candidate of a pending window is appended to
 * pending-SEQ as it is filed (written after each drain of the ring
 * buffer), and the adopting daemon files them again.  pending-SEQ is a
 * sequence of 48-byte struct fsd_candidate records, nothing else; a
 * partial record at the end (a write cut short) is ignored, and the file
 * goes once its window has its own file.
 */
#ifndef FLOWSKETCHD_WINSTORE_H
#define FLOWSKETCHD_WINSTORE_H

#include <limits.h>
#include <stdbool.h>
#include "history.h"

#define FSD_WINFILE_MAGIC "FSWINDOW"
#define FSD_WINFILE_VERSION 1
#define FSD_WINFILE_DATA 4096

struct fsd_winfile_header {
	char magic[8];
	__u32 version;
	__u32 data_offset;
	struct fs_sketch_params params;
	__u64 fingerprint;
	__u64 seq;
	__u64 start_ns;
	__u64 end_ns;
	struct fs_window_totals totals;
	struct fs_window_totals ever;
	__u64 ever_windows;
	__u64 part_bytes[2];		/* C and H: each kind's, in its order */
	__u64 candidates;
	__u64 detect_bytes[FS_NKINDS - 2];	/* P, S and Q (sketch_kind.h's order) */
};

_Static_assert(sizeof(struct fsd_winfile_header) == 168, "header layout");
_Static_assert(sizeof(struct fsd_candidate) == 48, "candidate records");

/*
 * The room a store's files may take when stores share a directory.  The
 * state budget (statebudget.h), which sits above the stores, implements
 * it and gives each store it covers a pointer (fsd_state_budget_add());
 * the store knows nothing else of it.  Sizes are bytes rounded up to the
 * file system's block with round(), as du counts them.
 */
struct fsd_winstore_room {
	unsigned long long (*round)(const struct fsd_winstore_room *r,
				    unsigned long long bytes);
	/* Evict older windows until need more bytes fit: 0 or -ENOSPC. */
	int (*reserve)(struct fsd_winstore_room *r, unsigned long long need);
	/* A write found the disk full: evict the oldest window.  0, or
	 * -ENOENT when none is left. */
	int (*evict_one)(struct fsd_winstore_room *r);
	/* bytes now taken (> 0) or given back (< 0) */
	void (*charge)(struct fsd_winstore_room *r, long long bytes);
};

struct fsd_winstore {
	char dir[PATH_MAX - 64];
	struct fs_sketch_params params;	/* secret zeroed */
	__u64 fingerprint;
	bool usable;			/* the directory could be made */
	int lock_fd;			/* the directory, flock()ed: one daemon */
	__u64 stored;			/* windows written */
	__u64 errors;			/* windows that could not be */
	/* Candidates filed since the last flush, and their windows. */
	struct fsd_candidate *note;
	__u64 *note_seq;
	__u32 nnote;
	__u64 journal_errors;		/* records that could not be written */
	__u32 backoff;			/* windows not tried after a full disk */
	/* The state directory's budget, shared with the other histories
	 * (statebudget.h); NULL: no budget, a full disk backs off. */
	struct fsd_winstore_room *budget;
	__u64 files;			/* window files held now */
	__u64 evicted;			/* of this store's, to keep the budget */
};

/* After a window could not be stored for want of room, the next ones
 * go to memory only without a try, so that a full /run is not hit
 * every window (nor every other service's writes there).  With a budget,
 * only once no window is left to evict (statebudget.h). */
#define FSD_WINSTORE_BACKOFF 60

#define FSD_WINSTORE_NOTES 4096	/* buffered before a forced flush */

/*
 * Open dir (made 0700 if missing) for windows of params, and lock it.
 * keep_files: an adopting daemon's, whose windows are there to be read;
 * otherwise whatever a previous datapath left is removed.  A directory
 * that cannot be made is logged and leaves the store unusable: windows
 * then live on the heap only, and a restart loses them.  0, or -EBUSY
 * (message printed) when another daemon holds dir.
 */
int fsd_winstore_open(struct fsd_winstore *ws, const char *dir,
		      const struct fs_sketch_params *params, bool keep_files);
/* Unlock (the files stay). */
void fsd_winstore_close(struct fsd_winstore *ws);

/*
 * Write window seq (sketch s with its totals, candidates c, the history's
 * totals after it) and map it: 0 with *view (s's layout, cells in the
 * mapping) and *m set, or -errno (nothing left behind).  With a budget,
 * room is made first by evicting the oldest windows of every history
 * sharing it, and a write that fails with ENOSPC or EDQUOT evicts the
 * oldest and is tried again; -ENOSPC only when nothing is left to evict.
 */
int fsd_winstore_put(struct fsd_winstore *ws, __u64 seq, __u64 start_ns,
		     __u64 end_ns, const struct fs_sketch *s,
		     const struct fsd_candidates *c,
		     const struct fs_window_totals *ever, __u64 ever_windows,
		     struct fs_sketch *view, struct fsd_window_map *m);

/* Bytes of a window file of p with ncandidates (layout above). */
size_t fsd_winfile_bytes(const struct fs_sketch_params *p, __u64 ncandidates);

/* Remove window seq's file (the history dropped it). */
void fsd_winstore_drop(struct fsd_winstore *ws, __u64 seq);

/*
 * Read the stored windows below before_seq into h, oldest first, at most
 * h->capacity (the newest).  Files that fail the checks above are logged
 * and removed.  The number restored, or -errno; *last_end_ns: the newest
 * one's end (0 if none).
 */
int fsd_winstore_load(struct fsd_winstore *ws, struct fsd_history *h,
		      __u64 before_seq, __u64 *last_end_ns);

/* A new candidate of pending window seq (buffered). */
void fsd_winstore_note(struct fsd_winstore *ws, __u64 seq,
		       const struct fs_flow_key *key, __u64 hash);
/* Append what was noted to the journals. */
void fsd_winstore_flush(struct fsd_winstore *ws);
/* Window seq has its file, or is lost: its journal goes. */
void fsd_winstore_forget(struct fsd_winstore *ws, __u64 seq);
/*
 * File the journaled candidates of the pending windows first_seq and
 * first_seq + 1 in h again; journals of any other window are removed.
 * The number of candidates read.
 */
__u64 fsd_winstore_replay(struct fsd_winstore *ws, struct fsd_history *h,
			  __u64 first_seq);

/* Is window seq stored? */
bool fsd_winstore_has(const struct fsd_winstore *ws, __u64 seq);
/* Forget what was noted and not yet journaled (a stop that clears). */
void fsd_winstore_discard(struct fsd_winstore *ws);
/* Remove every window and journal file, then the directory if that
 * leaves it empty (a stop without --keep, holding the lock). */
void fsd_winstore_clear(const char *dir);
/* The same for --detach: takes the directory's lock first.  0, or
 * -EBUSY (message printed) when a daemon holds it. */
int fsd_winstore_clear_locked(const char *dir);

#endif /* FLOWSKETCHD_WINSTORE_H */
