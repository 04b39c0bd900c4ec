/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * skb_frontend.bpf.h - what a tracepoint frontend does with an skb.
 *
 * The egress frontend (egress.bpf.c, tp_btf/net_dev_start_xmit) and the
 * ingress one for interfaces XDP should not hold (flowsketch.bpf.c,
 * tp_btf/netif_receive_skb, flowsketchd --ingress tracepoint) both see
 * every frame of every device of every network namespace.  They count
 * only the daemon's interfaces, copy the frame's headers
 * (skb_headers.bpf.h) and hand the copy to fs_datapath_frame(), the very
 * code XDP runs, in their own object's maps.
 *
 *   fs_ifaces  HASH  struct fs_tp_iface -> __u32 slot  written by the
 *              daemon, read per frame.  ifindexes are per namespace: the
 *              key is the daemon's namespace (its inode number) and the
 *              index; the value is the interface's fs_ifcount slot
 *              (maps.h, "Per-interface counts").
 */
#ifndef FLOWSKETCH_SKB_FRONTEND_BPF_H
#define FLOWSKETCH_SKB_FRONTEND_BPF_H

#include "datapath.bpf.h"
#include "skb_headers.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct fs_tp_iface);
	__type(value, __u32);
} fs_ifaces SEC(".maps");

/*
 * Count skb, which dev sends or receives, if dev is one of fs_ifaces.
 * from_mac: the receive path has pulled the Ethernet header off skb->data
 * (skb_headers.bpf.h).
 */
static __always_inline void fs_skb_frontend(struct sk_buff *skb,
					    struct net_device *dev,
					    const int from_mac)
{
	struct fs_tp_iface k = {
		.ifindex = (__u32)dev->ifindex,
		.netns_ino = dev->nd_net.net->ns.inum,
	};
	struct fs_hdr_buf *buf;
	struct fs_frame f;
	__u32 zero = 0, *slot;

	slot = bpf_map_lookup_elem(&fs_ifaces, &k);
	if (!slot)
		return;
	f.ifc = fs_ifcount_of(*slot);
	buf = bpf_map_lookup_elem(&fs_hdr_buf, &zero);
	if (!buf)
		return;
	f.copied = 1;
	f.judged = 0;
	if (fs_skb_copy(skb, from_mac, buf, &f.data, &f.data_end, &f.len,
			&f.segs, &f.short_copy))
		return;
	fs_datapath_frame(&f);
}

/*
 * The benchmark's baselines (bench/bpf/bench_tp.bpf.c,
 * bench/tools/fs-tpbench.c): fs_skb_frontend() up to a stage and no
 * further, upto a constant:
 * FS_SKB_UPTO_FILTER the fs_ifaces lookup alone, FS_SKB_UPTO_COPY and
 * the header copy, FS_SKB_UPTO_PARSE and fs_datapath_parse_frame() (what
 * fs_datapath_frame() does before the sketch update, as XDP's parse-only
 * baseline).  The same calls as fs_skb_frontend(), apart from it so that
 * the frontend's own code stays as it is.
 */
enum { FS_SKB_UPTO_FILTER, FS_SKB_UPTO_COPY, FS_SKB_UPTO_PARSE };

static __always_inline void fs_skb_frontend_upto(struct sk_buff *skb,
						 struct net_device *dev,
						 const int from_mac, const int upto)
{
	struct fs_tp_iface k = {
		.ifindex = (__u32)dev->ifindex,
		.netns_ino = dev->nd_net.net->ns.inum,
	};
	struct fs_hot_line *hot;
	struct fs_hdr_buf *buf;
	struct fs_flow_key key;
	struct fs_frame f;
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(&fs_ifaces, &k) || upto == FS_SKB_UPTO_FILTER)
		return;
	buf = bpf_map_lookup_elem(&fs_hdr_buf, &zero);
	if (!buf)
		return;
	f.copied = 1;
	f.judged = 0;
	if (fs_skb_copy(skb, from_mac, buf, &f.data, &f.data_end, &f.len,
			&f.segs, &f.short_copy) || upto == FS_SKB_UPTO_COPY)
		return;
	hot = fs_hot_line();
	if (hot)	/* an array element always exists */
		fs_datapath_parse_frame(&f, hot, &key);
}

#endif /* FLOWSKETCH_SKB_FRONTEND_BPF_H */
