/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * safedir.h - is a directory safe for root to keep its files in?
 *
 * The daemon runs as root and creates, replaces and removes files in its
 * socket, state, pin and blocklist directories.  One that another user
 * can write to, or a symbolic link another user can aim, would let that
 * user put a file where the daemon trusts one (a socket in place of ours,
 * a history file it loads) or aim the daemon's unlink() and rename() at
 * files of the host.  So a directory is taken only when:
 *
 *   - it is a directory itself, not a symbolic link to one;
 *   - it is owned by the daemon's user (root);
 *   - neither group nor others may write to it (sticky or not: the sticky
 *     bit stops others from removing our files, not from adding theirs);
 *   - every directory above it, as given and once links are resolved, is
 *     owned by root or the daemon's user and is not writable by group or
 *     others unless sticky (/tmp, bpffs' root: there nobody else can
 *     rename or remove our entry, so it stays the one checked).
 *
 * A directory that does not exist yet is judged by the directories above
 * it, since the daemon makes it with its own mode.
 */
#ifndef FLOWSKETCHD_SAFEDIR_H
#define FLOWSKETCHD_SAFEDIR_H

/* 0, or -EPERM (-errno when it cannot be looked at) after one message:
 * "<what> <dir>: <what is wrong>". */
int fsd_safedir_check(const char *dir, const char *what);

/* fsd_safedir_check() of the directory that holds file. */
int fsd_safedir_check_parent(const char *file, const char *what);

#endif /* FLOWSKETCHD_SAFEDIR_H */
