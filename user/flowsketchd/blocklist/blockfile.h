/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blockfile.h - the daemon's list file (--blocklist FILE).
 *
 * Text, one entry a line, written whole by the daemon after every change
 * (a temporary file in the same directory, fsync, rename, fsync of the
 * directory: a crash leaves the old list or the new one):
 *
 *   # flowsketch blocklist, written by flowsketchd
 *   10.0.0.0/8 added=1796289499
 *   198.51.100.7/32 added=1796289499 expires=1796290099
 *   2001:db8::/32 added=1796289499 expires=1796293099 by block src6/32 if packets > 50k/s for 3s ban 1h
 *
 *   CIDR         as `block add` takes it (cidr.h);
 *   added=T      when it was added, T seconds since the epoch (absent:
 *                not known, as in a file of one CIDR a line);
 *   expires=T    when it is deleted, seconds since the epoch (absent:
 *                never).  Absolute, so that a ban runs out at its time
 *                across restarts;
 *   by TEXT      last: the policy rule that added it, to the line's end
 *                (absent: manual).
 *
 * '#' starts a comment, to the line's end; blank lines and surrounding
 * blanks are skipped, and a CR before the newline (a CRLF file).  So a list of one CIDR a line (the format of old,
 * and `block load`'s) is a list of manual entries kept for good.  A line
 * longer than FSD_BLOCKFILE_LINE_MAX, with a NUL byte, or with a field
 * not of this grammar is an error naming the file and line: a corrupt
 * file is refused whole, never half read.
 */
#ifndef FLOWSKETCHD_BLOCKFILE_H
#define FLOWSKETCHD_BLOCKFILE_H

#include <stddef.h>
#include "blockset.h"

/* A line at its longest (an IPv6 CIDR, two times, a rule of at most
 * FSD_BLOCK_ORIGIN_TEXT_MAX) is about 220 bytes: within what `block load`
 * takes, so that it loads a list the daemon wrote. */
#define FSD_BLOCKFILE_LINE_MAX FS_CIDR_LINE_MAX

/*
 * Read path into *out (malloc'd, *n entries, sorted, one of repeats
 * kept, ids 0), the origins interned into o: 0; -ENOENT when it
 * does not exist; -EINVAL, -E2BIG (more than max entries) or another
 * -errno with msg saying "PATH:LINE: ..." or "PATH: ...".  Only a regular
 * file, opened without blocking (a FIFO would stall the start), of a size
 * a list of max entries can have.
 */
int fsd_blockfile_read(const char *path, unsigned int max,
		       struct fsd_block_origins *o,
		       struct fsd_block_entry **out, size_t *n,
		       char *msg, size_t msg_len);

/* Write e (n entries) to path as above, atomically: 0 or -errno.  The
 * directory is made (0755) if missing, and must be root's (safedir.h). */
int fsd_blockfile_write(const char *path, const struct fsd_block_entry *e,
			size_t n, const struct fsd_block_origins *o);

#endif /* FLOWSKETCHD_BLOCKFILE_H */
