/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * skb_headers.bpf.h - an skb's frame, for the tracepoint frontends.
 *
 * A tracepoint hands over a struct sk_buff, not a frame in packet memory:
 * its first bytes (from the Ethernet header, at most FS_HDR_COPY) are
 * copied with bpf_probe_read_kernel() into this CPU's fs_hdr_buf and
 * parsed there by the same parser as XDP's (parse.bpf.h, "Two kinds of
 * frame").  Only the linear part is copied: bytes past it are in page
 * fragments, and reading on past the linear part would read whatever
 * follows it, so a copy that stops there says so (short_copy) and a
 * header the parser then misses is counted FS_STAT_SKB_NONLINEAR, never
 * keyed from stray bytes.  The kernel builds the headers of what it sends
 * and receives in the linear part, so that count stays at 0 in practice.
 *
 * fs_hdr_buf is per CPU and per frontend object: each frontend is its own
 * BPF object with its own maps (maps.bpf.h), so no two program contexts
 * share it, and a tracing program never runs nested on its CPU (the
 * kernel skips it, counting recursion_misses), so the copy is never
 * overwritten while it is parsed.
 *
 *   fs_hdr_buf  PERCPU_ARRAY  key 0  struct fs_hdr_buf (FS_HDR_COPY +
 *               FS_HDR_SLACK bytes)  the frontend's program only
 */
#ifndef FLOWSKETCH_SKB_HEADERS_BPF_H
#define FLOWSKETCH_SKB_HEADERS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "parse.bpf.h"

struct fs_hdr_buf {
	__u8 b[FS_HDR_COPY + FS_HDR_SLACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_hdr_buf);
} fs_hdr_buf SEC(".maps");

/*
 * Copy the frame of skb into buf: from its Ethernet header, which is
 * skb->data on transmit and skb->head + skb->mac_header once the receive
 * path has pulled it (from_mac).  Fills *data and *data_end with the copy,
 * *len with the whole frame's length, *short_copy when the copy stops at
 * the linear part's end before FS_HDR_COPY and the frame's end.  0, or -1
 * when there is no frame to read (no MAC header set, a failed read).
 */
static __always_inline int fs_skb_copy(struct sk_buff *skb, const int from_mac,
				       struct fs_hdr_buf *buf, void **data,
				       void **data_end, __u64 *len, int *short_copy)
{
	unsigned char *start = skb->data;
	__u64 frame = skb->len, linear = skb->len - skb->data_len, n;

	if (from_mac) {
		__u16 mac = skb->mac_header;
		__u64 pulled;

		if (mac == (__u16)~0U)		/* no MAC header set */
			return -1;
		start = skb->head + mac;
		pulled = (__u64)(skb->data - start);
		if (pulled > FS_HDR_COPY)
			return -1;
		frame += pulled;
		linear += pulled;
	}
	n = linear < FS_HDR_COPY ? linear : FS_HDR_COPY;
	if (n > frame)
		n = frame;
	if (n && bpf_probe_read_kernel(buf->b, (__u32)n, start))
		return -1;
	*data = buf->b;
	*data_end = buf->b + n;
	*len = frame;
	*short_copy = n < frame && n < FS_HDR_COPY;
	return 0;
}

#endif /* FLOWSKETCH_SKB_HEADERS_BPF_H */
