/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * packet_update.h - input and output of the per-packet sketch update.
 *
 * struct fs_packet_update is what fs_sketch_update() (update.h) reads and
 * writes, and part of the memory argument of the kernel module's kfunc
 * (kfunc.h), so its layout is ABI between the BPF programs and the module:
 *
 *   off size field
 *     0   40 key             flow key (flow_key.h)
 *    40    8 bytes           frame length to add to the bytes counters
 *    48    8 thresh_packets  report when the per-CPU packet estimate reaches it (0: never;
 *                           fs_hh_threshold(), cms.h)
 *    56    8 thresh_bytes    same for bytes
 *    64    4 slot            window slot to update, < nslots
 *    68    2 report          out: FS_REPORT_* bits of the thresholds reached
 *    70    2 extra_packets   signed: the update counts 1 + extra_packets
 *                           packets of `bytes` bytes in all: 0 (a zeroed
 *                           field) for one packet, up to FS_EXTRA_PACKETS_MAX
 *                           more for a GSO skb's segments (skb_headers.bpf.h),
 *                           -1 for none (an update that adds only bytes:
 *                           a connection's establishment, conn.bpf.c)
 *    72    8 hash            out: the flow hash (for the report)
 */
#ifndef FLOWSKETCH_PACKET_UPDATE_H
#define FLOWSKETCH_PACKET_UPDATE_H

#include "compat.h"
#include "flow_key.h"

#define FS_REPORT_PACKETS 0x1
#define FS_REPORT_BYTES 0x2

/* The most extra_packets can add: a GSO skb has at most 65535 segments,
 * in practice a few hundred (BIG TCP's 512 KiB at the smallest MSS
 * allowed by default is about 6000). */
#define FS_EXTRA_PACKETS_MAX 32767

/* Returned when a chunk lookup fails (a map smaller than the params say). */
#define FS_UPDATE_ENOENT (-2)

struct fs_packet_update {
	struct fs_flow_key key;
	__u64 bytes;
	__u64 thresh_packets;
	__u64 thresh_bytes;
	__u32 slot;
	__u16 report;
	__s16 extra_packets;
	__u64 hash;
};

_Static_assert(sizeof(struct fs_packet_update) == 80, "kfunc ABI");

#endif /* FLOWSKETCH_PACKET_UPDATE_H */
