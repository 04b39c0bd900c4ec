#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The flowsketch kernel module, tested inside a VM (the host kernel cannot
# load modules; see /work/shared/PLATFORM.md).  Prints TAP lines.
#
# On the host: build the module with BTF against Debian's 6.12 headers and
# check what modinfo says about it; build the static test program and the
# initramfs (tests/vm/lib.sh).  In the VM (tests/vm/vmtest.c): insmod, the
# kfunc in /sys/kernel/btf, both datapath paths compared byte for byte with
# each other and with the user-space model, the egress frontend's two
# paths on live lo traffic from both of the VM's CPUs (test_egress.c),
# 50 load/unload cycles under traffic, flowsketchd and the CLI counting
# real traffic on each path (tests/vm/test_daemon.c), and a clean kernel
# log.  The VM's own lines come back without numbers and are numbered
# here.
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh
. scripts/tap.sh

# Packages (qemu, busybox-static, the 6.12 image and headers, zstd, cpio,
# kmod) come from the one list in scripts/deps.sh.
./scripts/deps.sh >&2 || bail "the VM's packages are installed (scripts/deps.sh)"

log=$VM_DIR/build.log
mkdir -p "$VM_DIR"
if vm_build_module > "$log" 2>&1; then
	ok "kmod/flowsketch.ko builds against $VM_KVER with BTF"
else
	sed 's/^/# /' "$log"
	bail "kmod/flowsketch.ko builds against $VM_KVER with BTF"
fi

# The module has no parameters (main.c says why); any it grows must be
# described for operators.
info=$(/sbin/modinfo kmod/flowsketch.ko)
undescribed=$(echo "$info" | awk '$1 == "parm:" && $0 !~ /parm: *[^:]+:[^ ]/ { print $2 }')
if echo "$info" | grep -q '^license: *Dual BSD/GPL$' &&
   echo "$info" | grep -q '^author: *flowsketch$' &&
   echo "$info" | grep -q '^description: *flowsketch' &&
   [ -z "$undescribed" ]; then
	ok "modinfo gives license, author, description and describes every parameter"
else
	echo "$info" | sed 's/^/# /'
	not_ok "modinfo gives license, author, description and describes every parameter"
fi

# The module as operators install it: dkms add and dkms build, with a
# private DKMS and source tree (--dkmstree, --sourcetree) so that the
# host's /var/lib/dkms and /usr/src stay as they were, against the BTF
# capable 6.12 tree (--kernelsourcedir): the built module must carry the
# .BTF section its kfunc needs.
dkms_root=$PWD/$VM_DIR/dkms
rm -rf "$dkms_root"
if (
	set -e
	PACKAGE_NAME=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' kmod/dkms.conf)
	PACKAGE_VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' kmod/dkms.conf)
	kver=$(cat "$VM_DIR/kdir/include/config/kernel.release")
	dk="--dkmstree $dkms_root/tree --sourcetree $dkms_root/src"
	mkdir -p "$dkms_root/tree"
	kmod/dkms-source.sh "$dkms_root/src/$PACKAGE_NAME-$PACKAGE_VERSION"
	# shellcheck disable=SC2086
	dkms add $dk -m "$PACKAGE_NAME" -v "$PACKAGE_VERSION"
	# shellcheck disable=SC2086
	dkms build $dk -m "$PACKAGE_NAME" -v "$PACKAGE_VERSION" -k "$kver" \
		--kernelsourcedir "$PWD/$VM_DIR/kdir"
	ko=$(find "$dkms_root/tree/$PACKAGE_NAME/$PACKAGE_VERSION/$kver" -name "$PACKAGE_NAME.ko*")
	case $ko in
	*.xz) xz -dc "$ko" > "$dkms_root/built.ko" ;;
	*.zst) zstd -qdc "$ko" > "$dkms_root/built.ko" ;;
	*) cp "$ko" "$dkms_root/built.ko" ;;
	esac
	readelf -S "$dkms_root/built.ko" | grep -q '\.BTF '
) > "$log" 2>&1; then
	ok "dkms add and dkms build make the module, with BTF, from dkms.conf"
else
	sed 's/^/# /' "$log"
	not_ok "dkms add and dkms build make the module, with BTF, from dkms.conf"
fi

if (vm_build_program && vm_build_initramfs) > "$log" 2>&1; then
	ok "static test program and initramfs build"
else
	sed 's/^/# /' "$log"
	bail "static test program and initramfs build"
fi

out=$VM_DIR/console.log
start=$(date +%s)
vm_boot test > "$out" 2>&1
rc=$?
secs=$(($(date +%s) - start))

# Relay the VM's TAP lines with numbers, its comments as they are.
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	"# "*) echo "$line" ;;
	esac
done < "$out"

if grep -q '^# FS_VM_DONE' "$out" && grep -q '^# vmtest exited 0$' "$out"; then
	ok "VM ran the tests to the end in ${secs}s"
else
	tail -n 60 "$out" | sed 's/^/# console: /'
	not_ok "VM ran the tests to the end (qemu exit $rc after ${secs}s; console in $out)"
fi

finish
