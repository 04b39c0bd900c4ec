// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_tp.bpf.c - the tracepoint frontends and their baselines, for
 * bench/tools/fs-tpbench.c: attached one at a time to their tracepoint while
 * traffic crosses a veth pair, and timed by the kernel's run-time
 * statistics.  For each hook, the egress frontend's
 * (tp_btf/net_dev_start_xmit, bpf/egress.bpf.c) and the ingress one's
 * (tp_btf/netif_receive_skb, fs_ingress_tp in bpf/flowsketch.bpf.c):
 *
 *   tpb_*_empty   returns at once: the tracepoint's BPF call and the
 *                 statistics themselves
 *   tpb_*_filter  the fs_ifaces lookup alone
 *   tpb_*_copy    + the header copy (bpf_probe_read_kernel into fs_hdr_buf)
 *   tpb_*_parse   + fs_datapath_parse_frame(): the parse-only baseline
 *   tpb_*_full    fs_skb_frontend(), what the real frontend runs
 *
 * The baselines are fs_skb_frontend_upto() (skb_frontend.bpf.h), the same
 * calls as the frontend's stopped after a stage.  One object holds them
 * all, with one set of the datapath's maps (only one program is attached
 * at a time, so fs_hdr_buf is never shared by two running programs).
 *
 * Skeleton: build/skel/bench_tp.skel.h, struct bench_tp; set up like
 * egress.skel.h (FS_DATAPATH_SETUP, pure BPF update).
 */
#include "skb_frontend.bpf.h"
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- egress: what dev sends; skb->data is the Ethernet header */

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tpb_eg_empty, struct sk_buff *skb, struct net_device *dev)
{
	return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tpb_eg_filter, struct sk_buff *skb, struct net_device *dev)
{
	fs_skb_frontend_upto(skb, dev, 0, FS_SKB_UPTO_FILTER);
	return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tpb_eg_copy, struct sk_buff *skb, struct net_device *dev)
{
	fs_skb_frontend_upto(skb, dev, 0, FS_SKB_UPTO_COPY);
	return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tpb_eg_parse, struct sk_buff *skb, struct net_device *dev)
{
	fs_skb_frontend_upto(skb, dev, 0, FS_SKB_UPTO_PARSE);
	return 0;
}

/* As fs_egress (egress.bpf.c). */
SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tpb_eg_full, struct sk_buff *skb, struct net_device *dev)
{
	fs_skb_frontend(skb, dev, 0);
	return 0;
}

/* ---- ingress: what skb->dev receives; the stack has pulled the MAC header */

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(tpb_in_empty, struct sk_buff *skb)
{
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(tpb_in_filter, struct sk_buff *skb)
{
	fs_skb_frontend_upto(skb, skb->dev, 1, FS_SKB_UPTO_FILTER);
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(tpb_in_copy, struct sk_buff *skb)
{
	fs_skb_frontend_upto(skb, skb->dev, 1, FS_SKB_UPTO_COPY);
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(tpb_in_parse, struct sk_buff *skb)
{
	fs_skb_frontend_upto(skb, skb->dev, 1, FS_SKB_UPTO_PARSE);
	return 0;
}

/* As fs_ingress_tp (flowsketch.bpf.c). */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(tpb_in_full, struct sk_buff *skb)
{
	fs_skb_frontend(skb, skb->dev, 1);
	return 0;
}
