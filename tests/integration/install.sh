#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# install.sh - `make install` puts the daemon, the CLI and the systemd unit
# where PREFIX and DESTDIR say, and what it installs runs.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2

t=0
failed=0
check() {
	local what=$1; shift
	t=$((t + 1))
	if "$@"; then echo "ok $t - $what"; else echo "not ok $t - $what"; failed=$((failed + 1)); fi
}

D=$(mktemp -d /tmp/fs-install.XXXXXX) || exit 1
trap 'rm -rf "$D"' EXIT

check "make install DESTDIR=... PREFIX=/usr succeeds" \
	make --no-print-directory -s install DESTDIR="$D" PREFIX=/usr
check "flowsketchd installed executable in sbin" test -x "$D/usr/sbin/flowsketchd"
check "flowsketch installed executable in bin" test -x "$D/usr/bin/flowsketch"
check "the installed daemon runs (--help)" sh -c "'$D/usr/sbin/flowsketchd' --help >/dev/null"
check "the installed CLI runs (size)" sh -c "'$D/usr/bin/flowsketch' size --hll-p 14 | grep -q 16,384"
unit="$D/lib/systemd/system/flowsketchd.service"
check "systemd unit installed" test -f "$unit"
check "the unit starts the installed daemon" grep -qx 'ExecStart=/usr/sbin/flowsketchd --keep $FLOWSKETCHD_ARGS' "$unit"
echo "1..$t"
[ "$failed" -eq 0 ]
