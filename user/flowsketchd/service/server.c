// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* server.c - unix socket, one JSON request per connection (server.h). */
#include <errno.h>
#include <libgen.h>
#include <malloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "base/answer.h"
#include "protocol.h"
#include "base/log.h"
#include "base/safedir.h"
#include "server.h"
#include "workers.h"


static int socket_dir(char *buf, size_t len, const char *path)
{
	char copy[PATH_MAX];

	if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
		return -ENAMETOOLONG;
	snprintf(buf, len, "%s", dirname(copy));
	return 0;
}

/*
 * A socket file at path that refuses connections is left by a dead daemon
 * and may go.  Anything else stays: connect() refuses on a regular file
 * just as on a dead socket, so without the type check a mistyped --socket
 * would delete whatever file it names.
 */
static int remove_stale_socket(const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, err = 0;

	if (lstat(addr->sun_path, &st)) {
		if (errno == ENOENT)
			return 0;
		return fsd_fail(-errno, "cannot stat %s", addr->sun_path);
	}
	if (!S_ISSOCK(st.st_mode))
		return fsd_reject(-EEXIST, "%s exists and is not a socket", addr->sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
		fsd_err("another daemon is listening on %s", addr->sun_path);
		err = -EADDRINUSE;
	} else if (errno != ECONNREFUSED) {
		err = fsd_fail(-errno, "cannot tell whether a daemon listens on %s",
			       addr->sun_path);
	} else if (unlink(addr->sun_path)) {
		err = fsd_fail(-errno, "cannot remove stale socket %s", addr->sun_path);
	}
	close(fd);
	return err;
}

/*
 * The socket's directory: made 0700 (0750 group GROUP with --read-group,
 * so that the group can reach the socket) when missing; one that exists
 * must be safe (safedir.h) and, with --read-group, let the group through.
 */
static int open_dir(struct fsd_server *s, const char *dir)
{
	struct stat st;
	int err;

	if (!mkdir(dir, 0700)) {
		s->dir_created = true;
		/* chmod after chown: never open to a group that is not it. */
		if (s->read_group && (chown(dir, 0, s->read_gid) || chmod(dir, 0750)))
			return fsd_fail(-errno, "cannot give %s to group %s", dir, s->read_group);
		return 0;
	}
	if (errno != EEXIST)
		return fsd_fail(-errno, "cannot create %s", dir);
	err = fsd_safedir_check(dir, "socket directory");
	if (err || !s->read_group)
		return err;
	if (stat(dir, &st))
		return fsd_fail(-errno, "cannot stat %s", dir);
	if (!(st.st_mode & S_IXOTH) &&
	    !(st.st_gid == s->read_gid && (st.st_mode & S_IXGRP)))
		return fsd_reject(-EACCES, "socket directory %s (mode %04o, gid %u) does not let group %s reach the socket: chgrp %s and chmod 0750 it, or remove it for flowsketchd to make",
				  dir, (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_gid,
				  s->read_group, s->read_group);
	return 0;
}

/* Root only (0600) or, with --read-group, 0660 root:GROUP.  Born 0600
 * under the umask: there is no moment where it is open to more. */
static int bind_socket(struct fsd_server *s, int fd,
		       const struct sockaddr_un *addr)
{
	mode_t old_umask;
	int err;

	old_umask = umask(0177);
	err = bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) ? -errno : 0;
	umask(old_umask);
	if (err)
		return fsd_fail(err, "cannot bind %s", addr->sun_path);
	s->socket_created = true;
	/* By path: the directory was checked (no one else writes there). */
	if (s->read_group &&
	    (chown(addr->sun_path, 0, s->read_gid) || chmod(addr->sun_path, 0660)))
		return fsd_fail(-errno, "cannot give %s to group %s",
				addr->sun_path, s->read_group);
	return 0;
}

void fsd_server_init(struct fsd_server *s, fsd_request_fn *request,
		     void *owner, struct fsd_workers *workers)
{
	s->request = request;
	s->owner = owner;
	s->next_id = FSD_CLIENT_DAEMON + 1;
	s->workers = workers;
	s->listen_fd = -1;
	s->epoll_fd = -1;
}

