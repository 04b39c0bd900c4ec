// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* stat_names.c - the datapath counters' names (stat_names.h). */
#include "stat_names.h"

const struct fs_stat_name fs_malformed_reasons[] = {
	{ FS_STAT_TRUNC_ETH, "trunc_eth" },
	{ FS_STAT_TRUNC_VLAN, "trunc_vlan" },
	{ FS_STAT_VLAN_DEPTH, "vlan_depth" },
	{ FS_STAT_TRUNC_IPV4, "trunc_ipv4" },
	{ FS_STAT_BAD_IHL, "bad_ihl" },
	{ FS_STAT_BAD_IPV4_LEN, "bad_ipv4_len" },
	{ FS_STAT_TRUNC_IPV6, "trunc_ipv6" },
	{ FS_STAT_TRUNC_IPV6_EXT, "trunc_ipv6_ext" },
	{ FS_STAT_IPV6_EXT_CHAIN, "ipv6_ext_chain" },
	{ FS_STAT_TRUNC_L4, "trunc_l4" },
	{ FS_STAT_BAD_TCP_DOFF, "bad_tcp_doff" },
	{ FS_STAT_SKB_NONLINEAR, "skb_nonlinear" },
};

const size_t fs_malformed_reasons_n =
	sizeof(fs_malformed_reasons) / sizeof(fs_malformed_reasons[0]);

_Static_assert(FS_STAT_MAX == 19,
	       "a new fs_stat: list it above if it is a malformed reason");
