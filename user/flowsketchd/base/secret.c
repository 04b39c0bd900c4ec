// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* secret.c - the sketches' hash key (secret.h). */
#include <errno.h>
#include <fcntl.h>
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
 * read() until count bytes or end of file: a pipe (--secret-file
 * <(command)) hands its data over in whatever pieces the writer made.
 */
static ssize_t read_full(int fd, __u8 *buf, size_t count)
{
	size_t len = 0;

	while (len < count) {
		ssize_t n = read(fd, buf + len, count - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

static int read_secret_file(const char *path, struct fs_hash_secret *s)
{
	__u8 buf[FSD_SECRET_LEN + 1];	/* one more, to see a longer file */
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fsd_fail(-errno, "cannot open secret file %s", path);
	n = read_full(fd, buf, sizeof(buf));
	if (n < 0) {
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

int fsd_secret_get(const char *path, struct fs_hash_secret *s)
{
	__u8 b[FSD_SECRET_LEN];
	int err;

	if (path)
		return read_secret_file(path, s);
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return fsd_fail(-errno, "getrandom failed");
	err = fsd_secret_parse(b, sizeof(b), s);
	memset(b, 0, sizeof(b));
	return err;
}