int fsd_server_open(struct fsd_server *s, const char *path,
		    const char *read_group, gid_t read_gid)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[PATH_MAX];
	int fd, err;

	s->path = path;
	s->read_group = read_group;
	s->read_gid = read_gid;

	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path) >=
	    (int)sizeof(addr.sun_path))
		return fsd_reject(-ENAMETOOLONG, "socket path %s is longer than %zu bytes",
				  path, sizeof(addr.sun_path) - 1);
	err = socket_dir(dir, sizeof(dir), path);
	if (err)
		return err;
	err = open_dir(s, dir);
	if (err)
		return err;
	err = remove_stale_socket(&addr);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fsd_fail(-errno, "cannot create a unix socket");
	s->listen_fd = fd;
	err = bind_socket(s, fd, &addr);
	if (err)
		return err;
	if (listen(fd, 16))
		return fsd_fail(-errno, "cannot listen on %s", path);
	if (read_group)
		fsd_info("listening on %s (root; group %s reads)", path,
			 read_group);
	else
		fsd_info("listening on %s (root only)", path);
	return 0;
}

void fsd_server_close(struct fsd_server *s)
{
	char dir[PATH_MAX];

	if (s->listen_fd >= 0)
		close(s->listen_fd);
	s->listen_fd = -1;
	if (s->socket_created && unlink(s->path))
		fsd_warn("cannot remove %s: %s", s->path, strerror(errno));
	s->socket_created = false;
	if (s->dir_created && !socket_dir(dir, sizeof(dir), s->path))
		rmdir(dir);
	s->dir_created = false;
}

__u64 fsd_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static int client_watch(struct fsd_server *s, struct fsd_client *c,
			__u32 events, int op)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = FSD_EV_CLIENT | c->id,
	};

	return epoll_ctl(s->epoll_fd, op, c->fd, &ev) ? -errno : 0;
}

/* Watch the listening socket for events (op: EPOLL_CTL_ADD or _MOD). */
static int listen_watch(struct fsd_server *s, __u32 events, int op)
{
	/* All 64 bits set: the loop tests FSD_EV_CLIENT, bit 63. */
	struct epoll_event ev = { .events = events,
				  .data.u64 = (__u32)s->listen_fd };

	return epoll_ctl(s->epoll_fd, op, s->listen_fd, &ev) ? -errno : 0;
}

int fsd_server_watch(struct fsd_server *s, int epoll_fd)
{
	s->epoll_fd = epoll_fd;
	return listen_watch(s, EPOLLIN, EPOLL_CTL_ADD);
}

/* Take accepting up again once a descriptor is free (fsd_server_accept()
 * stops when there is none). */
static void accept_resume(struct fsd_server *s)
{
	if (s->accept_paused && !listen_watch(s, EPOLLIN, EPOLL_CTL_MOD))
		s->accept_paused = false;
}

static void client_close(struct fsd_server *s, struct fsd_client *c)
{
	char drain[4096];
	int i;

	/* Its query, if one is still queued or running, is for nobody. */
	if (c->job)
		__atomic_store_n(&c->job->cancelled, 1, __ATOMIC_RELAXED);
	/* Unread input would make the close reset the connection, and the
	 * client lose the error answer it was just sent. */
	for (i = 0; i < 16 && recv(c->fd, drain, sizeof(drain), MSG_DONTWAIT) > 0; i++)
		;
	/* Closing the fd removes it from the epoll set. */
	close(c->fd);
	s->out_bytes -= c->out_len;
	free(c->out);
	/* A large answer (a top of thousands of flows, built on a query
	 * thread) leaves its pages in that thread's malloc arena: hand them
	 * back, so the daemon's memory follows what it holds, not the
	 * largest answer it ever sent. */
	if (c->out_len >= FSD_TRIM_BYTES)
		malloc_trim(0);
	s->clients[c->slot] = NULL;
	s->nclients--;
	free(c);
	accept_resume(s);
}

/* Send what the client takes now; close it once all is sent, or when it
 * is gone. */
static void client_send(struct fsd_server *s, struct fsd_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (c->state != FSD_CLIENT_WRITING) {
				c->state = FSD_CLIENT_WRITING;
				c->deadline_ms = fsd_monotonic_ms() +
						 FSD_CLIENT_SEND_MS;
				if (client_watch(s, c, EPOLLOUT, EPOLL_CTL_MOD))
					break;
			}
			return;
		}
		if (n <= 0)
			break;
		c->out_off += (size_t)n;
	}
	client_close(s, c);
}

static void client_answer(struct fsd_server *s, struct fsd_client *c,
			  char *text, size_t len)
{
	s->out_bytes -= c->out_len;
	free(c->out);
	c->out = text;
	c->out_len = text ? len : 0;
	c->out_off = 0;
	s->out_bytes += c->out_len;
	if (!text) {
		client_close(s, c);
		return;
	}
	client_send(s, c);
}

