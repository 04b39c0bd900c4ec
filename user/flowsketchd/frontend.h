/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * frontend.h - a tracepoint frontend's counts: its BPF object
 * (tp_object.h) with its own history, rotation, reports and window store,
 * set up, rotated and torn down beside the XDP ("in") object's.
 *
 *   d->out   egress (fsd_tp_egress): the "out" direction
 *   d->conn  connections (fsd_tp_conn): `top --sort connections`
 *
 * The frontends count in separate maps (per-CPU state is only correct
 * while one program context writes it), are closed by the same timer one
 * after the other, and kept in separate histories, whose windows therefore
 * end within microseconds of each other.  Finished windows are stored in
 * STATE_DIR/NAME (the kind's name).
 */
#ifndef FLOWSKETCHD_FRONTEND_H
#define FLOWSKETCHD_FRONTEND_H

#include <stdbool.h>
#include "tp_object.h"
#include "ifslots.h"
#include "history.h"
#include "reports.h"
#include "rotation.h"
#include "winstore.h"

struct fsd_daemon;
struct ring_buffer;

struct fsd_frontend {
	struct fsd_tp_object obj;
	struct fsd_history history;
	struct fsd_rotation rotation;
	struct ring_buffer *reports;
	struct fsd_reports report_state;
	struct fsd_winstore store;
	__u32 windows_restored;
	int ifindex[FSD_MAX_IFACES];	/* in fs_ifaces now, per -i; 0 none */
	struct fsd_ifslots ifslots;	/* its per-interface counters; t NULL
					   unless the kind counts -i */
	bool loaded, history_ready, rotation_ready;
	bool adopted;
	__u64 first;			/* the history's first pending window */
	__u64 last_end_ns;		/* the newest restored window's end */
};

/* Before setup: nothing held. */
void fsd_frontend_init(struct fsd_frontend *fe);
/* Load kind k (adopting what is pinned for it when the XDP datapath is
 * adopted), the store, the history, the rotation and the ring buffer.
 * 0 or -errno. */
int fsd_frontend_setup(struct fsd_daemon *d, struct fsd_frontend *fe,
		       const struct fsd_tp_kind *k,
		       const struct fs_hash_secret *secret, bool adopt);
/* After the XDP pins: pin, finish an adopted rotation or start the first
 * window.  0 or -errno. */
int fsd_frontend_pin(struct fsd_daemon *d, struct fsd_frontend *fe);
/* After the XDP attach: the interfaces, then the link.  0 or -errno. */
int fsd_frontend_attach(struct fsd_daemon *d, struct fsd_frontend *fe);
/* Follow the XDP attachments (interfaces come and go, ifwatch.h). */
void fsd_frontend_sync_ifaces(struct fsd_daemon *d, struct fsd_frontend *fe);
void fsd_frontend_teardown(struct fsd_frontend *fe, bool keep);
/* flowsketchd --detach: kind k's pins and stored windows.  The number of
 * pin directories removed, or -errno. */
int fsd_frontend_remove(const struct fsd_tp_kind *k, const char *pin_dir,
			const char *state_dir);

#endif /* FLOWSKETCHD_FRONTEND_H */
