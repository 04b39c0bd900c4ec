// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* client.c - one request to flowsketchd over its unix socket. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "keys.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "answer.h"
#include "reply.h"

unsigned int fs_client_max_path(void)
{
	return sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
}

/* Why a connect() failed, in the words an operator acts on. */
static const char *connect_hint(int err)
{
	switch (err) {
	case ENOENT:
	case ECONNREFUSED:
		return " (is the daemon running?)";
	default:
		return "";
	}
}

/*
 * Refused by the file system: the socket (or its directory) is root's,
 * and with flowsketchd --read-group also its group's.  The group is that
 * of the socket, or of its directory when the socket cannot be looked at.
 */
static void say_access_error(const char *path, int err)
{
	char dir[PATH_MAX], *slash;
	struct group *g;
	struct stat st;
	gid_t gid = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	if (!stat(path, &st) || (slash && !stat(dir, &st)))
		gid = st.st_gid;
	g = gid ? getgrgid(gid) : NULL;
	if (!gid)
		fs_error("cannot connect to flowsketchd at %s: %s (the socket is for root only)",
			 path, strerror(err));
	else if (g)
		fs_error("cannot connect to flowsketchd at %s: %s (the socket is for root and the members of group %s)",
			 path, strerror(err), g->gr_name);
	else
		fs_error("cannot connect to flowsketchd at %s: %s (the socket is for root and the members of gid %u)",
			 path, strerror(err), (unsigned int)gid);
}

/*
 * The end of an exchange's time, on the monotonic clock.  Socket timeouts
 * (SO_RCVTIMEO) restart with every read, so a daemon sending a byte every
 * few seconds would never time out; every wait is cut to what is left.
 */
struct deadline {
	struct timespec end;
	unsigned int seconds;
};

static void deadline_start(struct deadline *d, unsigned int seconds)
{
	clock_gettime(CLOCK_MONOTONIC, &d->end);
	d->end.tv_sec += seconds;
	d->seconds = seconds;
}

/* Milliseconds left, rounded up; 0 once the deadline has passed. */
static int deadline_left_ms(const struct deadline *d)
{
	struct timespec now;
	long long ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (long long)(d->end.tv_sec - now.tv_sec) * 1000000000LL +
	     (d->end.tv_nsec - now.tv_nsec);
	return ns <= 0 ? 0 : (int)((ns + 999999) / 1000000);
}

/* Wait until fd is ready for `events` or the deadline passes: 0,
 * -ETIMEDOUT or -errno. */
static int wait_ready(int fd, short events, const struct deadline *d)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int left, n;

	for (;;) {
		left = deadline_left_ms(d);
		if (!left)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * One send (POLLOUT) or recv (POLLIN) of at most len bytes once fd is
 * ready: the bytes moved, or -errno after one line, `late` when the
 * deadline passed ("flowsketchd did not <late> within N s"), else `failed`.
 */
static ssize_t move_bytes(int fd, short events, const struct deadline *d,
			  char *buf, size_t len, const char *late,
			  const char *failed)
{
	ssize_t n;
	int err;

	do {
		err = wait_ready(fd, events, d);
		if (err)
			break;
		n = events == POLLOUT ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
					recv(fd, buf, len, MSG_DONTWAIT);
		if (n >= 0)
			return n;
		err = -errno;
	} while (err == -EINTR || err == -EAGAIN);
	if (err == -ETIMEDOUT)
		fs_error("flowsketchd did not %s within %u s", late, d->seconds);
	else
		fs_error("cannot %s: %s", failed, strerror(-err));
	return err;
}

/* What a file that is not a socket is, for the message. */
static const char *file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "not a socket";
}

/*
 * connect() says ECONNREFUSED for a regular file just as for a dead
 * daemon's socket, which would send the operator looking for a daemon
 * when --socket names the wrong file; look at what is there instead.
 */
static void say_connect_error(const char *path, int err)
{
	struct stat st;

	if (err == -EACCES || err == -EPERM) {
		say_access_error(path, -err);
		return;
	}
	if (!stat(path, &st) && !S_ISSOCK(st.st_mode)) {
		fs_error("cannot connect to flowsketchd at %s: it is %s, not a socket (check --socket)",
			 path, file_kind(st.st_mode));
		return;
	}
	fs_error("cannot connect to flowsketchd at %s: %s%s", path,
		 strerror(-err), connect_hint(-err));
}

