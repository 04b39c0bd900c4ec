#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Lay out the DKMS source tree of the flowsketch module (see dkms.conf).
#
#   kmod/dkms-source.sh [DEST]     default /usr/src/flowsketch-VERSION
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/kmod/dkms.conf")
dest=${1:-/usr/src/flowsketch-$version}

if [ -e "$dest" ]; then
	echo "dkms-source: $dest already exists; remove it (dkms remove) first." >&2
	exit 1
fi
mkdir -p "$dest/kmod" "$dest/include/flowsketch"
cp "$repo/kmod/dkms.conf" "$dest/dkms.conf"
cp "$repo/Kbuild" "$dest/Kbuild"
cp "$repo"/kmod/Kbuild "$repo"/kmod/*.c "$repo"/kmod/*.h "$dest/kmod/"
cp "$repo"/include/flowsketch/*.h "$dest/include/flowsketch/"
echo "$dest"
