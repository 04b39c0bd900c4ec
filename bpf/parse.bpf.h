/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * parse.bpf.h - from an Ethernet frame to the flow key (flow_key.h).
 *
 * fs_parse() walks at most:
 *   Ethernet, two VLAN tags (802.1Q 0x8100 / 802.1ad 0x88a8, any order),
 *   IPv4 with options, or IPv6 with FS_IPV6_MAX_EXT extension headers
 *   (hop-by-hop, routing, fragment, destination options, AH),
 *   then TCP, UDP, ICMP or ICMPv6.
 * Every loop has a compile-time bound and every read is preceded by a
 * check against data_end, so the verifier proves it in one pass and the
 * cost is bounded: the worst case is 2 + 6 header walks.
 *
 * Contract: returns 0 with *key filled (unused bytes zero) or the
 * FS_STAT_* reason the frame cannot be keyed (maps.h); with a reason,
 * key->family and key->src are set when the source is still known (an IP
 * header whole but what follows it malformed, or behind more VLAN tags
 * than the key walks: "Deep VLAN stacks"), for the blocklist's verdict.  A frame that is
 * not keyed must not be sketched: a truncated or malformed header would
 * give a key made of whatever bytes follow, i.e. a bogus flow.  Headers
 * after the IP header must fit both the frame and the IP packet (IPv4
 * total length, IPv6 payload length): a frame padded to the Ethernet
 * minimum holds bytes past a short packet that are no header.  The IP
 * length is kept as a count of bytes left ("room") next to the data_end
 * checks, which the verifier needs in any case.  An IPv6 payload length
 * of 0 (a jumbogram, RFC 2675) leaves the frame as the only bound.
 *
 * Non-first fragments (IPv4 offset != 0, IPv6 fragment header offset != 0)
 * carry no transport header: they are keyed with ports 0 and flagged in
 * *nonfirst_frag so the caller can count them.  A first fragment holds the
 * transport header and is keyed like an unfragmented packet.
 *
 * Two kinds of frame, one parser.  XDP hands the frame in place, and the
 * verifier bounds every read by the comparison with data_end before it.
 * The tracepoint frontends (bpf/skb_headers.bpf.h) copy an skb's headers
 * into a per-CPU buffer first, and for a map value the verifier bounds a
 * read by its offset only, which a comparison of two pointers into the
 * value does not narrow.  So with bounded set (a constant at each call)
 * each header's offset from the frame's start is also clamped to
 * FS_HDR_COPY, the most ever copied, before the header is read: the buffer
 * holds FS_HDR_COPY + FS_HDR_SLACK bytes, more than any header read at
 * such an offset, and a header past FS_HDR_COPY is past data_end anyway,
 * so the clamp gives the very reason the data_end check would.  In place
 * the clamp is compiled out.  tests/unit/test_parse_copy.c runs both on
 * the same frames and wants the same key or reason every time.
 *
 * The headers are declared here rather than taken from vmlinux.h: wire
 * formats are fixed, and vmlinux.h types carry CO-RE relocations (and
 * bitfields such as ihl and doff) that have no business on packet data.
 */
#ifndef FLOWSKETCH_PARSE_BPF_H
#define FLOWSKETCH_PARSE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "flowsketch/flow_key.h"
#include "flowsketch/hash.h"
#include "flowsketch/maps.h"

#define FS_ETH_P_IPV4 0x0800
#define FS_ETH_P_IPV6 0x86dd
#define FS_ETH_P_8021Q 0x8100
#define FS_ETH_P_8021AD 0x88a8

#define FS_IPPROTO_HOPOPTS 0
#define FS_IPPROTO_ICMP 1
#define FS_IPPROTO_TCP 6
#define FS_IPPROTO_UDP 17
#define FS_IPPROTO_ROUTING 43
#define FS_IPPROTO_FRAGMENT 44
#define FS_IPPROTO_AH 51
#define FS_IPPROTO_ICMPV6 58
#define FS_IPPROTO_DSTOPTS 60

/* Bytes of headers a tracepoint frontend copies, and the buffer's slack
 * past them (more than the largest header read, IPv6's 40 bytes). */
#define FS_HDR_COPY 256
#define FS_HDR_SLACK 64

/* VLAN tags walked for the flow key; one more is FS_STAT_VLAN_DEPTH. */
#define FS_VLAN_MAX_DEPTH 2
/* VLAN tags walked to find the source for the blocklist's verdict; one
 * more leaves the frame unjudged ("Deep VLAN stacks" below). */
