/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * server.h - the query socket of protocol.h.
 *
 * One request per connection, served piecewise by the daemon's event
 * loop: sockets are non-blocking, every client sits in a slot with a
 * deadline, and the loop does for each only what can be done without
 * waiting (read what has arrived, send what the socket takes).  Requests
 * that are cheap (status, errors) are answered at once; span queries and
 * the blocklist's changes and pages go to the query threads (workers.h,
 * blockreq.h) and their answer is sent when it comes.
 * So an idle, slow, never-reading or hostile client, or a thousand of
 * them, delays no window rotation and no other client's answer: each costs
 * the loop a few system calls per event, and is dropped at its deadline.
 *
 * Deadlines, from the moment a client connects:
 *   FSD_CLIENT_TIMEOUT_MS  to send a whole request (else an error answer);
 *   FSD_QUERY_MS           for its answer to be computed (else an error;
 *                          a blocklist change: FS_BLOCK_ANSWER_MS, and
 *                          it goes on after the error);
 *   FSD_CLIENT_SEND_MS     to take the answer once it starts (else closed).
 * At most FSD_MAX_CLIENTS at once; one more is answered "busy" and closed.
 */
#ifndef FLOWSKETCHD_SERVER_H
#define FLOWSKETCHD_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "flowsketch/compat.h"
#include "protocol.h"
#include "access.h"

#define FSD_CLIENT_TIMEOUT_MS 200
#define FSD_QUERY_MS 5000
#define FSD_CLIENT_SEND_MS 1000
#define FSD_MAX_CLIENTS 1024
#define FSD_ACCEPT_PER_WAKEUP 64
/* Answers this large give their memory back to the system once sent. */
#define FSD_TRIM_BYTES (256 * 1024)
/* Answers held at once for clients that take them slowly, in all; one
 * more is refused "busy".  Part of the daemon's memory cap. */
#define FSD_ANSWER_BYTES_MAX (64ULL << 20)
/* File descriptors the daemon wants: every client, and its own. */
#define FSD_NOFILE (FSD_MAX_CLIENTS + 256)

/* epoll data of a client's fd: this bit, and the client's id (its slot
 * is the id modulo FSD_MAX_CLIENTS). */
#define FSD_EV_CLIENT (1ULL << 63)

enum fsd_client_state {
	FSD_CLIENT_READING,	/* request incomplete */
	FSD_CLIENT_WAITING,	/* a query thread makes the answer */
	FSD_CLIENT_WRITING,	/* the socket takes the answer slowly */
};

struct fsd_client {
	int fd;
	__u32 slot;
	__u64 id;
	enum fsd_client_state state;
	__u64 deadline_ms;		/* CLOCK_MONOTONIC */
	char in[FS_REQUEST_MAX + 1];
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	struct fsd_job *job;		/* WAITING: its query, the workers' */
	struct fsd_peer peer;		/* who connected, what it may ask */
};

struct fsd_job;
struct fsd_workers;
struct json_object;

/*
 * What takes a complete request from peer (the command table above the
 * server, dispatch.h): either *now gets the answer, or *job a query for
 * the query threads, tagged with the client's id.
 */
typedef void fsd_request_fn(void *owner, const char *text,
			    size_t len, __u64 client,
			    const struct fsd_peer *peer,
			    struct json_object **now, struct fsd_job **job);

/* The client id of the daemon's own jobs (an expiry, blockreq.h): no
 * client has it, and their answers go to the log when they fail. */
#define FSD_CLIENT_DAEMON 0

struct fsd_server {
	fsd_request_fn *request;	/* given by the daemon's owner */
	void *owner;			/* request's first argument, opaque here */
	struct fsd_workers *workers;	/* where span queries go */
	const char *path;		/* the socket's, and who may read */
	const char *read_group;
	gid_t read_gid;
	int listen_fd;
	int epoll_fd;			/* the loop's, which serves the clients */
	bool socket_created, dir_created;	/* removed at close */
	struct fsd_client *clients[FSD_MAX_CLIENTS];
	__u32 nclients;
	__u64 next_id;
	__u64 refused;			/* counters for status: table full */
	__u64 timeouts;			/* a deadline passed */
	size_t out_bytes;		/* answers held for slow readers */
	bool accept_paused;		/* out of file descriptors */
};

/* Before anything else: nothing held; requests go to request(owner, ...),
 * span queries to workers. */
void fsd_server_init(struct fsd_server *s, fsd_request_fn *request,
		     void *owner, struct fsd_workers *workers);
/* Create the socket at path and listen: directory 0700 if missing, socket
 * 0600; with a read_group directory 0750 and socket 0660, group
 * read_gid. */
int fsd_server_open(struct fsd_server *s, const char *path,
		    const char *read_group, gid_t read_gid);
/* Serve the socket from the event loop epoll_fd (its epoll data is the
 * listening fd; its clients' FSD_EV_CLIENT | id).  0 or -errno. */
int fsd_server_watch(struct fsd_server *s, int epoll_fd);
/* Accept the connections waiting on the listening socket. */
void fsd_server_accept(struct fsd_server *s);
/* An epoll event on a client's fd (data FSD_EV_CLIENT | id). */
void fsd_server_client_event(struct fsd_server *s, __u64 id, __u32 events);
/* A query thread finished a job: send its answer to its client if that
 * client still waits for it; frees the job. */
void fsd_server_job_done(struct fsd_server *s, struct fsd_job *job);
/* Act on passed deadlines, at most FSD_EXPIRE_BATCH of them a call;
 * returns the milliseconds to the next one, -1 for none (an epoll_wait
 * timeout), or FSD_EXPIRE_MORE when more have passed: the loop closes the
 * window if its timer is due, and calls again. */
#define FSD_EXPIRE_BATCH 16
#define FSD_EXPIRE_MORE (-2)
int fsd_server_expire(struct fsd_server *s);
/* Close every client (at stop). */
void fsd_server_drop_clients(struct fsd_server *s);
/* Close and remove the socket (and the directory if we made it). */
void fsd_server_close(struct fsd_server *s);

/* CLOCK_MONOTONIC in milliseconds. */
__u64 fsd_monotonic_ms(void);

#endif /* FLOWSKETCHD_SERVER_H */
