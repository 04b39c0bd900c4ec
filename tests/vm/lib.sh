# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# lib.sh - build and boot the flowsketch test VM; sourced by tests/vm/run.sh
# and bench/vm_kfunc.sh from the repository root.
#
#   vm_build          kbuild tree, module, test program, initramfs (in build/vm)
#   vm_boot MODE      boot it (MODE test or bench); serial output on stdout
#
# The VM runs Debian's 6.12 kernel under qemu with software emulation
# (TCG: KVM does not work on these hosts), two CPUs (so that per-CPU
# sketches are tested with more than one writer), and a busybox initramfs
# holding the module, a statically linked test program that embeds its
# BPF objects as skeletons, and static builds of flowsketchd and the
# flowsketch CLI.  See /work/shared/PLATFORM.md.

VM_KVER=6.12.117+deb12-amd64
VM_KERNEL=/boot/vmlinuz-$VM_KVER
VM_DIR=build/vm
VM_TIMEOUT=${FS_VM_TIMEOUT:-600}

vm_log() { echo "# $*"; }

# clang -target bpf does not search the multiarch include dirs (Makefile).
vm_bpf_cflags() {
	echo "-g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror" \
	     "-Wno-unused-function -Ibuild -Iinclude -Ibpf -Itests/vm" \
	     "$(clang -v -E - </dev/null 2>&1 | sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')"
}

vm_build_module() {
	local kdir

	kdir=$(tests/vm/prepare_kdir.sh "$VM_DIR/kdir") || return 1
	make --no-print-directory -s kmod KDIR="$PWD/$kdir" || return 1
	# Sourced by scripts whose shell options are theirs: no `| grep -q`,
	# which fails under pipefail when readelf dies of SIGPIPE.
	[ "$(readelf -S kmod/flowsketch.ko | grep -c '\.BTF ')" -gt 0 ] || {
		echo "vm: kmod/flowsketch.ko has no .BTF section" >&2
		return 1
	}
}

vm_build_program() {
	# shellcheck disable=SC2046
	make --no-print-directory -s build/vmlinux.h build/skel/flowsketch.skel.h \
		build/skel/egress.skel.h &&
	clang $(vm_bpf_cflags) -c tests/vm/kfunc_probe.bpf.c \
		-o "$VM_DIR/kfunc_probe.tmp.o" &&
	bpftool gen object "$VM_DIR/kfunc_probe.bpf.o" "$VM_DIR/kfunc_probe.tmp.o" &&
	bpftool gen skeleton "$VM_DIR/kfunc_probe.bpf.o" name kfunc_probe \
		> "$VM_DIR/kfunc_probe.skel.h" &&
	gcc -static -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser/lib -Ibuild/skel \
		-I"$VM_DIR" -Itests/vm -Itests/unit \
		$(ls tests/vm/*.c | grep -v '\.bpf\.c$') user/lib/model.c user/lib/datapath_setup.c \
		-lbpf -lelf -lz -ljson-c -lm -lpthread -o "$VM_DIR/vmtest" &&
	vm_build_daemon
}

# flowsketchd and flowsketch as the Makefile builds them, relinked
# statically from the same objects: the initramfs has no shared libraries.
vm_build_daemon() {
	local prog src objs extra

	make --no-print-directory -s build/flowsketchd build/flowsketch ||
		return 1
	for prog in flowsketchd flowsketch; do
		objs=()
		for src in user/"$prog"/*.c; do
			objs+=("build/${src%.c}.o")
		done
		# Each program's own libraries (the Makefile's CLI_LDLIBS),
		# then the common ones.
		case $prog in
		flowsketch) extra=(-lncursesw -ltinfo) ;;
		*) extra=() ;;
		esac
		gcc -static "${objs[@]}" build/libflowsketch.a "${extra[@]}" \
			-lbpf -lelf -lz -ljson-c -lm -o "$VM_DIR/$prog" || return 1
	done
}

vm_build_initramfs() {
	local root=$VM_DIR/initramfs
	local applet

	rm -rf "$root"
	mkdir -p "$root"/bin "$root"/proc "$root"/sys "$root"/dev "$root"/tmp
	cp /bin/busybox "$root/bin/busybox"
	for applet in sh mount dmesg grep sed cat poweroff; do
		ln -s busybox "$root/bin/$applet"
	done
	install -m 0755 tests/vm/init.sh "$root/init"
	cp "$VM_DIR/vmtest" "$VM_DIR/flowsketchd" "$VM_DIR/flowsketch" \
		kmod/flowsketch.ko "$root/"
	(cd "$root" && find . | cpio -o -H newc --quiet) > "$VM_DIR/initramfs.cpio"
}

vm_build() {
	mkdir -p "$VM_DIR"
	vm_build_module && vm_build_program && vm_build_initramfs
}

vm_boot() {
	timeout "$VM_TIMEOUT" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 \
		-nographic -no-reboot -kernel "$VM_KERNEL" \
		-initrd "$VM_DIR/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 quiet fs_mode=$1" </dev/null |
		tr -d '\r'
}