#define FS_VLAN_VERDICT_DEPTH 8
/* IPv6 extension headers walked; one more is FS_STAT_IPV6_EXT_CHAIN.  Real
 * traffic rarely has more than two (hop-by-hop + fragment). */
#define FS_IPV6_MAX_EXT 6

#define FS_IPV4_FRAG_OFFSET 0x1fff	/* frag_off: offset in 8-byte units */
#define FS_IPV6_FRAG_OFFSET 0xfff8	/* fragment header: offset << 3 */

struct fs_eth_hdr {
	__u8 dst[6];
	__u8 src[6];
	__be16 proto;
};

struct fs_vlan_hdr {
	__be16 tci;
	__be16 proto;		/* EtherType of what follows the tag */
};

struct fs_ipv4_hdr {
	__u8 version_ihl;	/* version << 4 | header length in words */
	__u8 tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;	/* flags (3 bits) | offset (13 bits) */
	__u8 ttl;
	__u8 protocol;
	__be16 check;
	__be32 saddr;
	__be32 daddr;
};

/* Addresses as 64-bit words: two loads each instead of sixteen. */
struct fs_ipv6_hdr {
	__be32 version_tc_flow;
	__be16 payload_len;
	__u8 nexthdr;
	__u8 hop_limit;
	__u64 saddr[2];
	__u64 daddr[2];
};

/* Hop-by-hop, routing, destination options and AH start alike; all are
 * at least 8 bytes long (RFC 8200 section 4, RFC 4302). */
struct fs_ipv6_ext_hdr {
	__u8 nexthdr;
	__u8 hdrlen;
	__u8 rest[6];
};

struct fs_ipv6_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;	/* offset << 3 | res (2 bits) | M */
	__be32 id;
};

struct fs_tcp_hdr {
	__be16 source;
	__be16 dest;
	__be32 seq;
	__be32 ack_seq;
	__u8 doff_res;		/* data offset << 4: header length in words */
	__u8 flags;
	__be16 window;
	__be16 check;
	__be16 urg_ptr;
};

struct fs_udp_hdr {
	__be16 source;
	__be16 dest;
	__be16 len;
	__be16 check;
};

/* ICMP and ICMPv6 share the first 8 bytes' shape: type, code, checksum,
 * then 4 bytes that depend on the type. */
struct fs_icmp_hdr {
	__u8 type;
	__u8 code;
	__be16 check;
	__be32 rest;
};

/*
 * Before reading a header at *p of a copied frame (bounded): its offset
 * from the frame's start clamped to FS_HDR_COPY, in a register the
 * compiler may not fold back into *p (or the verifier never sees the
 * bound).  1 when past it: the header is not in the frame.
 */
static __always_inline int fs_hdr_past(const int bounded, void *base, void **p)
{
	__u64 off;

	if (!bounded)
		return 0;
	off = (__u64)(*p - base);
	asm volatile("" : "+r"(off));
	if (off > FS_HDR_COPY)
		return 1;
	*p = base + off;
	return 0;
}

/*
 * Transport header at l4, room bytes of IP packet from there: ports for
 * TCP and UDP, (type, code) in the dport bytes for the family's ICMP,
 * nothing for any other protocol.
 */
static __always_inline int fs_parse_l4(void *l4, void *data_end, __u32 room,
				       struct fs_flow_key *key, __u8 icmp_proto,
				       const int bounded, void *base)
{
	__u8 proto = key->proto;

	/* The clamp inside each branch: the verifier follows one path and
	 * does not know that two tests of proto agree. */
	if (proto == FS_IPPROTO_TCP) {
		struct fs_tcp_hdr *th;
		__u32 doff;

		if (fs_hdr_past(bounded, base, &l4))
			return FS_STAT_TRUNC_L4;
		th = l4;
		if ((void *)(th + 1) > data_end || room < sizeof(*th))
			return FS_STAT_TRUNC_L4;
		doff = th->doff_res >> 4;
		if (doff < 5)
			return FS_STAT_BAD_TCP_DOFF;
		if (l4 + doff * 4 > data_end || room < doff * 4)
			return FS_STAT_TRUNC_L4;
		key->sport = th->source;
		key->dport = th->dest;
	} else if (proto == FS_IPPROTO_UDP) {
		struct fs_udp_hdr *uh;

		if (fs_hdr_past(bounded, base, &l4))
			return FS_STAT_TRUNC_L4;
		uh = l4;
		if ((void *)(uh + 1) > data_end || room < sizeof(*uh))
			return FS_STAT_TRUNC_L4;
		key->sport = uh->source;
		key->dport = uh->dest;
	} else if (proto == icmp_proto) {
		struct fs_icmp_hdr *ih;

		if (fs_hdr_past(bounded, base, &l4))
			return FS_STAT_TRUNC_L4;
		ih = l4;
		if ((void *)(ih + 1) > data_end || room < sizeof(*ih))
			return FS_STAT_TRUNC_L4;
		/* type << 8 | code in network order is the two bytes as
		 * they are on the wire. */
		key->dport = *(__be16 *)ih;
	}
	return 0;
}

