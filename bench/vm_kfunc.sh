#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Per-packet cost of the kernel module's kfunc path against the pure-BPF
# path, both measured in one boot of the test VM (tests/vm/bench.c); run
# from bench/run.sh or by hand.
#
# The VM is software-emulated (qemu TCG, no KVM on these hosts): every
# instruction is translated, so absolute nanoseconds say nothing about real
# hardware; only the ratio between the two paths, measured side by side in
# the same run, means anything.
set -u
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

log=$VM_DIR/bench-build.log
mkdir -p "$VM_DIR"
if ! vm_build > "$log" 2>&1; then
	cat "$log" >&2
	echo "vm_kfunc: cannot build the VM test program; see above." >&2
	exit 1
fi
out=$VM_DIR/bench-console.log
vm_boot bench > "$out" 2>&1

declare -A ns
while read -r tag name value; do
	[ "$tag" = "bench:" ] && ns[$name]=$value
done < "$out"
for k in datapath_bpf_ns datapath_kfunc_ns update_bpf_ns update_kfunc_ns testrun_pass_ns; do
	if [ -z "${ns[$k]:-}" ]; then
		grep -E '^(not ok|# )' "$out" >&2
		echo "vm_kfunc: the VM did not report $k; console in $out." >&2
		exit 1
	fi
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
net() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }

dp_bpf=$(net "${ns[datapath_bpf_ns]}" "${ns[testrun_pass_ns]}")
dp_kf=$(net "${ns[datapath_kfunc_ns]}" "${ns[testrun_pass_ns]}")
up_bpf=$(net "${ns[update_bpf_ns]}" "${ns[testrun_pass_ns]}")
up_kf=$(net "${ns[update_kfunc_ns]}" "${ns[testrun_pass_ns]}")

echo "kfunc vs pure BPF, per packet, in one software-emulated VM (qemu TCG):"
echo "only the ratios mean anything; absolute times are emulator times."
printf '  %-34s %10s %10s %8s\n' "" "BPF ns" "kfunc ns" "BPF/kfunc"
printf '  %-34s %10s %10s %8s\n' "XDP datapath (parse + update)" \
	"${ns[datapath_bpf_ns]}" "${ns[datapath_kfunc_ns]}" \
	"$(ratio "${ns[datapath_bpf_ns]}" "${ns[datapath_kfunc_ns]}")"
printf '  %-34s %10s %10s %8s\n' "  minus test-run overhead" \
	"$dp_bpf" "$dp_kf" "$(ratio "$dp_bpf" "$dp_kf")"
printf '  %-34s %10s %10s %8s\n' "sketch update alone" \
	"${ns[update_bpf_ns]}" "${ns[update_kfunc_ns]}" \
	"$(ratio "${ns[update_bpf_ns]}" "${ns[update_kfunc_ns]}")"
printf '  %-34s %10s %10s %8s\n' "  minus test-run overhead" \
	"$up_bpf" "$up_kf" "$(ratio "$up_bpf" "$up_kf")"
echo "  test-run overhead (XDP_PASS program): ${ns[testrun_pass_ns]} ns"
echo "vm_kfunc_ratio $(ratio "$dp_bpf" "$dp_kf")"
