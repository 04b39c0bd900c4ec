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
 * GSO.  An skb the stack built as one super-packet (TCP segmentation
 * offload, GSO, and on receive GRO's aggregates) leaves, or arrived, as
 * gso_segs frames on the wire, each with its own copy of the headers.
 * What is counted is the wire: gso_segs packets (fs_frame.segs) and
 *
 *     bytes = skb->len + (gso_segs - 1) * hdr_len,
 *
 * hdr_len being the headers the kernel repeats in every segment: from the
 * MAC header to the end of the transport header, the inner one for a
 * tunnel (VXLAN and the like repeat the outer headers too), with the TCP
 * header's data offset read in the copy, or 8 for UDP (the kernel's
 * qdisc_pkt_len_init() counts the same way, fs_skb_gso()).  Only a
 * non-linear skb can be one (the segments' payload is in its fragments),
 * so a linear one costs no extra read.
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
#include "flowsketch/packet_update.h"

struct fs_hdr_buf {
	__u8 b[FS_HDR_COPY + FS_HDR_SLACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_hdr_buf);
} fs_hdr_buf SEC(".maps");

/* Encapsulations whose GSO repeats the outer headers too (VXLAN, Geneve,
 * GRE, IP in IP): the headers of a segment end at the inner transport
 * header's end. */
#define FS_GSO_TUNNEL (SKB_GSO_GRE | SKB_GSO_GRE_CSUM | SKB_GSO_IPXIP4 | \
		       SKB_GSO_IPXIP6 | SKB_GSO_UDP_TUNNEL |                  \
		       SKB_GSO_UDP_TUNNEL_CSUM)

/*
 * The wire packets and the bytes to add for GSO skb whose frame starts at
 * mac (an offset from skb->head), is frame bytes long, and whose first n
 * bytes are in buf: 1 and 0 for an skb that is not GSO.  A segment's
 * headers end at the (inner, for a tunnel) transport header plus the TCP
 * header (its data offset, read in the copy) or 8 for UDP.  An skb from
 * an untrusted source (SKB_GSO_DODGY: a tap, a packet socket with a vnet
 * header) may carry no segment count: it is ceil(payload / gso_size), as
 * qdisc_pkt_len_init() computes it.  Headers that cannot be measured (not
 * in the copy) give the segment count and the bytes of one copy of them.
 */
static __always_inline __u32 fs_skb_gso(struct sk_buff *skb, __u64 mac,
					__u64 frame, const struct fs_hdr_buf *buf,
					__u64 n, __u64 *more_bytes)
{
	const struct skb_shared_info *sh;
	__u16 size_segs[2], th;
	__u32 type = 0;
	__u64 hdr, segs;
	int known = 0;

	*more_bytes = 0;
	if (!skb->data_len)
		return 1;
	sh = (const void *)(skb->head + skb->end);
	if (bpf_probe_read_kernel(size_segs, sizeof(size_segs), &sh->gso_size) ||
	    !size_segs[0] ||
	    bpf_probe_read_kernel(&type, sizeof(type), &sh->gso_type))
		return 1;
	th = type & FS_GSO_TUNNEL ? skb->inner_transport_header :
				    skb->transport_header;
	hdr = (__u64)th - mac;
	if (th != (__u16)~0U && hdr < FS_HDR_COPY) {
		if (type & (SKB_GSO_TCPV4 | SKB_GSO_TCPV6)) {
			if (hdr + 13 <= n) {
				hdr += (__u64)(buf->b[(hdr + 12) & (FS_HDR_COPY - 1)] >> 4) * 4;
				known = 1;
			}
		} else if (type & SKB_GSO_UDP_L4) {
			hdr += 8;
			known = 1;
		}
	}
	segs = size_segs[1];
	if (!segs && known && frame > hdr)
		segs = (frame - hdr + size_segs[0] - 1) / size_segs[0];
	if (segs < 2)
		return 1;
	if (segs > FS_EXTRA_PACKETS_MAX + 1)
		segs = FS_EXTRA_PACKETS_MAX + 1;
	if (known)
		*more_bytes = (segs - 1) * hdr;
	return (__u32)segs;
}

/*
 * Copy the frame of skb into buf: from its Ethernet header, which is
 * skb->data on transmit and skb->head + skb->mac_header once the receive
 * path has pulled it (from_mac).  Fills *data and *data_end with the copy,
 * *len with the bytes on the wire (the whole frame's length, or its
 * segments' for GSO) and *segs with its packets on the wire, *short_copy
 * when the copy stops at the linear part's end before FS_HDR_COPY and the
 * frame's end.  0, or -1 when there is no frame to read (no MAC header
 * set, a failed read).
 */
static __always_inline int fs_skb_copy(struct sk_buff *skb, const int from_mac,
				       struct fs_hdr_buf *buf, void **data,
				       void **data_end, __u64 *len, __u32 *segs,
				       int *short_copy)
{
	unsigned char *start = skb->data;
	__u64 frame = skb->len, linear = skb->len - skb->data_len, n, more;

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
	*segs = fs_skb_gso(skb, (__u64)(start - skb->head), frame, buf, n, &more);
	*data = buf->b;
	*data_end = buf->b + n;
	*len = frame + more;
	*short_copy = n < frame && n < FS_HDR_COPY;
	return 0;
}

#endif /* FLOWSKETCH_SKB_HEADERS_BPF_H */