static __always_inline int fs_parse_ipv4(void *l3, void *data_end,
					 struct fs_flow_key *key,
					 int *nonfirst_frag, const int bounded,
					 void *base)
{
	struct fs_ipv4_hdr *iph;
	__u32 hlen, tot_len;

	if (fs_hdr_past(bounded, base, &l3))
		return FS_STAT_TRUNC_IPV4;
	iph = l3;
	if ((void *)(iph + 1) > data_end)
		return FS_STAT_TRUNC_IPV4;
	/* An IPv4 EtherType carrying another version is not IPv4. */
	if ((iph->version_ihl >> 4) != 4)
		return FS_STAT_NON_IP;
	hlen = (iph->version_ihl & 0xf) * 4;
	if (hlen < sizeof(*iph) || l3 + hlen > data_end)
		return FS_STAT_BAD_IHL;
	tot_len = bpf_ntohs(iph->tot_len);
	if (tot_len < hlen)
		return FS_STAT_BAD_IPV4_LEN;

	key->family = FS_FAMILY_IPV4;
	key->proto = iph->protocol;
	*(fs_alias_u32 *)key->src = iph->saddr;
	*(fs_alias_u32 *)key->dst = iph->daddr;
	if (iph->frag_off & bpf_htons(FS_IPV4_FRAG_OFFSET)) {
		*nonfirst_frag = 1;
		return 0;
	}
	return fs_parse_l4(l3 + hlen, data_end, tot_len - hlen, key,
			   FS_IPPROTO_ICMP, bounded, base);
}

static __always_inline int fs_ipv6_is_ext(__u8 nexthdr)
{
	return nexthdr == FS_IPPROTO_HOPOPTS || nexthdr == FS_IPPROTO_ROUTING ||
	       nexthdr == FS_IPPROTO_FRAGMENT || nexthdr == FS_IPPROTO_AH ||
	       nexthdr == FS_IPPROTO_DSTOPTS;
}

static __always_inline int fs_parse_ipv6(void *l3, void *data_end,
					 struct fs_flow_key *key,
					 int *nonfirst_frag, const int bounded,
					 void *base)
{
	struct fs_ipv6_hdr *ip6;
	void *cur;
	__u32 room;
	__u8 nexthdr;
	int i;

	if (fs_hdr_past(bounded, base, &l3))
		return FS_STAT_TRUNC_IPV6;
	ip6 = l3;
	cur = ip6 + 1;
	if ((void *)(ip6 + 1) > data_end)
		return FS_STAT_TRUNC_IPV6;
	if ((bpf_ntohl(ip6->version_tc_flow) >> 28) != 6)
		return FS_STAT_NON_IP;

	key->family = FS_FAMILY_IPV6;
	((fs_alias_u64 *)key->src)[0] = ip6->saddr[0];
	((fs_alias_u64 *)key->src)[1] = ip6->saddr[1];
	((fs_alias_u64 *)key->dst)[0] = ip6->daddr[0];
	((fs_alias_u64 *)key->dst)[1] = ip6->daddr[1];
	nexthdr = ip6->nexthdr;
	room = bpf_ntohs(ip6->payload_len);
	if (!room)
		room = 0xffffffff;

FS_UNROLL
	for (i = 0; i < FS_IPV6_MAX_EXT; i++) {
		struct fs_ipv6_ext_hdr *eh;
		__u32 len;

		if (!fs_ipv6_is_ext(nexthdr))
			break;
		if (fs_hdr_past(bounded, base, &cur))
			return FS_STAT_TRUNC_IPV6_EXT;
		eh = cur;
		if ((void *)(eh + 1) > data_end || room < sizeof(*eh))
			return FS_STAT_TRUNC_IPV6_EXT;
		if (nexthdr == FS_IPPROTO_FRAGMENT) {
			struct fs_ipv6_frag_hdr *fh = cur;

			if (fh->frag_off & bpf_htons(FS_IPV6_FRAG_OFFSET)) {
				key->proto = fh->nexthdr;
				*nonfirst_frag = 1;
				return 0;
			}
			len = sizeof(*fh);
		} else if (nexthdr == FS_IPPROTO_AH) {
			len = ((__u32)eh->hdrlen + 2) * 4;	/* RFC 4302 */
		} else {
			len = ((__u32)eh->hdrlen + 1) * 8;	/* RFC 8200 */
		}
		if (cur + len > data_end || room < len)
			return FS_STAT_TRUNC_IPV6_EXT;
		nexthdr = eh->nexthdr;
		cur += len;
		room -= len;
	}
	if (fs_ipv6_is_ext(nexthdr))
		return FS_STAT_IPV6_EXT_CHAIN;

	key->proto = nexthdr;
	return fs_parse_l4(cur, data_end, room, key, FS_IPPROTO_ICMPV6,
			   bounded, base);
}

