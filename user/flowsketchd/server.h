/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * server.h - the query socket of protocol.h.
 *
 * One request per connection, served inside the daemon's event loop.  A
 * client is given FSD_CLIENT_TIMEOUT_MS to send its request and five
 * times that to take the answer; one that is slower is dropped, so a
 * stuck or hostile client delays windows by at most that, never stops
 * them.
 */
#ifndef FLOWSKETCHD_SERVER_H
#define FLOWSKETCHD_SERVER_H

#include "daemon.h"

#define FSD_CLIENT_TIMEOUT_MS 200

/* Create the socket (directory 0700 if missing, socket 0600) and listen. */
int fsd_server_open(struct fsd_daemon *d);
/* Serve every connection waiting on the listening socket. */
void fsd_server_accept(struct fsd_daemon *d);
/* Close and remove the socket (and the directory if we made it). */
void fsd_server_close(struct fsd_daemon *d);

#endif /* FLOWSKETCHD_SERVER_H */
