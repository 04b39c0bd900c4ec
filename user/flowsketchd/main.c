// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * flowsketchd - count every packet of some interfaces in fixed memory.
 *
 * Foreground process, logs to stderr; `flowsketchd --help` for options,
 * user/lib/protocol.h for the query socket.  Exit status 1 for bad input
 * or a failed setup (the host is then left as it was), 0 after SIGINT,
 * SIGTERM or SIGHUP (its terminal gone), each of which detaches and
 * unpins everything first, unless --keep leaves the datapath counting
 * for the next start to adopt (loader.h).  One of them at any moment of
 * the start stops the daemon just after its setup (daemon.h).
 */
#include <malloc.h>
#include <unistd.h>
#include "base/log.h"
#include "cmdline.h"
#include "daemon.h"
#include "dispatch.h"

int main(int argc, char **argv)
{
	static struct fsd_daemon d;
	int ret;

	/*
	 * Before anything else: from here on a stop signal is never lost.  It
	 * waits, pending, until the event loop's signalfd takes it (its first
	 * look, after setup; a setup step that may wait long polls the
	 * signalfd too), and the daemon stops through the one teardown,
	 * leaving the host as a clean stop does.  Blocked later (in setup, as
	 * it once was), a signal before that killed the process (harmless:
	 * nothing touched yet), or was dropped when the launcher had it
	 * ignored (a script's background job starts with SIGINT ignored), and
	 * the daemon ran on.  What comes before main (exec, the dynamic
	 * loader) stays the launcher's: a signal it ignores then is gone.
	 * --detach, too, runs to its end rather than stopping half-undone.
	 */
	ret = fsd_daemon_block_signals();
	if (ret) {
		fsd_fail(ret, "cannot block the stop signals");
		return 1;
	}
	/*
	 * A fixed mmap threshold: glibc raises its threshold to the size of
	 * each mmapped block freed, so after one large answer (a top of
	 * thousands of flows, megabytes) blocks of that size come from the
	 * heap and stay there once freed.  Fixed, every block of 128 KiB or
	 * more (answers, top-k heaps, candidate tables) goes back to the
	 * system when freed, and the daemon's memory follows what it holds.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	ret = fsd_options_parse(&d.opts, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 1;
	fsd_verbose = d.opts.verbose;
	if (geteuid()) {
		fsd_err("must run as root (it loads BPF, attaches XDP and pins under bpffs)");
		return 1;
	}
	if (d.opts.detach)
		return fsd_daemon_detach(&d.opts) ? 1 : 0;
	return fsd_daemon_run(&d, fsd_request_start) ? 1 : 0;
}