/*
 * Deep VLAN stacks.  A frame with more tags than the key walks is not
 * keyed (FS_STAT_VLAN_DEPTH), but the host's stack may still deliver it as
 * IP: __netif_receive_skb_core() strips an outer priority tag (VID 0) and
 * looks again, as often as there are such tags, and a tag whose VID has a
 * VLAN device moves the frame to that device and goes round again.  So a
 * blocked source could send IPv4 behind three priority tags and be
 * delivered, had the verdict needed a key.  Two rules close that:
 *
 *   - up to FS_VLAN_VERDICT_DEPTH tags are walked for the verdict only:
 *     a whole IPv4 or IPv6 header behind them gives key->family and
 *     key->src (nothing else), so the datapath judges the source as it
 *     judges any malformed IP packet, and counts the frame as vlan_depth,
 *     unsketched as before.  Traffic from sources no entry covers passes,
 *     however many tags (up to the bound) it carries.
 *   - a frame with more tags than that is counted as vlan_depth too, with
 *     key->family FS_FAMILY_UNJUDGED: its source is not read, and the
 *     datapath drops it while a blocklist is in force (counted in
 *     fs_block_stats.unjudged), passes it otherwise.  (Not a reason of
 *     its own: fs_stats keeps its size, since a daemon adopts a pinned
 *     datapath only with exactly its counters, loader.c.)
 *
 * Why a bound and a drop rather than a longer walk: the stack's loop has
 * no bound at all (a 1500-byte frame holds 370 tags), the verifier needs
 * one, and a tag costs four bytes an attacker controls.  Why 8: QinQ uses
 * two, no deployed encapsulation stacks eight, and 8 * 4 bytes keep the
 * IPv6 header inside what the tracepoint frontends copy.  Tags and
 * headers past a truncation are not there to judge: such a frame stays
 * vlan_depth with no family (and the stack does not deliver a truncated
 * IP header either).
 */

/* The source address of a whole IPv4 or IPv6 header at l3 into *key (and
 * the family); nothing for anything else. */
static __always_inline void fs_parse_src_only(void *l3, void *data_end,
					      __be16 proto, struct fs_flow_key *key,
					      const int bounded, void *base)
{
	if (proto == bpf_htons(FS_ETH_P_IPV4)) {
		struct fs_ipv4_hdr *iph;

		if (fs_hdr_past(bounded, base, &l3))
			return;
		iph = l3;
		if ((void *)(iph + 1) > data_end || (iph->version_ihl >> 4) != 4)
			return;
		key->family = FS_FAMILY_IPV4;
		*(fs_alias_u32 *)key->src = iph->saddr;
	} else if (proto == bpf_htons(FS_ETH_P_IPV6)) {
		struct fs_ipv6_hdr *ip6;

		if (fs_hdr_past(bounded, base, &l3))
			return;
		ip6 = l3;
		if ((void *)(ip6 + 1) > data_end ||
		    (bpf_ntohl(ip6->version_tc_flow) >> 28) != 6)
			return;
		key->family = FS_FAMILY_IPV6;
		((fs_alias_u64 *)key->src)[0] = ip6->saddr[0];
		((fs_alias_u64 *)key->src)[1] = ip6->saddr[1];
	}
}

