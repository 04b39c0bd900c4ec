#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Prepare a kbuild tree for Debian's 6.12 kernel that can build modules
# WITH BTF, and print its path.
#
#   tests/vm/prepare_kdir.sh [OUTDIR]      default build/vm/kdir
#
# Why: Kbuild generates module BTF (without which a module's kfuncs cannot
# be resolved by the verifier) only when an ELF `vmlinux` sits in the tree;
# Debian's headers package does not ship one.  We take it out of the
# bzImage in /boot: the setup header gives the payload offset (u32 at 0x248,
# relative to the end of the real-mode code, (setup_sects + 1) * 512 with
# setup_sects at 0x1f1) and the payload is a zstd frame.
#
# The headers tree links `scripts` and `tools` relatively into
# /usr/lib/linux-kbuild-*, so a copy elsewhere breaks them; the copy here
# gets absolute links instead.  Nothing under /usr/src is modified.  The
# result is cached: a second run with the tree in place only prints it.
set -euo pipefail

KVER=${FS_VM_KVER:-6.12.117+deb12}
FLAVOUR=amd64
HDRS=/usr/src/linux-headers-$KVER-$FLAVOUR
KBUILD=/usr/lib/linux-kbuild-$KVER
VMLINUZ=/boot/vmlinuz-$KVER-$FLAVOUR
OUT=${1:-build/vm/kdir}

die() { echo "prepare_kdir: $*" >&2; exit 1; }

[ -d "$HDRS" ] || die "$HDRS is missing; run scripts/deps.sh (linux-headers-6.12-amd64)."
[ -d "$KBUILD" ] || die "$KBUILD is missing; run scripts/deps.sh."
[ -r "$VMLINUZ" ] || die "$VMLINUZ is missing; run scripts/deps.sh (linux-image-6.12-amd64)."

if [ -s "$OUT/vmlinux" ] && [ -e "$OUT/scripts/Makefile.modfinal" ] &&
   [ "$OUT/vmlinux" -nt "$VMLINUZ" ]; then
	echo "$OUT"
	exit 0
fi

rm -rf "$OUT.tmp"
mkdir -p "$(dirname "$OUT")"
cp -a "$HDRS" "$OUT.tmp"
for l in scripts tools; do
	rm -f "$OUT.tmp/$l"
	ln -s "$KBUILD/$l" "$OUT.tmp/$l"
done

# u8 at 0x1f1; 0 means 4 for very old boot protocols.
setup_sects=$(od -An -tu1 -j $((0x1f1)) -N1 "$VMLINUZ" | tr -d ' ')
[ "$setup_sects" -eq 0 ] && setup_sects=4
payload_off=$(od -An -tu4 -j $((0x248)) -N4 "$VMLINUZ" | tr -d ' ')
payload_len=$(od -An -tu4 -j $((0x24c)) -N4 "$VMLINUZ" | tr -d ' ')
start=$(((setup_sects + 1) * 512 + payload_off))

# zstd warns about the 4-byte decompressed-size trailer the kernel appends;
# the ELF it writes is complete, so check the result rather than the status.
tail -c +$((start + 1)) "$VMLINUZ" | head -c "$payload_len" |
	zstd -d -q -c 2>/dev/null > "$OUT.tmp/vmlinux" || true
[ "$(head -c 4 "$OUT.tmp/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] ||
	die "could not extract an ELF vmlinux from $VMLINUZ."
# Not `readelf | grep -q` under pipefail: grep -q exits at the first
# match, readelf dies of SIGPIPE on the rest of its output and the pipeline
# fails although the section is there.  grep -c reads everything.
btf_sections=$(readelf -S "$OUT.tmp/vmlinux" | grep -c '\.BTF' || true)
[ "${btf_sections:-0}" -gt 0 ] ||
	die "the vmlinux from $VMLINUZ has no .BTF section."

rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
echo "$OUT"
