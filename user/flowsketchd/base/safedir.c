// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* safedir.c - directories root may trust (safedir.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "safedir.h"

/* The one message: "<what> <dir> <problem> (owner, mode): refused", or
 * for a directory above it "<what> <dir>: <above> <problem> (...)". */
static int say(const char *what, const char *dir, const char *above,
	       const char *problem, const struct stat *st)
{
	fsd_err("%s %s%s%s %s (owner uid %u, mode %04o): refused", what, dir,
		above ? ": " : "", above ? above : "", problem,
		(unsigned int)st->st_uid, (unsigned int)(st->st_mode & 07777));
	return S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode) ? -EPERM : -ENOTDIR;
}

/* One directory above the one checked: owner root or us, and not
 * writable by group or others unless sticky.  A symbolic link's own
 * mode means nothing: its owner and the directory holding it count.  One
 * that is not there yet (a host without /run, an initramfs) the daemon
 * makes itself, root's and writable by no one else, and checks again
 * once made: it passes here. */
static int check_above(const char *what, const char *dir, const char *path)
{
	struct stat st;
	uid_t me = geteuid();

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		fsd_err("%s %s: cannot look at %s: %s", what, dir, path,
			strerror(errno));
		return -errno;
	}
	if (st.st_uid && st.st_uid != me)
		return say(what, dir, path, "above it is not owned by root", &st);
	if (!S_ISLNK(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(st.st_mode & S_ISVTX))
		return say(what, dir, path, "above it is writable by group or others and not sticky",
			   &st);
	return 0;
}

/* Every directory above path's last component, path taken as written
 * ("/a", "/a/b" for "/a/b/c"): "/" first. */
static int check_prefixes(const char *what, const char *dir, const char *path)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);
	int err;

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')	/* "/a/b/" is "/a/b" */
		buf[--n] = 0;
	if ((err = check_above(what, dir, "/")))
		return err;
	for (i = 1; i < n; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = 0;
		err = check_above(what, dir, buf);
		buf[i] = '/';
		if (err)
			return err;
	}
	return 0;
}

/*
 * The directories above dir: as written (a link among them sits in a
 * directory that must be safe too) and as resolved (where the link leads).
 * A tail that does not exist yet is left out of the resolved walk.
 */
static int check_ancestors(const char *what, const char *dir)
{
	char parent[PATH_MAX], real[PATH_MAX], *slash;
	int err;

	if ((err = check_prefixes(what, dir, dir)))
		return err;
	snprintf(parent, sizeof(parent), "%s", dir);
	for (;;) {
		slash = strrchr(parent, '/');
		if (!slash || slash == parent)
			return 0;	/* "/" was checked */
		*slash = 0;
		if (realpath(parent, real))
			break;
		if (errno != ENOENT) {
			fsd_err("%s %s: cannot resolve %s: %s", what, dir,
				parent, strerror(errno));
			return -errno;
		}
	}
	/* real is a directory that exists: it is above dir too. */
	return check_prefixes(what, dir, real) ?: check_above(what, dir, real);
}

int fsd_safedir_check(const char *path, const char *what)
{
	char cwd[PATH_MAX], abs[PATH_MAX];
	const char *dir = path;
	struct stat st;

	/* A relative path's directories above are the working directory's. */
	if (*path != '/') {
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= (int)sizeof(abs))
			return fsd_reject(-ENAMETOOLONG, "%s %s: cannot make it an absolute path",
					  what, path);
		dir = abs;
	}
	if (strlen(dir) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (lstat(dir, &st)) {
		if (errno != ENOENT)
			return fsd_fail(-errno, "%s %s: cannot look at it", what, dir);
		return check_ancestors(what, dir);
	}
	if (S_ISLNK(st.st_mode))
		return say(what, dir, NULL, "is a symbolic link, not a directory", &st);
	if (!S_ISDIR(st.st_mode))
		return say(what, dir, NULL, "is not a directory", &st);
	if (st.st_uid != geteuid())
		return say(what, dir, NULL, "is not owned by root", &st);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return say(what, dir, NULL, "is writable by group or others", &st);
	return check_ancestors(what, dir);
}

int fsd_safedir_check_parent(const char *file, const char *what)
{
	char dir[PATH_MAX], *slash;

	if (snprintf(dir, sizeof(dir), "%s", file) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash)
		return fsd_safedir_check(".", what);
	if (slash == dir)
		slash[1] = 0;	/* "/file": "/" */
	else
		*slash = 0;
	return fsd_safedir_check(dir, what);
}
