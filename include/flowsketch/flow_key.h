/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * flow_key.h - the one flow key of flowsketch, for IPv4 and IPv6 alike.
 *
 * Layout (40 bytes; the hash reads it as ten little-endian 32-bit chunks):
 *
 *   off size field
 *     0    1 family   FS_FAMILY_IPV4 (4) or FS_FAMILY_IPV6 (6)
 *     1    1 proto    IP protocol / IPv6 upper-layer next header
 *     2    2 pad      always zero (the hash reads it)
 *     4    2 sport    source port, network byte order; 0 when the protocol
 *                     has no ports, or for a non-first fragment
 *     6    2 dport    destination port, network byte order; for ICMP and
 *                     ICMPv6 it carries (type << 8 | code) in network order
 *                     so that echo and unreachables are told apart
 *     8   16 src      source address; IPv4 in bytes 0..3, bytes 4..15 zero
 *    24   16 dst      destination address, same rule
 *
 * Every byte is defined (no compiler padding, pad zeroed) so that a key
 * hashes to the same value whoever built it: the datapath, the kernel
 * module, the daemon and a test that writes a key by hand.
 */
#ifndef FLOWSKETCH_FLOW_KEY_H
#define FLOWSKETCH_FLOW_KEY_H

#include "compat.h"

#define FS_FAMILY_IPV4 4
#define FS_FAMILY_IPV6 6
/* Never a flow key's: the parser's mark on a frame it could not key nor
 * judge (bpf/parse.bpf.h, "Deep VLAN stacks"), which is never sketched. */
#define FS_FAMILY_UNJUDGED 0xff

struct fs_flow_key {
	__u8 family;
	__u8 proto;
	__u16 pad;
	__be16 sport;
	__be16 dport;
	__u8 src[16];
	__u8 dst[16];
};

_Static_assert(sizeof(struct fs_flow_key) == 40, "flow key is ten 32-bit chunks");

#endif /* FLOWSKETCH_FLOW_KEY_H */
