// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* secret.c - the sketches' hash key (secret.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "log.h"
#include "secret.h"

static void key_from_bytes(const __u8 b[16], struct fs_hash_secret *s)
{
	unsigned int i;

	s->k0 = 0;
	s->k1 = 0;
	for (i = 0; i < 8; i++) {
		s->k0 |= (__u64)b[i] << (8 * i);
		s->k1 |= (__u64)b[8 + i] << (8 * i);
	}
}

static int read_secret_file(const char *path, __u8 b[16])
{
	__u8 extra;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fsd_err("cannot open secret file %s: %s", path, strerror(-err));
		return err;
	}
	n = read(fd, b, 16);
	if (n == 16 && read(fd, &extra, 1) == 0)
		goto out;
	err = n < 0 ? -errno : -EINVAL;
	fsd_err("secret file %s must hold exactly 16 bytes", path);
out:
	close(fd);
	return err;
}

int fsd_secret_get(const char *path, struct fs_hash_secret *s)
{
	__u8 b[16];
	int err;

	if (path) {
		err = read_secret_file(path, b);
		if (err)
			return err;
	} else if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		err = -errno;
		fsd_err("getrandom failed: %s", strerror(-err));
		return err;
	}
	key_from_bytes(b, s);
	memset(b, 0, sizeof(b));
	return 0;
}
