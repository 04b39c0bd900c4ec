#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# /init of the test VM (packed by tests/vm/lib.sh): mount what BPF and the
# module need, run the test program in the mode given on the kernel
# command line (fs_mode=test|bench, which the kernel hands to init as an
# environment variable), check the kernel log, power off.  Everything the
# host needs comes back on the serial console.
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
# Kernel messages stay in the log, off the console, so that no TAP line is
# cut in two by one; the log is checked below.
dmesg -n 1

mode=${fs_mode:-test}
/vmtest "$mode" /flowsketch.ko
echo "# vmtest exited $?"

if [ "$mode" = test ]; then
	if dmesg | grep -wE 'Oops|WARNING|BUG|Call Trace' > /tmp/bad; then
		echo "not ok - kernel log has no Oops, WARNING, BUG or Call Trace"
		sed 's/^/# /' /tmp/bad
	else
		echo "ok - kernel log has no Oops, WARNING, BUG or Call Trace"
	fi
fi
echo "# FS_VM_DONE"
poweroff -f
