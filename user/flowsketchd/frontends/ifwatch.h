/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ifwatch.h - follow the configured interfaces over rtnetlink.
 *
 * An interface is known to the operator by name, to XDP by ifindex.  When
 * the device goes away (deleted, renamed, moved to another netns) its XDP
 * link goes defunct and the daemon would keep showing it as attached; when
 * a device of the same name comes back it has a new ifindex, and nothing
 * would count its traffic.  So the daemon listens to RTM_NEWLINK and
 * RTM_DELLINK (RTMGRP_LINK) on a non-blocking NETLINK_ROUTE socket in its
 * epoll loop and keeps each name's fsd_attachment (loader.h) true:
 *
 *   RTM_DELLINK of an attached ifindex        -> gone ("went away")
 *   RTM_NEWLINK of an attached ifindex with
 *     another name                            -> gone ("was renamed to X")
 *   RTM_NEWLINK of a watched name that is not
 *     attached (gone, or failed on another
 *     ifindex)                                -> re-attach, same XDP mode
 *
 * A netlink socket drops messages when its receive buffer overflows and
 * then fails one recv() with ENOBUFS; a message that did not fit our buffer
 * is truncated (MSG_TRUNC).  Either way some change may have been missed,
 * so every name is re-checked (fsd_ifwatch_resync()): if_nametoindex() for
 * where the name is now, and the XDP link's own info for whether the
 * kernel still holds it there.
 *
 * The socket belongs to the network namespace the daemon runs in: it sees
 * that namespace's links only, which are the only ones the daemon can name.
 */
#ifndef FLOWSKETCHD_IFWATCH_H
#define FLOWSKETCHD_IFWATCH_H

#include "loader.h"

struct fsd_ifwatch {
	int fd;				/* -1 when closed */
	unsigned int resyncs;		/* re-scans after lost messages */
};

/* Open and subscribe; before the first attach, so no change made after
 * it can be missed.  0 or -errno (logged). */
int fsd_ifwatch_open(struct fsd_ifwatch *w);
/* Read every pending message and act on it (above); never fails: what
 * cannot be read is made up by a re-scan. */
void fsd_ifwatch_handle(struct fsd_ifwatch *w, struct fsd_loader *l);
/* Re-check every watched name against the host, as after an overflow. */
void fsd_ifwatch_resync(struct fsd_ifwatch *w, struct fsd_loader *l);
void fsd_ifwatch_close(struct fsd_ifwatch *w);

#endif /* FLOWSKETCHD_IFWATCH_H */
