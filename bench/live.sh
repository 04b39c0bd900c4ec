#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench/live.sh [fs-livebench options] - the live datapath benchmark:
# two namespaces of our own joined by a veth pair (scripts/netns.sh), then
# build/tools/fs-livebench, which attaches each benchmark program natively
# to the receiving end in turn and sends its own traffic from the other.
# Two more veth pairs join the same namespaces for its bursty phase (three
# pairs fed in turn, --pair), their ends with the first pair's MACs, so
# that every pair's receiver takes the same frames as its own.
# bench/live.sh --tracepoints [fs-tpbench options] - the same for the
# tracepoint frontends: build/tools/fs-tpbench attaches each egress
# program to what the sending end sends and each ingress one to what the
# receiving end receives (no XDP there), one at a time.
# Nothing leaves the two namespaces; both go (and with them the veths and
# any XDP program still attached) on every exit, signals included; the
# tracepoint programs' links are the tool's own and end with it.  The
# run-time statistics are enabled by the tool through BPF_ENABLE_STATS,
# which ends with the process: no sysctl is left changed.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh

fs_require_root
LIVE=build/tools/fs-livebench
if [ "${1:-}" = --tracepoints ]; then
	LIVE=build/tools/fs-tpbench
	shift
fi
if [ ! -x "$LIVE" ]; then
	echo "live.sh: $LIVE is missing; run make first." >&2
	exit 1
fi

NS_TX=fsb-tx-$$
NS_RX=fsb-rx-$$
cleanup() { fs_pair_destroy "$NS_TX" "$NS_RX"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if ! fs_pair_create "$NS_TX" "$NS_RX" lb-tx lb-rx; then
	echo "live.sh: cannot create the veth pair in namespaces $NS_TX, $NS_RX." >&2
	exit 1
fi
PAIRS=()
if [ "$LIVE" = build/tools/fs-livebench ]; then
	mac_tx=$(fs_mac "$NS_TX" lb-tx) && mac_rx=$(fs_mac "$NS_RX" lb-rx) || exit 1
	for i in 1 2; do
		if ! fs_veth_add "$NS_TX" "$NS_RX" "lb-tx$i" "lb-rx$i" ||
		   ! ip -n "$NS_TX" link set dev "lb-tx$i" address "$mac_tx" ||
		   ! ip -n "$NS_RX" link set dev "lb-rx$i" address "$mac_rx"; then
			echo "live.sh: cannot add veth pair $i for the bursty phase." >&2
			exit 1
		fi
		PAIRS+=(--pair "lb-tx$i:lb-rx$i")
	done
fi
"$LIVE" --tx-netns "$NS_TX" --tx-iface lb-tx --rx-netns "$NS_RX" --rx-iface lb-rx \
	"${PAIRS[@]}" "$@"
