#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# netns.sh - namespace helpers for flowsketch's tests, demo and benchmarks.
# Source it; it defines functions only and changes nothing by itself.
#
#   fs_require_root                 exit 1 with a message unless root
#   fs_bpffs_mount                  mount bpffs on /sys/fs/bpf if missing
#   fs_pair_create NS_TX NS_RX TX RX
#                                   two namespaces joined by the veth pair
#                                   TX (in NS_TX) <-> RX (in NS_RX), up,
#                                   with no IP traffic of their own
#   fs_veth_add NS_TX NS_RX TX RX   one more such veth pair between them
#   fs_pair_destroy NS...           delete namespaces (and so the veths);
#                                   silent and safe to call twice
#   fs_rx_addresses NS IFACE DST4 DST6
#                                   IFACE in NS takes DST4 and DST6 (IPv6
#                                   on it alone, no DAD) and accepts any
#                                   source (rp_filter off): a receiver of
#                                   spoofed datagrams
#   fs_pair_addresses NS_TX NS_RX TX RX ADDR_TX ADDR_RX
#                                   ADDR_TX/24 on TX, ADDR_RX/24 on RX: a
#                                   pair that carries TCP between the two
#   fs_in NS CMD...                 run CMD in NS, keeping the host's /sys
#                                   (and so its bpffs pins)
#   fs_mac NS IFACE                 print IFACE's MAC address
#   fs_link_stat NS IFACE DIR FIELD print a 64-bit link counter, e.g.
#                                   fs_link_stat ns veth0 rx packets
#
# Why nsenter and not `ip netns exec`: the latter also unshares the mount
# namespace and mounts a fresh /sys, which hides the host's bpffs, so the
# daemon's pins would be private to it (see /work/shared/PLATFORM.md).
#
# "No IP traffic of their own": both veths have IPv6 disabled before they
# come up (no link-local address, no DAD, no router or MLD solicitations)
# and no IPv4 address (no ARP), so every IP frame the receiving end sees
# is one the test sent, and counters can be compared exactly.  The sending
# end gets a pfifo qdisc: veth's default noqueue drops a frame when the
# peer's XDP ring is full, whereas a qdisc makes it push back (stop the
# queue) and, once full itself, makes send() fail with ENOBUFS, which the
# generator retries.  Nothing is lost silently.

fs_require_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "$(basename "$0"): must run as root (namespaces, XDP, bpffs)." >&2
		exit 1
	fi
}

fs_bpffs_mount() {
	mountpoint -q /sys/fs/bpf 2>/dev/null || mount -t bpf bpf /sys/fs/bpf
}

fs_in() {
	local ns=$1; shift
	nsenter --net="/run/netns/$ns" "$@"
}

fs_rx_addresses() {
	local ns=$1 ifc=$2 dst4=$3 dst6=$4
	fs_in "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 "net.ipv4.conf.$ifc.rp_filter=0" \
		"net.ipv6.conf.$ifc.disable_ipv6=0" &&
	ip -n "$ns" addr add "$dst4/32" dev "$ifc" &&
	ip -n "$ns" addr add "$dst6/128" dev "$ifc" nodad
}

fs_pair_addresses() {
	fs_in "$1" ip addr add "$5/24" dev "$3" &&
	fs_in "$2" ip addr add "$6/24" dev "$4"
}

# Quiet a namespace before any interface enters it: interfaces moved in
# inherit net.ipv6.conf.default.
_fs_ns_quiet() {
	local ns=$1
	fs_in "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 &&
	fs_in "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 &&
	fs_in "$ns" sysctl -qw net.ipv6.conf.default.addr_gen_mode=1 &&
	fs_in "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 &&
	fs_in "$ns" sysctl -qw net.ipv6.conf.default.router_solicitations=0
}

fs_pair_create() {
	local ns_tx=$1 ns_rx=$2 tx=$3 rx=$4
	ip netns add "$ns_tx" || return 1
	ip netns add "$ns_rx" || return 1
	_fs_ns_quiet "$ns_tx" || return 1
	_fs_ns_quiet "$ns_rx" || return 1
	fs_veth_add "$ns_tx" "$ns_rx" "$tx" "$rx" || return 1
	ip -n "$ns_tx" link set dev lo up || return 1
	ip -n "$ns_rx" link set dev lo up
}

fs_veth_add() {
	local ns_tx=$1 ns_rx=$2 tx=$3 rx=$4
	ip link add "$tx" netns "$ns_tx" type veth peer name "$rx" netns "$ns_rx" &&
	ip -n "$ns_tx" link set dev "$tx" up &&
	ip -n "$ns_rx" link set dev "$rx" up &&
	tc -n "$ns_tx" qdisc replace dev "$tx" root pfifo limit 10000
}

fs_pair_destroy() {
	local ns
	for ns in "$@"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	return 0
}

fs_mac() {
	ip -n "$1" -j link show dev "$2" | jq -r '.[0].address'
}

fs_link_stat() {
	ip -n "$1" -s -j link show dev "$2" | jq -r ".[0].stats64.$3.$4"
}

# fs_daemon_stop PID: SIGTERM a daemon started in the background, give it
# five seconds to detach and unpin, then SIGKILL; reaps it either way.
fs_daemon_stop() {
	local pid=$1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}
