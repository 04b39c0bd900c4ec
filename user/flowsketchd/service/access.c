// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* access.c - the query socket's clients and what they may ask (access.h). */
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "access.h"
#include "base/log.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59	/* asm-generic/socket.h, Linux 4.13 */
#endif

int fsd_access_group(const char *name, gid_t *gid)
{
	struct group *g;
	char *end;
	unsigned long v;

	g = *name ? getgrnam(name) : NULL;
	if (!g && *name && *name != '-') {
		v = strtoul(name, &end, 10);
		if (!*end && v == (gid_t)v)
			g = getgrgid((gid_t)v);
	}
	if (!g)
		return fsd_reject(-EINVAL, "--read-group %s: no such group", name);
	if (!g->gr_gid) {
		/* Group 0 would let its members read with no group made
		 * for it: say root only by leaving the option out. */
		return fsd_reject(-EINVAL, "--read-group %s is gid 0: name a group made for readers",
				  name);
	}
	*gid = g->gr_gid;
	return 0;
}

/* 1 if gid is among the peer's supplementary groups, 0 if not, -errno. */
static int peer_has_group(int fd, gid_t gid)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	size_t i, n;
	int ret = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
		/* More groups than fit: len now says how many bytes. */
		if (errno != ERANGE)
			return -errno;
		groups = malloc(len);
		if (!groups)
			return -ENOMEM;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
			ret = -errno;
			goto out;
		}
	}
	n = len / sizeof(gid_t);
	for (i = 0; i < n && !ret; i++)
		ret = groups[i] == gid;
out:
	if (groups != small)
		free(groups);
	return ret;
}

void fsd_access_peer(int fd, const char *read_group, gid_t read_gid,
		     struct fsd_peer *p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	memset(p, 0, sizeof(*p));
	p->uid = (uid_t)-1;
	p->gid = (gid_t)-1;
	p->access = FSD_ACCESS_NONE;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    len != sizeof(cred))
		return;
	p->uid = cred.uid;
	p->gid = cred.gid;
	p->pid = cred.pid;
	if (!cred.uid)
		p->access = FSD_ACCESS_ALL;
	else if (read_group &&
		 (cred.gid == read_gid || peer_has_group(fd, read_gid) == 1))
		p->access = FSD_ACCESS_READ;
}
