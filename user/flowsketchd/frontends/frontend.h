/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * frontend.h - the daemon's frontends, one list: each a BPF object
 * (object.h) counting one direction, with its own history, rotation,
 * reports and window store.
 *
 *   fe[FSD_FE_IN]    XDP (fsd_fe_xdp) or, --ingress tracepoint, the
 *                    receive tracepoint (fsd_fe_ingress_tp): "in"; its
 *                    object and interfaces are the loader's (loader.h)
 *   fe[FSD_FE_OUT]   egress (fsd_tp_egress): the "out" direction
 *   fe[FSD_FE_CONN]  connections (fsd_tp_conn): `top --sort connections`
 *
 * What differs between the kinds is a const struct fsd_frontend_ops
 * (the kernel's bpf_map_ops is the model); status, /metrics, the
 * rotation and the event loop walk the list.  The frontends count in
 * separate maps (per-CPU state is only correct while one program context
 * writes it), are closed by the same timer one after the other, and kept
 * in separate histories, whose windows therefore end within microseconds
 * of each other.  Finished windows are stored in STATE_DIR (in) or
 * STATE_DIR/NAME (the tracepoint kind's name).
 *
 * Adding a frontend: a BPF program, a tracepoint kind (tp_kinds.c),
 * its ops row here and in frontend.c, and its FSD_FE_ index.
 */
#ifndef FLOWSKETCHD_FRONTEND_H
#define FLOWSKETCHD_FRONTEND_H

#include <stdbool.h>
#include "datapath/tp_object.h"
#include "datapath/ifslots.h"
#include "windows/history.h"
#include "windows/reports.h"
#include "windows/rotation.h"
#include "windows/winstore.h"

struct fsd_loader;
struct fsd_options;
struct fsd_state_budget;
struct ring_buffer;

enum fsd_frontend_id { FSD_FE_IN, FSD_FE_OUT, FSD_FE_CONN, FSD_FE_MAX };

struct fsd_frontend_ops {
	const char *name;		/* status and /metrics: "xdp", "egress" */
	const char *direction;		/* status's: "in", "out", "connections" */
	const char *metrics_direction;	/* /metrics' direction; NULL: none */
	const char *hook;		/* "xdp", "tp_btf/net_dev_start_xmit" */
	const char *packets, *bytes;	/* what its totals count */
	const char *setup_what;		/* "the egress frontend": setup errors */
	bool tracing;			/* a tracing link: attached, misses */
	const struct fsd_tp_kind *tp;	/* its object; NULL: the loader's */
};

extern const struct fsd_frontend_ops fsd_fe_xdp, fsd_fe_ingress_tp,
	fsd_fe_egress, fsd_fe_conn;

struct fsd_frontend {
	const struct fsd_frontend_ops *ops;	/* NULL: not set up */
	const struct fsd_object *bpf;	/* its object: the loader's or obj's */
	const struct fsd_ifslots *counts;	/* per-interface counts; NULL none */
	const int *link_fd;		/* its tracing link's fd; NULL none */
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
	bool loaded, history_ready, rotation_ready;	/* setup's steps done */
	bool adopted;
	__u64 first;			/* the history's first pending window */
	__u64 last_end_ns;		/* the newest restored window's end */
};

/* What the frontends read of the daemon around them. */
struct fsd_frontend_env {
	const struct fsd_options *opts;
	const struct fsd_loader *loader;	/* its XDP attachments, per -i */
	struct fsd_state_budget *budget;	/* shared by every store */
	__u64 started_ns;		/* the first window's start (at pin) */
};

/* The kind of list entry id (FSD_FE_*), --ingress tracepoint or not. */
const struct fsd_frontend_ops *fsd_frontend_kind(unsigned int id, bool ingress_tp);
/* Before setup: nothing held; ops: its kind. */
void fsd_frontend_init(struct fsd_frontend *fe, const struct fsd_frontend_ops *ops);
/* The in direction's: the loader's object, and l's counts and link. */
void fsd_frontend_use_loader(struct fsd_frontend *fe, const struct fsd_loader *l);
/* A tracepoint kind's (ops->tp): load it (adopting what is pinned for it
 * when the XDP datapath is adopted), the store, the history, the rotation
 * and the ring buffer.  0 or -errno, logged. */
int fsd_frontend_setup(const struct fsd_frontend_env *env, struct fsd_frontend *fe,
		       const struct fs_hash_secret *secret, bool adopt);
/* Once fe's object is loaded (fe->bpf) and its store open: its history
 * (with the stored windows when fe->adopted), rotation and reports.
 * 0 or -errno. */
int fsd_frontend_open_windows(const struct fsd_frontend_env *env,
			      struct fsd_frontend *fe);
/* After the XDP pins: pin, finish an adopted rotation or start the first
 * window.  0 or -errno. */
int fsd_frontend_pin(const struct fsd_frontend_env *env, struct fsd_frontend *fe);
/* After the XDP attach: the interfaces, then the link.  0 or -errno. */
int fsd_frontend_attach(const struct fsd_frontend_env *env, struct fsd_frontend *fe);
/* Follow the XDP attachments (interfaces come and go, ifwatch.h). */
void fsd_frontend_sync_ifaces(const struct fsd_frontend_env *env,
			      struct fsd_frontend *fe);
/* A tracepoint kind's: close its object (keep: leave it pinned and
 * counting).  Its windows stay for the span queries still running. */
void fsd_frontend_close_object(struct fsd_frontend *fe, bool keep);
/* What fsd_frontend_open_windows() made, once no query thread reads it
 * (workers.h); keep: the stored windows too (else they are cleared). */
void fsd_frontend_close_windows(struct fsd_frontend *fe, bool keep);
/* flowsketchd --detach: kind k's pins and stored windows.  The number of
 * pin directories removed, or -errno. */
int fsd_frontend_remove(const struct fsd_tp_kind *k, const char *pin_dir,
			const char *state_dir);

#endif /* FLOWSKETCHD_FRONTEND_H */
