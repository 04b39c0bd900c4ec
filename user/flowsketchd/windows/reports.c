// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* reports.c - ring buffer reports into window candidates (reports.h). */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "flowsketch/maps.h"
#include "base/log.h"
#include "reports.h"

static int on_report(void *arg, void *data, size_t size)
{
	struct fsd_reports *ctx = arg;
	struct fsd_report_counts *c = &ctx->counts;
	struct fs_hh_report r;
	int ret;

	c->received++;
	if (size < sizeof(r)) {
		c->malformed++;
		return 0;
	}
	memcpy(&r, data, sizeof(r));
	/* Full sets and stray windows are counted, here and by the
	 * history; neither is a reason to stop draining. */
	ret = fsd_history_add_candidate(ctx->h, r.window_seq, &r.key, r.hash);
	if (ret == 1) {
		c->filed++;
		fsd_winstore_note(ctx->store, r.window_seq, &r.key, r.hash);
	}
	else if (ret == 0)
		c->duplicates++;
	else if (ret == -ESRCH)
		c->stray++;
	else if (ret == -ENOSPC)
		c->refused++;
	else
		c->failed++;
	return 0;
}

struct ring_buffer *fsd_reports_open(struct fsd_reports *r, int map_fd,
				     struct fsd_history *h)
{
	struct ring_buffer *rb;

	memset(r, 0, sizeof(*r));
	r->h = h;
	rb = ring_buffer__new(map_fd, on_report, r, NULL);
	if (!rb) {
		int err = errno;

		fsd_err("cannot open the report ring buffer: %s", strerror(err));
		errno = err;	/* for the caller, past stdio */
	}
	return rb;
}

void fsd_reports_drain(struct ring_buffer *rb, struct fsd_reports *r)
{
	ring_buffer__consume(rb);
	fsd_winstore_flush(r->store);
}