/* Answer with an error object (no worker involved). */
static void client_error(struct fsd_server *s, struct fsd_client *c,
			 struct json_object *answer)
{
	const char *text = json_object_to_json_string_ext(answer,
							  JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(text);
	char *out = malloc(len + 2);

	if (out) {
		memcpy(out, text, len);
		out[len] = '\n';
		out[len + 1] = 0;
	}
	json_object_put(answer);
	client_answer(s, c, out, out ? len + 1 : 0);
}

/* The request is complete: answer it now or hand it to a query thread. */
static void client_request(struct fsd_server *s, struct fsd_client *c)
{
	struct json_object *now = NULL;
	struct fsd_job *job = NULL;

	/* In the epoll set for no event while its answer is made: nothing
	 * more is read, but a hangup or error (always reported) shows that
	 * the client is gone, and its query is cancelled.  A client that
	 * only shut down its sending side raises neither and gets its
	 * answer. */
	c->state = FSD_CLIENT_WAITING;
	if (client_watch(s, c, 0, EPOLL_CTL_MOD)) {
		client_close(s, c);
		return;
	}
	s->request(s->owner, c->in, c->in_len, c->id, &c->peer, &now, &job);
	if (job) {
		if (!fsd_workers_submit(s->workers, job)) {
			c->job = job;
			c->deadline_ms = fsd_monotonic_ms() +
					 (job->answer_ms ? job->answer_ms : FSD_QUERY_MS);
			return;
		}
		fsd_job_free(job);
		now = fsd_answer_error("daemon busy: %d queries are waiting; try again",
				       FSD_QUERY_QUEUE);
	}
	client_error(s, c, now ? now : fsd_answer_error("out of memory"));
}

/* Read what the client has sent so far. */
static void client_read(struct fsd_server *s, struct fsd_client *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->in_len,
				 sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			client_close(s, c);	/* gone: nobody to answer */
			return;
		}
		if (!n) {
			/* Shut down its side without a newline: what it sent
			 * is its request (the empty one is an error). */
			client_request(s, c);
			return;
		}
		if (memchr(c->in + c->in_len, '\n', (size_t)n)) {
			c->in_len += (size_t)n;
			client_request(s, c);
			return;
		}
		c->in_len += (size_t)n;
		if (c->in_len == sizeof(c->in)) {
			client_error(s, c, fsd_answer_error("request longer than %d bytes",
							    FS_REQUEST_MAX));
			return;
		}
	}
}

void fsd_server_client_event(struct fsd_server *s, __u64 id, __u32 events)
{
	struct fsd_client *c = s->clients[id % FSD_MAX_CLIENTS];

	/* An event left in this batch for a client closed meanwhile, whose
	 * slot a newer one took, is not the newer one's. */
	if (!c || c->id != id)
		return;
	if (c->state == FSD_CLIENT_READING)
		client_read(s, c);
	else if (c->state == FSD_CLIENT_WRITING)
		client_send(s, c);
	else if (events & (EPOLLHUP | EPOLLERR))
		client_close(s, c);	/* waiting, and gone */
}

void fsd_server_job_done(struct fsd_server *s, struct fsd_job *job)
{
	__u32 slot = (__u32)(job->client % FSD_MAX_CLIENTS);
	struct fsd_client *c = s->clients[slot];

	/* A client that timed out meanwhile is gone, and its slot may
	 * serve another: the id tells.  Its pointer to the job goes in
	 * every state, since the job is freed here. */
	if (job->client == FSD_CLIENT_DAEMON) {
		/* The daemon's own change (an expiry): nobody waits, a
		 * failure is logged. */
		if (!job->answer || strstr(job->answer, "{\"error\""))
			fsd_warn("%.*s", job->answer ? (int)job->answer_len - 1 : 13,
				 job->answer ? job->answer : "out of memory");
		fsd_job_free(job);
		return;
	}
	if (c && c->id == job->client)
		c->job = NULL;
	if (c && c->id == job->client && c->state == FSD_CLIENT_WAITING) {
		if (!job->answer)
			client_error(s, c, fsd_answer_error("out of memory"));
		else if (s->out_bytes + job->answer_len > FSD_ANSWER_BYTES_MAX)
			client_error(s, c, fsd_answer_error("daemon busy: %llu MiB of answers wait for their clients; try again",
							    FSD_ANSWER_BYTES_MAX >> 20));
		else {
			client_answer(s, c, job->answer, job->answer_len);
			job->answer = NULL;
		}
	}
	fsd_job_free(job);
}

