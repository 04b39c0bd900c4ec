/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * daemon.h - the state of one flowsketchd, shared by its parts.
 *
 * Single-threaded: one epoll loop (daemon.c) serves the window timer,
 * signals, the report ring buffer, the query socket and link changes
 * (ifwatch.h), so no part needs
 * a lock and a query always sees whole windows.
 */
#ifndef FLOWSKETCHD_DAEMON_H
#define FLOWSKETCHD_DAEMON_H

#include <stdbool.h>
#include "history.h"
#include "ifwatch.h"
#include "loader.h"
#include "options.h"
#include "pinlock.h"
#include "rotation.h"

struct ring_buffer;
struct json_object;

struct fsd_daemon {
	struct fsd_options opts;
	struct fsd_pinlock lock;
	struct fsd_loader loader;
	struct fsd_history history;
	bool history_ready;
	struct fsd_rotation rotation;
	bool rotation_ready;
	struct ring_buffer *reports;
	struct fsd_ifwatch ifwatch;	/* interfaces coming and going */
	int listen_fd;
	bool socket_created;
	bool socket_dir_created;
	int timer_fd;
	int signal_fd;
	int epoll_fd;
	__u64 started_ns;
};

/* Set up everything (0, or -errno with the host left as it was), run
 * until SIGINT/SIGTERM, undo everything. */
int fsd_daemon_run(struct fsd_daemon *d);

/* Answers to the requests of protocol.h (query.c, status.c). */
struct json_object *fsd_answer(struct fsd_daemon *d, const char *request,
			       size_t len);
struct json_object *fsd_answer_status(struct fsd_daemon *d);
struct json_object *fsd_answer_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* FLOWSKETCHD_DAEMON_H */
