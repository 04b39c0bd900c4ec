// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * egress.bpf.c - the transmit frontend: what the host sends.
 *
 * tp_btf/net_dev_start_xmit fires for every frame a device is about to
 * transmit, in the sender's context (process or softirq, bottom halves
 * off).  Frames of the interfaces in fs_ifaces (the daemon's -i list, by
 * ifindex) are copied (skb_headers.bpf.h) and counted by the same
 * fs_datapath_frame() as XDP's, in this object's own maps: the "out"
 * direction's sketches, windows and counters, rotated by the daemon like
 * the XDP object's (maps.h).  It never drops: the verdict step finds no
 * blocklist (fs_ctl.bloom stays 0 here).
 *
 *   fs_ifaces  HASH  struct fs_egress_iface -> __u32 1  the daemon; read
 *              per frame.  The tracepoint fires for every device of every
 *              network namespace, and ifindexes are per namespace: the key
 *              is the daemon's namespace (its inode number) and the index.
 *
 * Skeleton: build/skel/egress.skel.h, struct egress; set up like
 * flowsketch.skel.h (FS_DATAPATH_SETUP), with fs_use_kfunc 0.
 */
#include "datapath.bpf.h"
#include "skb_headers.bpf.h"
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct fs_egress_iface);
	__type(value, __u32);
} fs_ifaces SEC(".maps");

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(fs_egress, struct sk_buff *skb, struct net_device *dev)
{
	struct fs_egress_iface k = {
		.ifindex = (__u32)dev->ifindex,
		.netns_ino = dev->nd_net.net->ns.inum,
	};
	struct fs_hdr_buf *buf;
	struct fs_frame f;
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(&fs_ifaces, &k))
		return 0;
	buf = bpf_map_lookup_elem(&fs_hdr_buf, &zero);
	if (!buf)
		return 0;
	f.copied = 1;
	if (fs_skb_copy(skb, 0, buf, &f.data, &f.data_end, &f.len, &f.short_copy))
		return 0;
	fs_datapath_frame(&f);
	return 0;
}
