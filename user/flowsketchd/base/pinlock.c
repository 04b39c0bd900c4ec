// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* pinlock.c - bpffs mount and the pin directory lock (pinlock.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/magic.h>
#include "log.h"
#include "pinlock.h"
#include "proclocks.h"
#include "safedir.h"

#define FSD_BPFFS "/sys/fs/bpf"

int fsd_bpffs_mount(void)
{
	struct statfs st;

	if (!statfs(FSD_BPFFS, &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", FSD_BPFFS, "bpf", 0, "mode=0700"))
		return fsd_fail(-errno, "cannot mount bpffs on %s", FSD_BPFFS);
	fsd_info("mounted bpffs on %s", FSD_BPFFS);
	return 0;
}

/* The pid holding an flock on (dev, ino), from /proc/locks, or 0. */
static long lock_holder(dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/locks", "re");
	long pid;

	if (!f)
		return 0;
	pid = fsd_proclocks_holder(f, major(dev), minor(dev), ino);
	fclose(f);
	return pid;
}

/* Lock fd, the directory dir: 0, or -EBUSY naming the holder, -errno
 * (said unless only_busy). */
static int lock_or_say(int fd, const char *dir, bool only_busy)
{
	struct stat st;
	int err;

	if (!flock(fd, LOCK_EX | LOCK_NB))
		return 0;
	err = errno == EWOULDBLOCK ? -EBUSY : -errno;
	if (err == -EBUSY && !fstat(fd, &st))
		fsd_err("another flowsketchd is using %s (pid %ld)", dir,
			lock_holder(st.st_dev, st.st_ino));
	else if (!only_busy)
		fsd_fail(err, "cannot lock %s", dir);
	return err;
}

int fsd_pinlock_take(struct fsd_pinlock *l, const char *dir)
{
	struct statfs fs;
	int err;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	if (snprintf(l->path, sizeof(l->path), "%s", dir) >= (int)sizeof(l->path))
		return fsd_reject(-ENAMETOOLONG, "pin directory path too long");
	if (!mkdir(dir, 0700)) {
		l->created = true;
	} else if (errno != EEXIST) {
		return fsd_fail(-errno, "cannot create pin directory %s", dir);
	} else if ((err = fsd_safedir_check(dir, "pin directory"))) {
		/* Looked at again now that bpffs is mounted, and after a
		 * mkdir another user could have raced under a sticky parent. */
		return err;
	}
	l->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (l->fd < 0) {
		err = fsd_fail(-errno, "cannot open pin directory %s", dir);
		goto err_release;
	}
	/* Checked here, before anything loads: bpf_obj_pin() elsewhere
	 * fails only later, with a bare EPERM. */
	if (fstatfs(l->fd, &fs)) {
		err = fsd_fail(-errno, "cannot stat pin directory %s", dir);
		goto err_release;
	}
	if (fs.f_type != BPF_FS_MAGIC) {
		err = -EINVAL;
		fsd_err("pin directory %s is not on a bpf filesystem", dir);
		goto err_release;
	}
	err = lock_or_say(l->fd, dir, false);
	if (err)
		goto err_release;
	return 0;

err_release:
	fsd_pinlock_release(l);
	return err;
}

int fsd_pinlock_check(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return 0;	/* no directory: nobody holds it */
	err = lock_or_say(fd, dir, true);
	close(fd);		/* and with it our lock, if we got it */
	return err == -EBUSY ? err : 0;
}

void fsd_pinlock_release(struct fsd_pinlock *l)
{
	/* Remove before unlocking: a daemon starting now either finds the
	 * directory locked or creates a fresh one. */
	if (l->created && rmdir(l->path))
		fsd_warn("cannot remove %s: %s", l->path, strerror(errno));
	l->created = false;
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}