int fsd_server_expire(struct fsd_server *s)
{
	__u64 now = fsd_monotonic_ms(), next = ~0ULL;
	__u32 i, expired = 0;

	for (i = 0; i < FSD_MAX_CLIENTS && s->nclients; i++) {
		struct fsd_client *c = s->clients[i];

		if (!c)
			continue;
		if (c->deadline_ms <= now) {
			/* A thousand clients whose deadline passed at once
			 * take tens of milliseconds to answer: the loop looks
			 * at the window's timer in between. */
			if (expired++ == FSD_EXPIRE_BATCH)
				return FSD_EXPIRE_MORE;
			s->timeouts++;
			if (c->state == FSD_CLIENT_READING)
				client_error(s, c, fsd_answer_error("request not complete within %d ms",
								    FSD_CLIENT_TIMEOUT_MS));
			else if (c->state == FSD_CLIENT_WAITING && c->job &&
				 c->job->must_run) {
				unsigned int ms = c->job->answer_ms;

				c->job = NULL;
				client_error(s, c, fsd_answer_error("the change was not finished within %u ms; it goes on (status: blocklist.changing)",
								    ms));
			} else if (c->state == FSD_CLIENT_WAITING) {
				if (c->job)
					__atomic_store_n(&c->job->cancelled, 1,
							 __ATOMIC_RELAXED);
				c->job = NULL;
				client_error(s, c, fsd_answer_error("query not answered within %d ms",
								    FSD_QUERY_MS));
			}
			else
				client_close(s, c);
			/* An error answer that could not be sent at once
			 * waits with a new deadline; else the slot is free. */
			c = s->clients[i];
			if (!c)
				continue;
		}
		if (c->deadline_ms < next)
			next = c->deadline_ms;
	}
	if (next == ~0ULL)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}

/*
 * Accept what waits on the listening socket.  Each client gets a slot
 * and a deadline and is then served piecewise by the loop: nothing here
 * or in client_read()/client_send() blocks, so a client that sends
 * slowly, never sends, or never reads delays nobody but itself.  With
 * every slot taken, a newcomer is told so and closed: a flood of
 * connections costs a refusal each, never a rotation.
 */
void fsd_server_accept(struct fsd_server *s)
{
	static const char busy[] = "{\"error\":\"daemon busy: too many clients; try again\"}\n";
	int fd, accepted;

	for (accepted = 0; accepted < FSD_ACCEPT_PER_WAKEUP; accepted++) {
		struct fsd_client *c = NULL;
		__u32 slot;

		fd = accept4(s->listen_fd, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* The connection stays queued and the listening
			 * socket readable: stop watching it until a client
			 * closes, or the loop would spin. */
			if (!s->accept_paused)
				fsd_warn("accept paused: %s; %u clients",
					 strerror(errno), s->nclients);
			if (!listen_watch(s, 0, EPOLL_CTL_MOD))
				s->accept_paused = true;
			return;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				fsd_warn("accept failed: %s", strerror(errno));
			return;
		}
		if (s->nclients < FSD_MAX_CLIENTS)
			c = calloc(1, sizeof(*c));
		if (!c) {
			s->refused++;
			/* Best effort: a client that cannot take it sees
			 * the close. */
			(void)!send(fd, busy, sizeof(busy) - 1,
				    MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		/* Ids run on; a slot is the id modulo the table, so the
		 * next free slot is found from the next id. */
		do {
			c->id = s->next_id++;
			slot = (__u32)(c->id % FSD_MAX_CLIENTS);
		} while (s->clients[slot]);
		c->fd = fd;
		c->slot = slot;
		/* The credentials of connect() time: what the client may
		 * ask is fixed before it sends anything. */
		fsd_access_peer(fd, s->read_group, s->read_gid, &c->peer);
		c->state = FSD_CLIENT_READING;
		c->deadline_ms = fsd_monotonic_ms() + FSD_CLIENT_TIMEOUT_MS;
		s->clients[slot] = c;
		s->nclients++;
		if (client_watch(s, c, EPOLLIN, EPOLL_CTL_ADD)) {
			client_close(s, c);
			continue;
		}
		client_read(s, c);	/* it may have sent already */
	}
}

void fsd_server_drop_clients(struct fsd_server *s)
{
	__u32 i;

	for (i = 0; i < FSD_MAX_CLIENTS && s->nclients; i++)
		if (s->clients[i])
			client_close(s, s->clients[i]);
}
