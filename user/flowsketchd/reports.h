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
 */
#ifndef FLOWSKETCHD_REPORTS_H
#define FLOWSKETCHD_REPORTS_H

#include "history.h"

struct ring_buffer;

/* The ring buffer of map_fd, filing into h; NULL with a message and errno. */
struct ring_buffer *fsd_reports_open(int map_fd, struct fsd_history *h);

#endif /* FLOWSKETCHD_REPORTS_H */
