/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * smallfile.h - a configuration file read whole, as root, safely: only a
 * regular file (opened without blocking, so a FIFO cannot stall the
 * daemon), its size checked before anything is read (a huge or endless
 * file costs nothing), read up to the size fstat gave (a file growing
 * meanwhile is cut there).  The policy file and --metrics-web-config.
 */
#ifndef FLOWSKETCHD_SMALLFILE_H
#define FLOWSKETCHD_SMALLFILE_H

#include <stddef.h>

/* path's bytes, NUL-terminated, in *out (malloc'd, *len of them): 0,
 * -EFBIG (above max bytes), -EISDIR (not a regular file), -errno. */
int fsd_read_small_file(const char *path, size_t max, char **out, size_t *len);

#endif /* FLOWSKETCHD_SMALLFILE_H */
