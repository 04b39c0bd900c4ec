// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * conn.bpf.c - the connection frontend: who opens TCP connections.
 *
 * tp_btf/inet_sock_set_state fires on every TCP state change of every
 * socket.  Two changes say a connection is being opened, one that it was:
 *
 *   CLOSE -> SYN_SENT        this host connects (an attempt)
 *   LISTEN -> SYN_RECV       a peer's handshake completed on a listener:
 *                            the child socket is born (an attempt; a SYN
 *                            whose handshake never completes makes a
 *                            request socket, which changes no state, and
 *                            is only seen as a packet by XDP)
 *   SYN_SENT/SYN_RECV -> ESTABLISHED   it was established
 *
 * Each is counted for a key that names who opened the connection to
 * what: src the opener's address, dst the other side's, dport the port
 * connected to, sport 0 (every connection has an ephemeral port of its
 * own: per five-tuple each would count once), proto TCP.  An IPv4
 * connection on an IPv6 socket (::ffff:a.b.c.d) is keyed as IPv4, as
 * the packet frontends key its packets.  In this object's own sketches,
 * windows and rotation (maps.h), the two metrics are:
 *
 *   "packets"  connection attempts (an attempt is 1 packet, 0 bytes)
 *   "bytes"    connections established (0 packets, 1 byte: an update
 *              with extra_packets = -1, packet_update.h)
 *
 * so a window's heavy hitters by packets are who opens the most
 * connections (scans and floods), and the HyperLogLog of sources counts
 * the distinct hosts that opened any.  A connection opened and
 * established in different windows counts its attempt in the first, its
 * establishment in the second.
 *
 * Only the daemon's network namespace is counted (fs_conn_netns, set
 * before load): the tracepoint fires for every namespace's sockets.  The
 * interface a connection will use is not known when it is opened (the
 * socket has no route yet), so -i does not apply.
 *
 * Concurrency: the state changes happen in process context (connect())
 * and in softirq (a handshake completing on receive), so on one CPU a
 * softirq may interrupt this program; the kernel then skips the nested
 * run (recursion_misses in status) rather than run it on the same
 * per-CPU memory, which no other program writes.
 *
 * Skeleton: build/skel/conn.skel.h, struct conn; set up like
 * flowsketch.skel.h (FS_DATAPATH_SETUP).
 */
#include "datapath.bpf.h"
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FS_AF_INET 2
#define FS_AF_INET6 10
#define FS_IPPROTO_TCP 6

/* The inode number of the daemon's network namespace. */
const volatile __u32 fs_conn_netns = 0;

/* ::ffff:0:0/96 */
static __always_inline int fs_v4_mapped(const __u8 *a)
{
	const __u32 *w = (const __u32 *)a;

	return !w[0] && !w[1] && w[2] == bpf_htonl(0xffff);
}

/* Set the key's addresses, local and remote, as the opener sees them. */
static __always_inline int fs_conn_addrs(const struct sock *sk,
					 struct fs_flow_key *k, int opener_local)
{
	const struct sock_common *c = &sk->__sk_common;
	__u8 *l = opener_local ? k->src : k->dst;
	__u8 *r = opener_local ? k->dst : k->src;

	if (c->skc_family == FS_AF_INET) {
		k->family = FS_FAMILY_IPV4;
		__builtin_memcpy(l, &c->skc_rcv_saddr, 4);
		__builtin_memcpy(r, &c->skc_daddr, 4);
		return 0;
	}
	if (c->skc_family != FS_AF_INET6)
		return -1;
	__builtin_memcpy(l, &c->skc_v6_rcv_saddr, 16);
	__builtin_memcpy(r, &c->skc_v6_daddr, 16);
	if (fs_v4_mapped(l) && fs_v4_mapped(r)) {
		k->family = FS_FAMILY_IPV4;
		__builtin_memcpy(l, l + 12, 4);
		__builtin_memcpy(r, r + 12, 4);
		__builtin_memset(l + 4, 0, 12);
		__builtin_memset(r + 4, 0, 12);
		return 0;
	}
	k->family = FS_FAMILY_IPV6;
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(fs_conn, const struct sock *sk, const int oldstate, const int newstate)
{
	struct fs_packet_update u;
	struct fs_hot_line *hot;
	struct fs_ctl *ctl;
	int opener_local, established;
	__u32 zero = 0;

	if (newstate == TCP_SYN_SENT) {
		opener_local = 1, established = 0;
	} else if (newstate == TCP_SYN_RECV && oldstate == TCP_LISTEN) {
		opener_local = 0, established = 0;
	} else if (newstate == TCP_ESTABLISHED &&
		   (oldstate == TCP_SYN_SENT || oldstate == TCP_SYN_RECV)) {
		opener_local = oldstate == TCP_SYN_SENT, established = 1;
	} else {
		return 0;
	}
	if (sk->sk_protocol != FS_IPPROTO_TCP ||
	    sk->__sk_common.skc_net.net->ns.inum != fs_conn_netns)
		return 0;
	hot = fs_hot_line();
	ctl = bpf_map_lookup_elem(&fs_ctl, &zero);
	if (!hot || !ctl)	/* array elements always exist */
		return 0;
	hot->rx += 1;
	__builtin_memset(&u.key, 0, sizeof(u.key));
	if (fs_conn_addrs(sk, &u.key, opener_local)) {
		fs_stat_inc(FS_STAT_NON_IP);
		return 0;
	}
	u.key.proto = FS_IPPROTO_TCP;
	/* The port connected to: the remote one when we opened it, else our
	 * own (skc_num, host order). */
	u.key.dport = opener_local ? sk->__sk_common.skc_dport :
				     bpf_htons(sk->__sk_common.skc_num);
	u.bytes = established;
	u.extra_packets = established ? -1 : 0;
	fs_datapath_count(hot, ctl, &u);
	return 0;
}
