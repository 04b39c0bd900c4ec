/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * daemon.h - the state of one flowsketchd, shared by its parts.
 *
 * One epoll loop (daemon.c) serves the window timer, signals, the report
 * ring buffer, the query socket's clients (server.h) and link changes
 * (ifwatch.h); it alone changes the daemon's state.  Span queries run on
 * query threads (workers.h), which share only what query names (struct
 * fsd_query_ctx): the histories under their locks (history.h, "Threads"),
 * so a query always sees whole windows and never holds up a rotation.
 */
#ifndef FLOWSKETCHD_DAEMON_H
#define FLOWSKETCHD_DAEMON_H

#include "windows/accuracy_watch.h"
#include "policy/policy.h"
#include <stdbool.h>
#include "base/answer.h"
#include "blocklist/blocklist.h"
#include "windows/history.h"
#include "frontends/ifwatch.h"
#include "frontends/loader.h"
#include "frontends/frontend.h"
#include "service/metrics.h"
#include "base/options.h"
#include "base/pinlock.h"
#include "windows/reports.h"
#include "windows/rotation.h"
#include "service/server.h"
#include "windows/statebudget.h"
#include "service/view.h"
#include "windows/winstore.h"
#include "service/workers.h"

struct ring_buffer;

struct fsd_daemon {
	struct fsd_options opts;
	struct fsd_pinlock lock;
	struct fsd_loader loader;	/* the in direction's object, links */
	/* The frontends (frontend.h); fe[FSD_FE_IN]'s object is the
	 * loader's, its store the state directory's top. */
	struct fsd_frontend fe[FSD_FE_MAX];
	struct fsd_ifwatch ifwatch;	/* interfaces coming and going */
	struct fsd_server server;	/* clients of the query socket */
	struct fsd_workers workers;	/* query threads */
	struct fsd_query_ctx query;	/* what they answer from */
	struct fsd_blocklist blocklist;	/* sources the datapath drops */
	struct fsd_policy_state policy;	/* --policy: what it blocks */
	struct fsd_policy_block policy_block;	/* a tick's change */
	/* --sample-rate: every inbound window's sample check, for status
	 * and /metrics (accuracy_watch.h), and the last window checked. */
	struct fsd_accuracy_watch accuracy;
	__u64 accuracy_seq;
	struct fsd_state_budget budget;	/* what every store may hold together */
	struct fsd_metrics metrics;	/* --metrics: /metrics (metrics.h) */
	struct fsd_view view;		/* what status and metrics read */
	/* What exports relabel cells and registers with (export_perm.h):
	 * derived from the secret, which setup() wipes. */
	struct fs_hash_secret export_key;
	/* The datapath's own hash keys (hash.h), which the detection
	 * queries find a candidate's buckets with; never leave the host. */
	struct fs_hash_key hash_key;
	bool running;			/* setup done: a stop may --keep */
	bool adopting;			/* a pinned datapath is being taken over:
					   a failed setup leaves it as it was */
	bool workers_ready;
	int timer_fd;
	__u64 timer_due_ns;		/* CLOCK_MONOTONIC: next rotation due */
	int signal_fd;
	int epoll_fd;
	__u64 started_ns;
};

/*
 * Block the stop signals (SIGINT, SIGTERM, SIGHUP): main's first step, so
 * that one sent at any moment of the start waits, pending, for the loop's
 * signalfd (made from the same set) instead of killing a half-made start
 * or, inherited as ignored (a background job of a script), vanishing.
 * They are never unblocked.  0 or -errno.
 */
int fsd_daemon_block_signals(void);
/* Set up everything (0, or -errno with the host left as it was), run
 * until SIGINT/SIGTERM, undo everything (unless --keep).  The query
 * socket's requests go to request (the command table, dispatch.h). */
int fsd_daemon_run(struct fsd_daemon *d, fsd_request_fn *request);
/* flowsketchd --detach: 0 or -errno. */
int fsd_daemon_detach(const struct fsd_options *o);

#endif /* FLOWSKETCHD_DAEMON_H */
