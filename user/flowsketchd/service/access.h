/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * access.h - who may ask what on the query socket (--read-group).
 *
 * Without --read-group the socket is 0600 root: only root connects, and
 * the daemon refuses anyone else who reaches it anyway (an inherited or
 * passed descriptor).  With --read-group GROUP it is 0660 root:GROUP, and
 * each client's credentials, taken by the kernel when it connected, decide:
 *
 *   uid 0                                 every command
 *   gid GROUP, or GROUP among its groups  the commands that only read
 *   anyone else                           nothing
 *
 * The groups are the peer's own (SO_PEERGROUPS, Linux 4.13), not the group
 * database's list for its user name (getgrouplist()): the kernel's list is
 * what the process really holds at connect(), so a process that dropped
 * the group (setgroups(), a sandbox) is not let in on its user's behalf,
 * one given it without a database entry (setpriv --groups) is; and it
 * costs one system call in the event loop, where getgrouplist() may wait
 * on NSS (LDAP, sssd) for as long as the directory takes.
 */
#ifndef FLOWSKETCHD_ACCESS_H
#define FLOWSKETCHD_ACCESS_H

#include <stdbool.h>
#include <sys/types.h>

enum fsd_access {
	FSD_ACCESS_NONE,	/* neither root nor in the read group */
	FSD_ACCESS_READ,	/* a member of the read group */
	FSD_ACCESS_ALL,		/* root */
};

/* What a command needs (commands.h's NEED).  Root is the zero value, so a
 * command added to the table without saying is closed to the group. */
enum fsd_cmd_need {
	FSD_NEED_ROOT = 0,
	FSD_NEED_READ,
};

/* A client, as the kernel saw it connect. */
struct fsd_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	enum fsd_access access;
};

/* --read-group's argument, a group name (or a numeric gid the database
 * knows): 0 with *gid, or -EINVAL with one message. */
int fsd_access_group(const char *name, gid_t *gid);

/* The credentials of the client on fd, and what they allow: read_group
 * NULL for root only.  Fails closed: a peer whose credentials cannot be
 * read gets FSD_ACCESS_NONE. */
void fsd_access_peer(int fd, const char *read_group, gid_t read_gid,
		     struct fsd_peer *p);

#endif /* FLOWSKETCHD_ACCESS_H */
