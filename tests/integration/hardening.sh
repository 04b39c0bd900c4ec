#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# hardening.sh - the programs are built hardened (Makefile, HARDEN_*):
# read from the ELF files themselves with readelf, not from the Makefile.
#
#   PIE         the file is ET_DYN and has a program interpreter (an
#               executable, not a shared library), so ASLR moves its code
#   full RELRO  a GNU_RELRO segment, and BIND_NOW (DT_FLAGS BIND_NOW or
#               DT_FLAGS_1 NOW): every relocation is resolved at start and
#               the GOT is read-only from then on
#   canaries    __stack_chk_fail imported (-fstack-protector-strong)
#   fortify     glibc's checked calls (__*_chk) imported (_FORTIFY_SOURCE)
#
# And the BPF objects (clang -target bpf) must have none of it: no
# reference to __stack_chk_fail or a __*_chk call, which the verifier could
# not resolve.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/tap.sh
B=${BUILD:-build}	# another build: BUILD=DIR

command -v readelf >/dev/null || bail "readelf is installed (binutils)"

for prog in "$B/flowsketchd" "$B/flowsketch"; do
	[ -f "$prog" ] || bail "$prog is built (run make)"
	hdr=$(readelf -hW "$prog") && phdr=$(readelf -lW "$prog") &&
		dyn=$(readelf -dW "$prog") && syms=$(readelf --dyn-syms -W "$prog") ||
		bail "readelf reads $prog"
	type=$(awk '/^ *Type:/ { print $2 }' <<<"$hdr")
	check "$prog: PIE (ELF type $type, with a program interpreter)" \
		eval '[ "$type" = DYN ] && grep -q "^ *INTERP " <<<"$phdr"'
	check "$prog: a GNU_RELRO segment" grep -q '^ *GNU_RELRO ' <<<"$phdr"
	check "$prog: BIND_NOW (full RELRO: the GOT is read-only once loaded)" \
		grep -Eq '\(FLAGS\) .*BIND_NOW|\(FLAGS_1\) .*Flags:.* NOW' <<<"$dyn"
	# Undefined (UND) dynamic symbols: what the program imports.
	imports=$(awk '$7 == "UND" { sub(/@.*/, "", $8); print $8 }' <<<"$syms" | sort -u)
	check "$prog: stack canaries (__stack_chk_fail imported)" \
		grep -qx '__stack_chk_fail' <<<"$imports"
	chk=$(grep -Ex '__[a-z0-9_]+_chk' <<<"$imports" | grep -vx '__stack_chk_fail' | tr '\n' ' ')
	check "$prog: _FORTIFY_SOURCE (checked calls imported: ${chk:-none})" [ -n "$chk" ]
done

n=0
for obj in "$B"/bpf/*.bpf.o; do
	[ -f "$obj" ] || continue
	n=$((n + 1))
	if readelf -sW "$obj" 2>/dev/null | grep -Eq ' (__stack_chk_fail|__[a-z0-9_]+_chk)$'; then
		not_ok "$obj: no canary or fortify call (BPF_CFLAGS stay unhardened)"
	fi
done
check "the $n BPF objects reference no canary or fortify call" [ "$n" -gt 0 ]
finish
