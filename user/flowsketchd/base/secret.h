/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * secret.h - the 128-bit secret the sketches' hash key is expanded from
 * (fs_hash_key_derive(), hash.h).
 *
 * Random at every start by default: an outsider then cannot craft flows
 * that collide in the sketches.  Hosts whose sketches are merged must
 * share the secret, so it can come from a 16-byte file instead (k0 then k1,
 * little-endian), which should be as private as any other key.
 */
#ifndef FLOWSKETCHD_SECRET_H
#define FLOWSKETCHD_SECRET_H

#include <stddef.h>
#include "flowsketch/hash.h"

#define FSD_SECRET_LEN 16

/* The key from a secret file's whole content: 0, or -EINVAL unless it is
 * exactly FSD_SECRET_LEN bytes.  Pure, for the fuzz target. */
int fsd_secret_parse(const __u8 *buf, size_t len, struct fs_hash_secret *s);

/* From path, or getrandom() when path is NULL: 0 or -errno, with a
 * message.  A path that is a pipe or FIFO may be slow to give its bytes:
 * a stop signal on stop_fd (the daemon's signalfd; -1 for none) ends the
 * wait with -EINTR, no message, the signal left for the caller. */
int fsd_secret_get(const char *path, struct fs_hash_secret *s, int stop_fd);

#endif /* FLOWSKETCHD_SECRET_H */
