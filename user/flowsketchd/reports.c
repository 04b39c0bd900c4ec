// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* reports.c - ring buffer reports into window candidates (reports.h). */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "flowsketch/maps.h"
#include "log.h"
#include "reports.h"

static int on_report(void *ctx, void *data, size_t size)
{
	struct fsd_history *h = ctx;
	struct fs_hh_report r;

	if (size < sizeof(r))
		return 0;
	memcpy(&r, data, sizeof(r));
	/* Full sets and stray windows are counted by the history; neither
	 * is a reason to stop draining. */
	fsd_history_add_candidate(h, r.window_seq, &r.key, r.hash);
	return 0;
}

struct ring_buffer *fsd_reports_open(int map_fd, struct fsd_history *h)
{
	struct ring_buffer *rb;

	rb = ring_buffer__new(map_fd, on_report, h, NULL);
	if (!rb) {
		int err = errno;

		fsd_err("cannot open the report ring buffer: %s", strerror(err));
		errno = err;	/* for the caller, past stdio */
	}
	return rb;
}
