// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ifwatch.c - rtnetlink link notifications to fsd_attachment (ifwatch.h).
 *
 * Plain netlink, not libmnl: one multicast group, two message types and one
 * attribute are all that is read, which the uapi headers describe fully;
 * a library would add a build and run dependency for about thirty lines.
 * The NLMSG_* and RTA_* walking macros are not used because they compare
 * signed with unsigned lengths (-Wextra -Werror); the checks are the same.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include "base/log.h"
#include "ifwatch.h"

/* Larger than any link message of a veth or a NIC with a few VFs; a
 * longer one arrives truncated and is made up for by a re-scan. */
#define IFWATCH_BUF 32768

int fsd_ifwatch_open(struct fsd_ifwatch *w)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_LINK,
	};
	int err;

	w->resyncs = 0;
	w->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       NETLINK_ROUTE);
	if (w->fd < 0) {
		err = -errno;
		goto err_log;
	}
	if (bind(w->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto err_close;
	}
	return 0;

err_close:
	close(w->fd);
	w->fd = -1;
err_log:
	return fsd_fail(err, "cannot listen to link changes (rtnetlink)");
}

void fsd_ifwatch_close(struct fsd_ifwatch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/* One RTM_NEWLINK/RTM_DELLINK: name is NULL when the message had none. */
static void on_link(struct fsd_loader *l, __u16 type, int ifindex,
		    const char *name)
{
	char why[IF_NAMESIZE + 32];
	unsigned int i;

	/* First what the message says about the ifindex we hold, so that a
	 * rename frees the old name before the new one is looked at. */
	for (i = 0; i < l->n_ifaces; i++) {
		struct fsd_attachment *a = &l->ifaces[i];

		if (a->state == FSD_IFACE_GONE || a->ifindex != ifindex)
			continue;
		if (type == RTM_DELLINK) {
			fsd_loader_gone(l, a, "went away");
		} else if (name && strcmp(name, a->iface->name)) {
			snprintf(why, sizeof(why), "was renamed to %s", name);
			fsd_loader_gone(l, a, why);
		}
	}
	if (type != RTM_NEWLINK || !name)
		return;
	for (i = 0; i < l->n_ifaces; i++) {
		struct fsd_attachment *a = &l->ifaces[i];

		if (strcmp(name, a->iface->name))
			continue;
		/* Most RTM_NEWLINKs are changes of a link we already hold
		 * (up, down, MTU).  A failed attach is not retried on each
		 * of them: the log would repeat the same error every time. */
		if (a->state != FSD_IFACE_GONE && a->ifindex == ifindex)
			return;
		fsd_loader_reattach(l, a, ifindex);
		return;
	}
}

/* The IFLA_IFNAME of a link message, or NULL; checked to be terminated. */
static const char *link_name(const struct ifinfomsg *ifi, size_t len)
{
	const char *p = (const char *)ifi + NLMSG_ALIGN(sizeof(*ifi));
	size_t off = NLMSG_ALIGN(sizeof(*ifi));

	while (off + sizeof(struct rtattr) <= len) {
		const struct rtattr *rta = (const struct rtattr *)p;
		size_t alen = rta->rta_len;

		if (alen < sizeof(*rta) || off + alen > len)
			return NULL;
		if (rta->rta_type == IFLA_IFNAME) {
			const char *s = RTA_DATA(rta);
			size_t slen = alen - RTA_LENGTH(0);

			return slen && slen <= IF_NAMESIZE &&
			       memchr(s, '\0', slen) ? s : NULL;
		}
		off += RTA_ALIGN(alen);
		p += RTA_ALIGN(alen);
	}
	return NULL;
}

static void parse(struct fsd_loader *l, const char *buf, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= len) {
		const struct nlmsghdr *nh = (const struct nlmsghdr *)(buf + off);
		const struct ifinfomsg *ifi = NLMSG_DATA(nh);
		size_t mlen = nh->nlmsg_len;

		if (mlen < sizeof(*nh) || off + mlen > len)
			return;
		off += NLMSG_ALIGN(mlen);
		if (nh->nlmsg_type != RTM_NEWLINK && nh->nlmsg_type != RTM_DELLINK)
			continue;
		if (mlen < NLMSG_LENGTH(sizeof(*ifi)))
			continue;
		/* The bridge sends RTM_DELLINK/NEWLINK of family AF_BRIDGE
		 * to the same group when a port leaves or changes state: the
		 * device itself stays.  Only the core's AF_UNSPEC messages
		 * speak of devices. */
		if (ifi->ifi_family != AF_UNSPEC)
			continue;
		on_link(l, nh->nlmsg_type, ifi->ifi_index,
			link_name(ifi, mlen - NLMSG_LENGTH(0)));
	}
}

void fsd_ifwatch_handle(struct fsd_ifwatch *w, struct fsd_loader *l)
{
	static char buf[IFWATCH_BUF] __attribute__((aligned(8)));
	bool lost = false;
	ssize_t n;

	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = {
			.msg_name = &from,
			.msg_namelen = sizeof(from),
			.msg_iov = &iov,
			.msg_iovlen = 1,
		};

		n = recvmsg(w->fd, &mh, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			/* ENOBUFS: the kernel dropped messages; the queue
			 * holds what came after, read on. */
			if (errno == ENOBUFS) {
				lost = true;
				continue;
			}
			fsd_warn("cannot read link changes: %s", strerror(errno));
			lost = true;
			break;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			lost = true;
			continue;
		}
		/* Only the kernel speaks for links; another root process
		 * could send to the group. */
		if (from.nl_pid != 0)
			continue;
		parse(l, buf, (size_t)n);
	}
	if (lost) {
		fsd_warn("link notifications were lost; re-scanning the interfaces by name");
		fsd_ifwatch_resync(w, l);
	}
}

void fsd_ifwatch_resync(struct fsd_ifwatch *w, struct fsd_loader *l)
{
	unsigned int i;

	w->resyncs++;
	for (i = 0; i < l->n_ifaces; i++) {
		struct fsd_attachment *a = &l->ifaces[i];
		int now = (int)if_nametoindex(a->iface->name);

		/* The name still at our ifindex is not proof enough: ask the
		 * link itself whether the kernel still runs the program
		 * there (a deleted device's link reports no ifindex). */
		if (a->state == FSD_IFACE_ATTACHED &&
		    (now != a->ifindex || !fsd_loader_link_alive(l, a)))
			fsd_loader_gone(l, a, "went away");
		else if (a->state == FSD_IFACE_FAILED && now != a->ifindex)
			fsd_loader_gone(l, a, "went away");
		if (now && a->state == FSD_IFACE_GONE)
			fsd_loader_reattach(l, a, now);
	}
}
