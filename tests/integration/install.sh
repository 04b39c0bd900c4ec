#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# install.sh - `make install` puts the daemon, the CLI, their man pages and
# the systemd unit and the Prometheus alert rules where PREFIX and DESTDIR say, and what it installs runs
# (the pages render, with the options made from the programs' tables).
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/tap.sh

D=$(mktemp -d /tmp/fs-install.XXXXXX) || exit 1
trap 'rm -rf "$D"' EXIT

check "make install DESTDIR=... PREFIX=/usr succeeds" \
	make --no-print-directory -s install DESTDIR="$D" PREFIX=/usr
check "flowsketchd installed executable in sbin" test -x "$D/usr/sbin/flowsketchd"
check "flowsketch installed executable in bin" test -x "$D/usr/bin/flowsketch"
check "the installed daemon runs (--help)" sh -c "'$D/usr/sbin/flowsketchd' --help >/dev/null"
check "the installed CLI runs (size)" sh -c "'$D/usr/bin/flowsketch' size --hll-p 14 | grep -q 16,384"
# A page renders when groff finds nothing to warn about in it (-ww: every
# warning), man -l formats it and the options from the program's table (an
# option only that table has) are in what it shows.
renders() {
	local out
	out=$(groff -man -ww -z -Tutf8 "$1" 2>&1) && [ -z "$out" ] || return 1
	out=$(MANWIDTH=80 man -l "$1" 2>&1) || return 1
	case $out in *@OPTIONS@*) return 1 ;; *"$2"*) return 0 ;; esac
	return 1
}
for page in flowsketchd:--metrics-web-config flowsketch:--cms-epsilon; do
	f="$D/usr/share/man/man8/${page%%:*}.8"
	check "${page%%:*}(8) installed" test -f "$f"
	check "man -l renders ${page%%:*}(8) with its options (${page#*:})" renders "$f" "${page#*:}"
done
unit="$D/lib/systemd/system/flowsketchd.service"
check "systemd unit installed" test -f "$unit"
check "the unit starts the installed daemon" grep -qx 'ExecStart=/usr/sbin/flowsketchd --keep $FLOWSKETCHD_ARGS' "$unit"
check "the accuracy alert rules installed in share/flowsketch, as shipped" \
	cmp -s dist/flowsketch-accuracy.rules.yml "$D/usr/share/flowsketch/flowsketch-accuracy.rules.yml"
finish
