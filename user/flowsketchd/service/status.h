/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* status.h - the "status" answer of protocol.h, in the event loop. */
#ifndef FLOWSKETCHD_STATUS_H
#define FLOWSKETCHD_STATUS_H

struct fsd_view;
struct json_object;

/* The daemon as v shows it, or an error when the datapath's counters
 * cannot be read (an answer without them would read as zeros). */
struct json_object *fsd_answer_status(const struct fsd_view *v);

#endif /* FLOWSKETCHD_STATUS_H */