static int connect_daemon(const char *path, const struct deadline *d,
			  int *fd_out)
{
	/* Only connect() itself waits on these (a full listen backlog);
	 * sends and reads wait in wait_ready(). */
	struct timeval tv = { .tv_sec = d->seconds };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		fs_error("cannot create a unix socket: %s", strerror(-err));
		return err;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		say_connect_error(path, err);
		close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

static int send_request(int fd, struct json_object *request,
			const struct deadline *d)
{
	const char *json = json_object_to_json_string_ext(request,
							  JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(json), off = 0;
	char *line;
	int err = 0;

	/* One write of object + "\n": the daemon reads a line. */
	line = malloc(len + 2);
	if (!line)
		return fs_no_memory();
	memcpy(line, json, len);
	line[len++] = '\n';
	while (off < len) {
		ssize_t n = move_bytes(fd, POLLOUT, d, line + off, len - off,
				       "take the request",
				       "send the request to flowsketchd");

		if (n < 0) {
			err = (int)n;
			break;
		}
		off += (size_t)n;
	}
	free(line);
	return err;
}

/* Everything the daemon writes until it closes; *buf is NUL-terminated. */
static int read_answer(int fd, const struct deadline *d, size_t max,
		       char **buf_out, size_t *len_out)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *bigger;
	int err = 0;

	if (!buf)
		goto nomem;
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			if (cap >= max) {
				err = -EMSGSIZE;
				fs_error("flowsketchd's answer is larger than %zu MiB",
					 max >> 20);
				goto fail;
			}
			bigger = realloc(buf, cap * 2);
			if (!bigger)
				goto nomem;
			buf = bigger;
			cap *= 2;
		}
		n = move_bytes(fd, POLLIN, d, buf + len, cap - len - 1, "answer",
			       "read flowsketchd's answer");
		if (n < 0) {
			err = (int)n;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*buf_out = buf;
	*len_out = len;
	return 0;
nomem:
	err = fs_no_memory();
fail:
	free(buf);
	return err;
}

struct json_object *fs_request(const char *cmd)
{
	struct json_object *req = json_object_new_object();

	json_object_object_add(req, FS_KEY_CMD, json_object_new_string(cmd));
	return req;
}

struct json_object *fs_request_span(struct json_object *req, __u32 span,
				    const char *direction)
{
	if (span)
		json_object_object_add(req, FS_KEY_SPAN, json_object_new_int64(span));
	if (direction)
		json_object_object_add(req, FS_KEY_DIRECTION,
				       json_object_new_string(direction));
	return req;
}

int fs_client_call(const struct fs_cli *cli, struct json_object *request,
		   struct json_object **answer)
{
	return fs_client_call_max(cli, request, FS_ANSWER_MAX, answer);
}

int fs_client_call_max(const struct fs_cli *cli, struct json_object *request,
		       size_t max, struct json_object **answer)
{
	struct json_object *obj = NULL, *cmd;
	struct deadline d;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1, err;

	if (json_object_object_get_ex(request, FS_KEY_CMD, &cmd))
		fs_reply_context(json_object_get_string(cmd));
	deadline_start(&d, cli->timeout_s);
	err = connect_daemon(cli->socket_path, &d, &fd);
	if (err)
		goto out;
	err = send_request(fd, request, &d);
	if (err)
		goto out;
	err = read_answer(fd, &d, max, &buf, &len);
	if (err)
		goto out;
	err = fs_answer_parse(buf, len, &obj);
	if (err)
		goto out;
	err = fs_answer_check_error(obj);
	if (err)
		goto out;
	*answer = obj;
	obj = NULL;
out:
	json_object_put(obj);
	json_object_put(request);
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

int fs_client_present(struct json_object *answer, bool json, fs_show_fn *show)
{
	struct json_object *copy = NULL;
	int err;

	if (!json)
		return show(answer, true);
	/* show() cleans strings in place; the JSON shows them as sent. */
	if (json_object_deep_copy(answer, &copy, NULL))
		return fs_no_memory();
	err = show(copy, false);
	json_object_put(copy);
	if (!err)
		fs_reply_print_json(answer);
	return err;
}

int fs_client_show(const struct fs_cli *cli, struct json_object *request,
		   bool json, fs_show_fn *show)
{
	struct json_object *answer = NULL;
	int err;

	err = fs_client_call(cli, request, &answer);
	if (!err)
		err = fs_client_present(answer, json, show);
	json_object_put(answer);
	return err ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}
