/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * outbound.h - the "out" direction: what the egress frontend counts
 * (egress.h), with its own history, rotation, reports and window store,
 * set up, rotated and torn down beside the XDP ("in") direction's.
 *
 * The two directions are counted in separate maps (per-CPU state is only
 * correct while one program context writes it, and XDP runs in softirq
 * while the transmit tracepoint runs in whatever context sends), closed
 * by the same timer one after the other, and kept in separate histories,
 * whose windows therefore end within microseconds of each other.  Its
 * finished windows are stored in STATE_DIR/egress.
 */
#ifndef FLOWSKETCHD_OUTBOUND_H
#define FLOWSKETCHD_OUTBOUND_H

#include <stdbool.h>
#include "egress.h"
#include "history.h"
#include "reports.h"
#include "rotation.h"
#include "winstore.h"

struct fsd_daemon;
struct ring_buffer;

struct fsd_outbound {
	struct fsd_egress egress;
	struct fsd_history history;
	struct fsd_rotation rotation;
	struct ring_buffer *reports;
	struct fsd_reports report_state;
	struct fsd_winstore store;
	__u32 windows_restored;
	int ifindex[FSD_MAX_IFACES];	/* in fs_ifaces now, per -i; 0 none */
	bool loaded, history_ready, rotation_ready;
	bool adopted;
	__u64 first;			/* the history's first pending window */
	__u64 last_end_ns;		/* the newest restored window's end */
};

/* Load (adopting what XDP's adoption found pinned for it), the store, the
 * history, the rotation and the ring buffer.  0 or -errno. */
int fsd_outbound_setup(struct fsd_daemon *d, const struct fs_hash_secret *secret,
		       bool adopt);
/* After the XDP pins: pin, finish an adopted rotation or start the first
 * window.  0 or -errno. */
int fsd_outbound_pin(struct fsd_daemon *d);
/* After the XDP attach: the interfaces, then the link.  0 or -errno. */
int fsd_outbound_attach(struct fsd_daemon *d);
/* Follow the XDP attachments (interfaces come and go, ifwatch.h). */
void fsd_outbound_sync_ifaces(struct fsd_daemon *d);
void fsd_outbound_teardown(struct fsd_daemon *d, bool keep);

#endif /* FLOWSKETCHD_OUTBOUND_H */
