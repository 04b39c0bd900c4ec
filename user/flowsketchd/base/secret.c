// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* secret.c - the sketches' hash key (secret.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "log.h"
#include "secret.h"

static void key_from_bytes(const __u8 b[FSD_SECRET_LEN],
			   struct fs_hash_secret *s)
{
	unsigned int i;

	s->k0 = 0;
	s->k1 = 0;
	for (i = 0; i < 8; i++) {
		s->k0 |= (__u64)b[i] << (8 * i);
		s->k1 |= (__u64)b[8 + i] << (8 * i);
	}
}

int fsd_secret_parse(const __u8 *buf, size_t len, struct fs_hash_secret *s)
{
	/* Raw bytes, not hex or text: any 16 bytes are a key, and a newline
	 * an editor adds makes the file 17 bytes long, which is refused
	 * rather than silently dropped. */
	if (len != FSD_SECRET_LEN)
		return -EINVAL;
	key_from_bytes(buf, s);
	return 0;
}

/*
 * Wait until fd has data or its end, or stop_fd (the daemon's signalfd,
 * -1 for none) a stop signal: 0, -EINTR for the signal (left pending, for
 * the caller to take), or -errno.  A FIFO opened O_NONBLOCK before any
 * writer has come shows neither POLLIN nor POLLHUP until one has: the
 * wait covers a writer that comes late or never, and the stop cuts it.
 */
static int wait_readable(int fd, int stop_fd)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = stop_fd, .events = POLLIN } };

	for (;;) {
		if (poll(p, stop_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		return p[1].revents ? -EINTR : 0;
	}
}

/*
 * read() until count bytes or end of file: a pipe (--secret-file
 * <(command)) hands its data over in whatever pieces the writer made,
 * and a stop signal may come between them.
 */
static ssize_t read_full(int fd, __u8 *buf, size_t count, int stop_fd)
{
	size_t len = 0;
	int err;

	while (len < count) {
		ssize_t n;

		err = wait_readable(fd, stop_fd);
		if (err)
			return err;
		n = read(fd, buf + len, count - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

/* O_NONBLOCK: open() of a FIFO would otherwise wait for a writer, deaf to
 * the stop signals (blocked since main); the reads wait in poll(). */
static int read_secret_file(const char *path, struct fs_hash_secret *s,
			    int stop_fd)
{
	__u8 buf[FSD_SECRET_LEN + 1];	/* one more, to see a longer file */
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fsd_fail(-errno, "cannot open secret file %s", path);
	n = read_full(fd, buf, sizeof(buf), stop_fd);
	if (n == -EINTR) {
		err = -EINTR;	/* a stop, the caller's to say */
	} else if (n < 0) {
		err = (int)n;
		fsd_fail(err, "cannot read secret file %s", path);
	} else if ((err = fsd_secret_parse(buf, (size_t)n, s))) {
		fsd_err("secret file %s must hold exactly %d bytes", path,
			FSD_SECRET_LEN);
	}
	memset(buf, 0, sizeof(buf));
	close(fd);
	return err;
}

int fsd_secret_get(const char *path, struct fs_hash_secret *s, int stop_fd)
{
	__u8 b[FSD_SECRET_LEN];
	int err;

	if (path)
		return read_secret_file(path, s, stop_fd);
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return fsd_fail(-errno, "getrandom failed");
	err = fsd_secret_parse(b, sizeof(b), s);
	memset(b, 0, sizeof(b));
	return err;
}
