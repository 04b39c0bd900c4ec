// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * flowsketch_wide.bpf.c - the daemon's ingress programs (flowsketch.bpf.c)
 * built in the wide layout (FS_CMS_WIDE, update.h): 16-byte Count-Min cells
 * with their report flags and one-byte HyperLogLog registers, as every
 * release before the narrow cells counted.  Never attached by the daemon:
 * the tests run the same packets through it and through flowsketch.bpf.c
 * and compare the folded sketches bit for bit (test_layouts), and the
 * benchmarks measure what the narrow layout saves against it.
 *
 * Skeleton: build/skel/flowsketch_wide.skel.h, struct flowsketch_wide.
 */
#define FS_CMS_WIDE 1
#include "flowsketch.bpf.c"
