// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* server.c - unix socket, one JSON request per connection (server.h). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "protocol.h"
#include "log.h"
#include "server.h"

#define FSD_CLIENTS_PER_WAKEUP 8

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
		err = -errno;
		fsd_err("cannot stat %s: %s", addr->sun_path, strerror(-err));
		return err;
	}
	if (!S_ISSOCK(st.st_mode)) {
		fsd_err("%s exists and is not a socket", addr->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
		fsd_err("another daemon is listening on %s", addr->sun_path);
		err = -EADDRINUSE;
	} else if (errno != ECONNREFUSED) {
		err = -errno;
		fsd_err("cannot tell whether a daemon listens on %s: %s",
			addr->sun_path, strerror(-err));
	} else if (unlink(addr->sun_path)) {
		err = -errno;
		fsd_err("cannot remove stale socket %s: %s", addr->sun_path,
			strerror(-err));
	}
	close(fd);
	return err;
}

int fsd_server_open(struct fsd_daemon *d)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const char *path = d->opts.socket_path;
	char dir[PATH_MAX];
	mode_t old_umask;
	int fd, err;

	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path) >=
	    (int)sizeof(addr.sun_path)) {
		fsd_err("socket path %s is longer than %zu bytes", path,
			sizeof(addr.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	err = socket_dir(dir, sizeof(dir), path);
	if (err)
		return err;
	if (!mkdir(dir, 0700)) {
		d->socket_dir_created = true;
	} else if (errno != EEXIST) {
		err = -errno;
		fsd_err("cannot create %s: %s", dir, strerror(-err));
		return err;
	}
	err = remove_stale_socket(&addr);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		fsd_err("cannot create a unix socket: %s", strerror(-err));
		return err;
	}
	/* Root only: the socket is born 0600, no window where it is not. */
	old_umask = umask(0177);
	err = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ? -errno : 0;
	umask(old_umask);
	if (err) {
		fsd_err("cannot bind %s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	d->socket_created = true;
	d->listen_fd = fd;
	if (listen(fd, 16)) {
		err = -errno;
		fsd_err("cannot listen on %s: %s", path, strerror(-err));
		return err;
	}
	fsd_info("listening on %s", path);
	return 0;
}

void fsd_server_close(struct fsd_daemon *d)
{
	char dir[PATH_MAX];

	if (d->listen_fd >= 0)
		close(d->listen_fd);
	d->listen_fd = -1;
	if (d->socket_created && unlink(d->opts.socket_path))
		fsd_warn("cannot remove %s: %s", d->opts.socket_path,
			 strerror(errno));
	d->socket_created = false;
	if (d->socket_dir_created &&
	    !socket_dir(dir, sizeof(dir), d->opts.socket_path))
		rmdir(dir);
	d->socket_dir_created = false;
}

static __u64 monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/*
 * Read one request line by deadline_ms; its length, -ETIMEDOUT, -E2BIG or
 * -errno.  The deadline covers the whole request, not each recv(): a
 * client sending a byte now and then would otherwise hold the event loop
 * (and the window rotation) for FS_REQUEST_MAX timeouts.
 */
static ssize_t read_request(int fd, char *buf, size_t size, __u64 deadline_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = 0;

	while (len < size) {
		__u64 now = monotonic_ms();
		ssize_t n;
		int ready;

		if (now >= deadline_ms)
			return -ETIMEDOUT;
		ready = poll(&pfd, 1, (int)(deadline_ms - now));
		if (ready < 0 && errno != EINTR)
			return -errno;
		if (ready <= 0)
			continue;
		n = recv(fd, buf + len, size - len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (!n)
			return (ssize_t)len;
		if (memchr(buf + len, '\n', (size_t)n))
			return (ssize_t)(len + (size_t)n);
		len += (size_t)n;
	}
	return -E2BIG;
}

/* SO_SNDTIMEO bounds each send(); the deadline bounds a client that
 * takes a few bytes per timeout. */
static void send_all(int fd, const char *buf, size_t len, __u64 deadline_ms)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || monotonic_ms() > deadline_ms)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void serve(struct fsd_daemon *d, int fd)
{
	struct timeval tv = { .tv_usec = FSD_CLIENT_TIMEOUT_MS * 1000 };
	char req[FS_REQUEST_MAX + 1];
	struct json_object *answer;
	const char *text;
	__u64 deadline;
	ssize_t len;

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	len = read_request(fd, req, sizeof(req),
			   monotonic_ms() + FSD_CLIENT_TIMEOUT_MS);
	if (len == -E2BIG)
		answer = fsd_answer_error("request longer than %d bytes",
					  FS_REQUEST_MAX);
	else if (len == -ETIMEDOUT)
		answer = fsd_answer_error("request not complete within %d ms",
					  FSD_CLIENT_TIMEOUT_MS);
	else if (len < 0)
		return;		/* gone: nobody to answer */
	else
		answer = fsd_answer(d, req, (size_t)len);
	text = json_object_to_json_string_ext(answer, JSON_C_TO_STRING_PLAIN);
	deadline = monotonic_ms() + 5 * FSD_CLIENT_TIMEOUT_MS;
	send_all(fd, text, strlen(text), deadline);
	send_all(fd, "\n", 1, deadline);
	json_object_put(answer);
}

void fsd_server_accept(struct fsd_daemon *d)
{
	int fd, served;

	/* The listening socket is non-blocking; the accepted ones are not
	 * (accept4 without SOCK_NONBLOCK): the request is read against a
	 * deadline and the answer sent under SO_SNDTIMEO.  A few per
	 * wakeup, so a connection flood cannot starve the timer. */
	for (served = 0; served < FSD_CLIENTS_PER_WAKEUP; served++) {
		fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				fsd_warn("accept failed: %s", strerror(errno));
			return;
		}
		serve(d, fd);
		close(fd);
	}
}
