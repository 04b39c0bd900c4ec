#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# unsafe_dirs.sh - flowsketchd refuses a directory another user could
# write to or aim (safedir.h), before it touches the host.
#
# Each case starts the daemon on a veth in a namespace with one directory
# made unsafe: a state directory chmod 0777, a pin directory owned by
# nobody, a socket directory that is a symbolic link, a blocklist
# directory writable by its group, a state directory under a directory
# others may write (not sticky), and --detach on an unsafe pin directory.
# Oracles: exit status 1, exactly one line on stderr naming the path and
# what is wrong, and the host as it was (no XDP program on the veth, no
# pins, no socket, nothing made).  Then the setups that must still work:
# a state directory under a sticky world-writable directory (/tmp's
# case), and the pin directory under bpffs' own root (1777 when mounted
# with no mode, as on this host).
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

fs_test ud
fs_test_pair
SOCK=$WORK/run/sock
NOBODY=$(id -u nobody)

# What the pin directory holds: none when it does not exist.
pin_count() { if [ -e "$PIN_DIR" ]; then ls -A "$PIN_DIR" | wc -l; else echo none; fi; }
xdp_on() { ip -n "$NS_RX" -d link show dev "$VETH_RX" | grep -c "prog/xdp"; }

# refused DESC WANT [OPTION...]: the daemon, with the test's defaults
# overridden by OPTION..., exits 1 with exactly the line WANT and leaves
# no XDP, no socket, and no pin directory unless one was there before.
refused() {
	local desc=$1 want=$2 pins_before rc out; shift 2
	pins_before=$(pin_count)
	fs_in "$NS_RX" timeout 30 "$FSD" -i "$VETH_RX" --window 1 \
		--pin-dir "$PIN_DIR" --state-dir "$WORK/state" --socket "$WORK/run/sock" \
		--blocklist "$WORK/list" "$@" >"$WORK/out" 2>&1
	rc=$?
	out=$(cat "$WORK/out")
	check "$desc: exit 1" [ "$rc" -eq 1 ]
	if [ "$out" = "$want" ]; then
		ok "$desc: the one message"
	else
		not_ok "$desc: the one message"
		{ echo "want: $want"; echo "got:"; cat "$WORK/out"; } | diag
	fi
	check "$desc: no XDP, no socket, pins as before" eval \
		'[ "$(xdp_on)" = 0 ] && [ ! -e "$WORK/run/sock" ] &&
		 [ "$(pin_count)" = "$pins_before" ]'
}

# A state directory anyone may write to.
mkdir -m 0777 "$WORK/state" && chmod 0777 "$WORK/state"
refused "state directory 0777" \
	"flowsketchd: state directory $WORK/state is writable by group or others (owner uid 0, mode 0777): refused"
check "state directory 0777: nothing made in it" [ -z "$(ls -A "$WORK/state")" ]
check "state directory 0777: no pin directory made" [ ! -e "$PIN_DIR" ]
rmdir "$WORK/state"

# A pin directory owned by nobody (on bpffs, where the pins would go).
mkdir -m 0700 "$PIN_DIR" && chown "$NOBODY" "$PIN_DIR"
refused "pin directory owned by nobody" \
	"flowsketchd: pin directory $PIN_DIR is not owned by root (owner uid $NOBODY, mode 0700): refused"
check "pin directory owned by nobody: --detach refuses it too" \
	eval "! fs_in $NS_RX $FSD --detach --pin-dir $PIN_DIR --state-dir $WORK/state >/dev/null 2>&1"
rmdir "$PIN_DIR"

# A socket directory that is a link to a directory of root's.
mkdir -m 0700 "$WORK/real"
ln -s "$WORK/real" "$WORK/run"
refused "socket directory a symbolic link" \
	"flowsketchd: socket directory $WORK/run is a symbolic link, not a directory (owner uid 0, mode 0777): refused"
check "socket directory a symbolic link: nothing made behind it" [ -z "$(ls -A "$WORK/real")" ]
rm "$WORK/run"

# A blocklist directory its group may write.
mkdir -m 0770 "$WORK/lists" && chmod 0770 "$WORK/lists"
refused "blocklist directory 0770" \
	"flowsketchd: blocklist directory $WORK/lists is writable by group or others (owner uid 0, mode 0770): refused" \
	--blocklist "$WORK/lists/list"

# A state directory that is safe itself, under one others may write.
mkdir -m 0777 "$WORK/open" && chmod 0777 "$WORK/open" && mkdir -m 0700 "$WORK/open/state"
refused "state directory under a 0777 directory" \
	"flowsketchd: state directory $WORK/open/state: $WORK/open above it is writable by group or others and not sticky (owner uid 0, mode 0777): refused" \
	--state-dir "$WORK/open/state"
rm -rf "$WORK/open"

# What must still work: a state directory the daemon makes under a sticky
# world-writable one, the pin directory under bpffs' root (its mode here).
mkdir -m 1777 "$WORK/sticky" && chmod 1777 "$WORK/sticky"
diag <<<"bpffs root: $(stat -c '%a %U' /sys/fs/bpf)"
if fsd_start --socket "$WORK/run/sock" --state-dir "$WORK/sticky/state" \
	--blocklist "$WORK/list"; then
	ok "state directory under a sticky 1777 directory, pins under bpffs' root: started"
else
	not_ok "state directory under a sticky 1777 directory, pins under bpffs' root: started"
	diag <"$WORK/daemon.log"
fi
check "the daemon's state directory is 0700 root" \
	[ "$(stat -c '%a %U' "$WORK/sticky/state")" = "700 root" ]
fsd_stop

finish
