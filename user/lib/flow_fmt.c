// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* flow_fmt.c - flow keys as text (flow_fmt.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "flow_fmt.h"

static const struct {
	__u8 number;
	const char *name;
} proto_names[] = {
	{ 1, "icmp" },
	{ 2, "igmp" },
	{ 4, "ipip" },
	{ 6, "tcp" },
	{ 17, "udp" },
	{ 41, "ipv6" },
	{ 47, "gre" },
	{ 50, "esp" },
	{ 51, "ah" },
	{ 58, "icmpv6" },
	{ 89, "ospf" },
	{ 103, "pim" },
	{ 112, "vrrp" },
	{ 132, "sctp" },
	{ 136, "udplite" },
};

int fs_addr_str(__u8 family, const __u8 addr[16], char *buf, size_t len)
{
	int af;

	if (family == FS_FAMILY_IPV4)
		af = AF_INET;
	else if (family == FS_FAMILY_IPV6)
		af = AF_INET6;
	else
		return -EINVAL;
	if (!inet_ntop(af, addr, buf, len))
		return -errno;
	return 0;
}

const char *fs_proto_name(__u8 proto)
{
	size_t i;

	for (i = 0; i < FS_ARRAY_SIZE(proto_names); i++)
		if (proto_names[i].number == proto)
			return proto_names[i].name;
	return NULL;
}

const char *fs_proto_str(__u8 proto, char *buf, size_t len)
{
	const char *name = fs_proto_name(proto);

	if (name)
		return name;
	snprintf(buf, len, "%u", proto);
	return buf;
}

__u16 fs_flow_sport(const struct fs_flow_key *key)
{
	return ntohs(key->sport);
}

__u16 fs_flow_dport(const struct fs_flow_key *key)
{
	return ntohs(key->dport);
}
