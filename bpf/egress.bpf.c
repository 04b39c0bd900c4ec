// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * egress.bpf.c - the transmit frontend: what the host sends.
 *
 * tp_btf/net_dev_start_xmit fires for every frame a device is about to
 * transmit, in the sender's context (process or softirq, bottom halves
 * off).  Frames of the daemon's interfaces are counted by
 * fs_skb_frontend() (skb_frontend.bpf.h, which also describes fs_ifaces)
 * in this object's own maps: the "out" direction's sketches, windows and
 * counters, rotated by the daemon like the XDP object's (maps.h).  It
 * never drops: the verdict step finds no blocklist (fs_ctl.bloom stays 0
 * here).
 *
 * Skeleton: build/skel/egress.skel.h, struct egress; set up like
 * flowsketch.skel.h (FS_DATAPATH_SETUP).
 */
#include "skb_frontend.bpf.h"
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(fs_egress, struct sk_buff *skb, struct net_device *dev)
{
	fs_skb_frontend(skb, dev, 0);
	return 0;
}
