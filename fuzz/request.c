// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * request.c - fuzz the daemon's request parser (user/flowsketchd/service/request.h).
 *
 * Besides crashes and sanitizer reports, aborts when a promise of
 * request.h breaks: the error is one non-empty sentence of valid UTF-8
 * (it goes into the answer), a parsed request is of a known command with
 * its fields in range (n, span, direction, the CIDR count, a load's
 * total), and
 * json-c never refuses what jsoncheck accepted (the two disagreeing would
 * mean a request one of them misreads).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "service/request.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char err[FSD_REQUEST_ERROR_MAX];
	struct fsd_request r;
	size_t len;

	memset(err, 0x55, sizeof(err));
	if (fsd_request_parse((const char *)data, size, &r, err)) {
		len = strnlen(err, sizeof(err));
		if (!len || len == sizeof(err) || fs_utf8_check(err, len) != len)
			abort();
		if (!strncmp(err, "request could not be parsed", 27))
			abort();
		return 0;
	}
	/* A row of commands.h. */
	if ((unsigned int)r.cmd >= FSD_CMD_COUNT)
		abort();
	if (r.cmd == FSD_CMD_TOP && (r.n < 1 || r.n > FSD_TOP_MAX))
		abort();
	if ((r.cmd == FSD_CMD_TOP || r.cmd == FSD_CMD_FLOWS ||
	     r.cmd == FSD_CMD_EXPORT || r.cmd == FSD_CMD_WINDOWS) &&
	    r.direction != FSD_DIR_IN && r.direction != FSD_DIR_OUT &&
	    r.direction != FSD_DIR_BOTH)
		abort();
	if ((r.cmd == FSD_CMD_BLOCK_ADD || r.cmd == FSD_CMD_BLOCK_DEL ||
	     r.cmd == FSD_CMD_BLOCK_LOAD_PART) &&
	    (r.ncidrs < 1 || r.ncidrs > FSD_BLOCK_REQUEST_MAX))
		abort();
	if (r.cmd == FSD_CMD_BLOCK_LOAD_BEGIN &&
	    (r.total < 1 || r.total > FS_BLOCK_LOAD_MAX))
		abort();

	if (r.span < 0 || !isfinite(r.span))
		abort();
	return 0;
}
