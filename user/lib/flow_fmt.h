/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * flow_fmt.h - a flow key (flow_key.h) in the words people read.
 *
 * Addresses in their usual text form (inet_ntop), protocols by the name
 * /etc/protocols gives them, from a fixed table so that the output does
 * not depend on the host's files.
 */
#ifndef FLOWSKETCH_FLOW_FMT_H
#define FLOWSKETCH_FLOW_FMT_H

#include <stddef.h>
#include "flowsketch/flow_key.h"

/* Long enough for any address flow_fmt prints (INET6_ADDRSTRLEN). */
#define FS_ADDR_STR_MAX 46

/* The address in text form into buf; -EINVAL for an unknown family. */
int fs_addr_str(__u8 family, const __u8 addr[16], char *buf, size_t len);

/* "tcp", "udp", "icmp", ... or NULL for a protocol without a name here.
 * ICMP for IPv6 is protocol 58, "ipv6-icmp" in /etc/protocols: printed
 * as "icmpv6", as tcpdump and ss do. */
const char *fs_proto_name(__u8 proto);

/* Name or, when it has none, the decimal number; buf of 4+ bytes. */
const char *fs_proto_str(__u8 proto, char *buf, size_t len);

/* Source and destination ports in host order (0 when there are none;
 * for ICMP the destination port holds type << 8 | code). */
__u16 fs_flow_sport(const struct fs_flow_key *key);
__u16 fs_flow_dport(const struct fs_flow_key *key);

#endif /* FLOWSKETCH_FLOW_FMT_H */