/* Past the key's FS_VLAN_MAX_DEPTH tags, at cur, with proto announcing
 * another: walk on for the verdict ("Deep VLAN stacks").  A loop of its
 * own: folded into fs_parse_frame()'s, clang keeps more live across it
 * and the tracepoint frontends' stack passes 512 bytes. */
static __always_inline int fs_parse_deep_vlan(void *cur, void *data_end,
					      __be16 proto, struct fs_flow_key *key,
					      const int bounded, void *base)
{
	int i;

FS_UNROLL
	for (i = FS_VLAN_MAX_DEPTH; i < FS_VLAN_VERDICT_DEPTH + 1; i++) {
		struct fs_vlan_hdr *vh;

		if (proto != bpf_htons(FS_ETH_P_8021Q) &&
		    proto != bpf_htons(FS_ETH_P_8021AD))
			break;
		if (i == FS_VLAN_VERDICT_DEPTH) {
			key->family = FS_FAMILY_UNJUDGED;
			return FS_STAT_VLAN_DEPTH;
		}
		if (fs_hdr_past(bounded, base, &cur))
			return FS_STAT_VLAN_DEPTH;
		vh = cur;
		if ((void *)(vh + 1) > data_end)
			return FS_STAT_VLAN_DEPTH;
		proto = vh->proto;
		cur = vh + 1;
	}
	fs_parse_src_only(cur, data_end, proto, key, bounded, base);
	return FS_STAT_VLAN_DEPTH;
}

/*
 * Fill *key from the frame [data, data_end).  Returns 0 or an FS_STAT_*
 * reason; *nonfirst_frag is set to 1 for a non-first fragment (keyed with
 * ports 0), left alone otherwise.  bounded: data is a copy in a map value
 * of at most FS_HDR_COPY bytes (header comment).
 */
static __always_inline int fs_parse_frame(void *data, void *data_end,
					  struct fs_flow_key *key,
					  int *nonfirst_frag, const int bounded)
{
	struct fs_eth_hdr *eth = data;
	void *cur = eth + 1;
	__be16 proto;
	int i;

	__builtin_memset(key, 0, sizeof(*key));
	if ((void *)(eth + 1) > data_end)
		return FS_STAT_TRUNC_ETH;
	proto = eth->proto;

FS_UNROLL
	for (i = 0; i < FS_VLAN_MAX_DEPTH + 1; i++) {
		struct fs_vlan_hdr *vh;

		if (proto != bpf_htons(FS_ETH_P_8021Q) &&
		    proto != bpf_htons(FS_ETH_P_8021AD))
			break;
		if (i == FS_VLAN_MAX_DEPTH)
			return fs_parse_deep_vlan(cur, data_end, proto, key,
						  bounded, data);
		if (fs_hdr_past(bounded, data, &cur))
			return FS_STAT_TRUNC_VLAN;
		vh = cur;
		if ((void *)(vh + 1) > data_end)
			return FS_STAT_TRUNC_VLAN;
		proto = vh->proto;
		cur = vh + 1;
	}

	if (proto == bpf_htons(FS_ETH_P_IPV4))
		return fs_parse_ipv4(cur, data_end, key, nonfirst_frag, bounded, data);
	if (proto == bpf_htons(FS_ETH_P_IPV6))
		return fs_parse_ipv6(cur, data_end, key, nonfirst_frag, bounded, data);
	return FS_STAT_NON_IP;
}

/* A frame in place (XDP). */
static __always_inline int fs_parse(void *data, void *data_end,
				    struct fs_flow_key *key, int *nonfirst_frag)
{
	return fs_parse_frame(data, data_end, key, nonfirst_frag, 0);
}

/* A frame's first len <= FS_HDR_COPY bytes, copied into buf, a map value
 * of FS_HDR_COPY + FS_HDR_SLACK bytes. */
static __always_inline int fs_parse_copy(void *buf, __u32 len,
					 struct fs_flow_key *key, int *nonfirst_frag)
{
	if (len > FS_HDR_COPY)
		len = FS_HDR_COPY;
	return fs_parse_frame(buf, buf + len, key, nonfirst_frag, 1);
}

#endif /* FLOWSKETCH_PARSE_BPF_H */
