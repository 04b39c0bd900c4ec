/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * reports.h - heavy-hitter reports from the datapath's ring buffer.
 *
 * Each struct fs_hh_report names a flow and the window it crossed the
 * threshold in; it is filed as a candidate of that window in the history
 * (which deduplicates and caps).  The ring buffer is drained by the event
 * loop when it signals data, and once more by every rotation right after
 * the barrier, so that all reports of the closing window are in before
 * the window is committed.
 *
 * Every record taken from the ring buffer is counted once, in received,
 * and once more in exactly one of the outcomes below, so that
 *
 *	received == filed + duplicates + stray + refused + malformed + failed
 *
 * always holds, and, once the ring buffer is drained, the datapath's
 * FS_STAT_REPORTS (records it put in the ring) equals received; its
 * FS_STAT_REPORTS_DROPPED are the records that never got in (ring full).
 * So every report the datapath raised is accounted for by some counter.
 */
#ifndef FLOWSKETCHD_REPORTS_H
#define FLOWSKETCHD_REPORTS_H

#include "history.h"
#include "winstore.h"

struct ring_buffer;

struct fsd_report_counts {
	__u64 received;		/* records taken from the ring buffer */
	__u64 filed;		/* a new candidate of a pending window */
	__u64 duplicates;	/* already a candidate of that window (the
				   same flow on another CPU or metric) */
	__u64 stray;		/* of no pending window: a lost window's,
				   late (history.h's stray_reports) */
	__u64 refused;		/* the window's set was full (history.h's
				   candidate_overflow) */
	__u64 malformed;	/* shorter than struct fs_hh_report */
	__u64 failed;		/* could not be filed (-ENOMEM, -EINVAL) */
};

/* The ring buffer callback's context: where reports go, what became of
 * them.  The caller's, living as long as the ring buffer; read on the
 * thread that drains it (the event loop). */
struct fsd_reports {
	struct fsd_history *h;
	struct fsd_winstore *store;	/* journals new candidates (or NULL) */
	struct fsd_report_counts counts;
};

/*
 * The ring buffer of map_fd, filing into h through r (whose counters start
 * at zero); NULL with a message and errno.  Freed with ring_buffer__free().
 * Drain it with fsd_reports_drain(), which also journals what was filed
 * (winstore.h) once the ring is empty.
 */
struct ring_buffer *fsd_reports_open(struct fsd_reports *r, int map_fd,
				     struct fsd_history *h);

/* ring_buffer__consume(rb), then the journal flushed. */
void fsd_reports_drain(struct ring_buffer *rb, struct fsd_reports *r);

#endif /* FLOWSKETCHD_REPORTS_H */
