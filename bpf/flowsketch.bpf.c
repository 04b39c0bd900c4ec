// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * flowsketch.bpf.c - the ingress ("in") frontends the daemon attaches.
 *
 * Two programs over the same maps, of which a daemon attaches exactly one
 * (flowsketchd --ingress xdp|tracepoint), so that no frame is counted
 * twice and only one program context ever writes this object's per-CPU
 * memory:
 *
 *   fs_xdp         XDP on each interface (default): counts, and drops
 *                  what the blocklist covers.
 *   fs_ingress_tp  tp_btf/netif_receive_skb, for interfaces XDP should
 *                  not or cannot hold (a driver whose XDP is broken, a
 *                  host whose XDP slot another tool owns): counts only,
 *                  after the stack has pulled the Ethernet header
 *                  (skb_frontend.bpf.h).  It fires once per frame the
 *                  stack receives on the interface, in softirq or with
 *                  bottom halves off.
 *
 * Skeleton: build/skel/flowsketch.skel.h, struct flowsketch.  Before load
 * the loader sets rodata->fs_params (and fs_use_kfunc) and sizes each
 * datapath map with fs_dp_chunks() for FS_NSLOTS slots (sketch_kind.h).
 */
#include "skb_frontend.bpf.h"
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int fs_xdp(struct xdp_md *ctx)
{
	return fs_datapath_process(ctx);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(fs_ingress_tp, struct sk_buff *skb)
{
	fs_skb_frontend(skb, skb->dev, 1);
	return 0;
}
