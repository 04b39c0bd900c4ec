/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pinlock.h - one daemon per pin directory.
 *
 * Two daemons on one pin directory would unpin each other's maps and
 * rotate each other's windows.  The daemon takes a non-blocking flock()
 * on the directory itself: bpffs holds only pins and directories, so
 * there is no lock file to leave behind, and the kernel drops the lock
 * when the holder exits, however it exits.  The holder's pid, for the
 * error message, comes from /proc/locks (which lists flock owners by the
 * locked inode).
 */
#ifndef FLOWSKETCHD_PINLOCK_H
#define FLOWSKETCHD_PINLOCK_H

#include <stdbool.h>

struct fsd_pinlock {
	int fd;
	bool created;		/* we made the directory: remove it at exit */
	char path[4096];
};

/* Mount bpffs on /sys/fs/bpf unless it is there: 0 or -errno. */
int fsd_bpffs_mount(void);

/*
 * Create (mode 0700) and lock dir: 0, -EINVAL when it is not on bpffs,
 * -EBUSY when another process holds it, -errno; a message is printed on
 * failure.
 */
int fsd_pinlock_take(struct fsd_pinlock *l, const char *dir);
/* Before anything is set up: -EBUSY (with fsd_pinlock_take()'s message)
 * if another process holds dir, else 0.  Creates and keeps nothing. */
int fsd_pinlock_check(const char *dir);
/* Unlock; remove the directory if we created it and it is empty. */
void fsd_pinlock_release(struct fsd_pinlock *l);

#endif /* FLOWSKETCHD_PINLOCK_H */
