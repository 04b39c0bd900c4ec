// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * flowsketchd - count every packet of some interfaces in fixed memory.
 *
 * Foreground process, logs to stderr; `flowsketchd --help` for options,
 * user/lib/protocol.h for the query socket.  Exit status 1 for bad input
 * or a failed setup (the host is then left as it was), 0 after SIGINT,
 * SIGTERM or SIGHUP (its terminal gone), each of which detaches and
 * unpins everything first.
 */
#include <unistd.h>
#include "log.h"
#include "daemon.h"

int main(int argc, char **argv)
{
	static struct fsd_daemon d;
	int ret;

	ret = fsd_options_parse(&d.opts, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 1;
	fsd_verbose = d.opts.verbose;
	if (geteuid()) {
		fsd_err("must run as root (it loads BPF, attaches XDP and pins under bpffs)");
		return 1;
	}
	return fsd_daemon_run(&d) ? 1 : 0;
}
