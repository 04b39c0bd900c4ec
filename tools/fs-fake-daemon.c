// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-fake-daemon - answer flowsketchd's socket protocol with a canned file.
 *
 *   fs-fake-daemon [--count N] [--log FILE] [--drip MS] SOCKET ANSWER_FILE
 *
 * Listens on the unix socket SOCKET and, for each connection, reads the
 * request line, appends it to FILE (when --log is given), writes the bytes
 * of ANSWER_FILE exactly as they are (malformed JSON, NUL bytes and
 * invalid UTF-8 included: that is what tests of the client's error paths
 * need) and closes.  Exits after N
 * connections (default: never) or on SIGTERM/SIGINT, removing the socket.
 * With --drip it writes the answer one byte every MS milliseconds: a
 * daemon that is alive but slow, for the client's deadline.
 *
 * A test of the CLI's rendering needs no BPF, no root and no daemon: it
 * starts this with a response whose numbers it knows, waits for SOCKET to
 * appear, and checks what `flowsketch` printed and what it asked.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "protocol.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int read_file(const char *path, char **buf_out, size_t *len_out)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 4096, n;
	char *buf = NULL, *bigger;
	int err = 0;

	if (!f) {
		err = -errno;
		fprintf(stderr, "fs-fake-daemon: cannot open %s: %s\n", path,
			strerror(errno));
		return err;
	}
	for (;;) {
		bigger = realloc(buf, cap);
		if (!bigger) {
			err = -ENOMEM;
			fprintf(stderr, "fs-fake-daemon: out of memory\n");
			goto out;
		}
		buf = bigger;
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (len < cap)
			break;
		cap *= 2;
	}
	if (ferror(f)) {
		err = -EIO;
		fprintf(stderr, "fs-fake-daemon: cannot read %s\n", path);
		goto out;
	}
	*buf_out = buf;
	*len_out = len;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return err;
}

static int listen_on(const char *path, int *fd_out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "fs-fake-daemon: socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 16)) {
		err = -errno;
		fprintf(stderr, "fs-fake-daemon: cannot listen on %s: %s\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

/* The request up to its newline (or EOF), appended to the log. */
static void log_request(int fd, FILE *log)
{
	char req[FS_REQUEST_MAX + 1];
	size_t len = 0;
	ssize_t n;

	while (len < FS_REQUEST_MAX) {
		n = read(fd, req + len, FS_REQUEST_MAX - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(req, '\n', len))
			break;
	}
	if (!log)
		return;
	while (len && (req[len - 1] == '\n' || req[len - 1] == '\r'))
		len--;
	fprintf(log, "%.*s\n", (int)len, req);
	fflush(log);
}

static void answer(int fd, const char *buf, size_t len, unsigned long drip_ms)
{
	struct timespec gap = {
		.tv_sec = drip_ms / 1000,
		.tv_nsec = (long)(drip_ms % 1000) * 1000000L,
	};
	size_t off = 0;
	ssize_t n;

	while (off < len && !stop) {
		if (drip_ms)
			nanosleep(&gap, NULL);
		n = send(fd, buf + off, drip_ms ? 1 : len - off, MSG_NOSIGNAL);
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

/* A whole number for option `name`, or exit 2 with one line. */
static unsigned long parse_whole(const char *name, const char *s)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || s[0] < '0' || s[0] > '9') {
		fprintf(stderr, "fs-fake-daemon: --%s must be a whole number, not '%s'\n",
			name, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'l' },
		{ "drip", required_argument, NULL, 'd' },
		{ 0 }
	};
	struct sigaction sa = { .sa_handler = on_signal };
	const char *sock_path, *log_path = NULL;
	unsigned long count = 0, served = 0, drip_ms = 0;
	FILE *log = NULL;
	char *buf = NULL;
	size_t len = 0;
	int c, lfd = -1, ret = 1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:l:d:", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			count = parse_whole("count", optarg);
			break;
		case 'd':
			drip_ms = parse_whole("drip", optarg);
			break;
		case 'l':
			log_path = optarg;
			break;
		default:
			/* One line, instead of getopt's and a usage block. */
			fprintf(stderr, "fs-fake-daemon: '%s' is not an option or lacks its value (usage: fs-fake-daemon [--count N] [--log FILE] [--drip MS] SOCKET ANSWER_FILE)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: fs-fake-daemon [--count N] [--log FILE] [--drip MS] SOCKET ANSWER_FILE\n");
		return 2;
	}
	sock_path = argv[optind];
	if (read_file(argv[optind + 1], &buf, &len))
		goto out;
	if (log_path && !(log = fopen(log_path, "a"))) {
		fprintf(stderr, "fs-fake-daemon: cannot open %s: %s\n",
			log_path, strerror(errno));
		goto out;
	}
	/* No SA_RESTART: a signal must break accept() so we can clean up. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (listen_on(sock_path, &lfd))
		goto out;
	while (!stop && (!count || served < count)) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0) {
			fprintf(stderr, "fs-fake-daemon: accept: %s\n",
				strerror(errno));
			goto out;
		}
		log_request(fd, log);
		answer(fd, buf, len, drip_ms);
		close(fd);
		served++;
	}
	ret = 0;
out:
	if (lfd >= 0) {
		close(lfd);
		unlink(sock_path);
	}
	if (log)
		fclose(log);
	free(buf);
	return ret;
}
