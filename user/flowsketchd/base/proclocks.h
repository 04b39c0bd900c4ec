/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * proclocks.h - who holds a lock, from the text of /proc/locks.
 *
 * Only used to name the other daemon in an error message, so any line
 * that does not parse is skipped, never trusted.  Reads a FILE so that the
 * fuzz target can feed it arbitrary text (fmemopen).
 */
#ifndef FLOWSKETCHD_PROCLOCKS_H
#define FLOWSKETCHD_PROCLOCKS_H

#include <stdio.h>

/* The pid of the first FLOCK on device maj:min, inode ino listed in f,
 * or 0 when there is none (or it is not a positive pid). */
long fsd_proclocks_holder(FILE *f, unsigned int maj, unsigned int min,
			  unsigned long long ino);

#endif /* FLOWSKETCHD_PROCLOCKS_H */
