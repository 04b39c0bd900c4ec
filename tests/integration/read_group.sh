#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# read_group.sh - flowsketchd --read-group GROUP: the group reads, root
# alone changes, everyone else is kept out.
#
# A real flowsketchd on a veth in a namespace, with its own blocklist file.
# A temporary system group and user (unique names, removed on exit) run
# the CLI and raw requests through setpriv, as:
#   member     the user with GROUP as a supplementary group (--groups)
#   primary    the user with GROUP as its gid and no other group
#   initgroups the user with the groups the database gives it (useradd -G)
#   stranger   the user with neither
# Oracles, none taken from the daemon's claims about itself:
#   - the socket's and its directory's mode, owner and group (stat);
#   - every read command of the request table answers a member, every
#     change is refused with the one message, and root's `block list` and
#     the list file's bytes are the same before and after;
#   - a stranger cannot connect (EACCES, the CLI names the group), and one
#     let through by a socket opened to all is refused by the daemon;
#   - root does everything; without the option the socket is 0600 and a
#     non-root peer is refused even when the file system lets it in;
#   - an unknown group stops the start with one message, nothing made.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

GROUP="fsrg$ID"
USR="fsru$ID"

test_cleanup() {
	getent passwd "$USR" >/dev/null && userdel "$USR"
	getent group "$GROUP" >/dev/null && groupdel "$GROUP"
}

fs_test rg setpriv /usr/bin/python3
# Root's, not writable by others, but passable: the user reaches $WORK/run.
chmod 0711 "$WORK"
fs_test_pair
groupadd --system "$GROUP" || bail "a temporary group"
useradd --system -M -N -g nogroup -G "$GROUP" -s /usr/sbin/nologin "$USR" || bail "a temporary user"
U=$(id -u "$USR")
G=$(getent group "$GROUP" | cut -d: -f3)
NOGROUP=$(getent group nogroup | cut -d: -f3)
# The user may not enter /work's checkout: a copy it can run.
install -m 0755 "$CLI" "$WORK/flowsketch"
SOCK=$WORK/run/sock
LIST=$WORK/list
printf '192.0.2.0/24\n2001:db8::/32\n' >"$LIST"

# as WHO CMD...: CMD as the user in one of the four guises.
as() {
	local who=$1; shift
	case $who in
	member) setpriv --reuid "$U" --regid "$NOGROUP" --groups "$G" -- "$@" ;;
	primary) setpriv --reuid "$U" --regid "$G" --clear-groups -- "$@" ;;
	initgroups) setpriv --reuid "$U" --regid "$NOGROUP" --init-groups -- "$@" ;;
	stranger) setpriv --reuid "$U" --regid "$NOGROUP" --clear-groups -- "$@" ;;
	esac
}
ucli() { local who=$1; shift; as "$who" "$WORK/flowsketch" --socket "$SOCK" "$@"; }
# raw WHO JSON: the daemon's answer to one request line, as sent.
raw() {
	as "$1" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n"); s.shutdown(socket.SHUT_WR)
out = b""
while True:
    b = s.recv(65536)
    if not b: break
    out += b
sys.stdout.write(out.decode())' "$SOCK" "$2"
}
# jqf FILTER FILE: FILE is not empty and FILTER holds (jq -e takes no
# input as success).
jqf() { [ -s "$2" ] && jq -e "$1" "$2" >/dev/null; }
xdp_on() { ip -n "$NS_RX" -d link show dev "$VETH_RX" | grep -c "prog/xdp"; }

# --- an unknown group: refused before anything is made -------------------
fs_in "$NS_RX" "$FSD" -i "$VETH_RX" --pin-dir "$PIN_DIR" --state-dir "$WORK/state" \
	--socket "$SOCK" --blocklist "$LIST" --read-group "fs-no-such-$ID" \
	>"$WORK/bad.out" 2>&1
rc=$?
check "unknown group: exit 1" [ "$rc" -eq 1 ]
check "unknown group: one message naming it" \
	[ "$(cat "$WORK/bad.out")" = "flowsketchd: --read-group fs-no-such-$ID: no such group" ]
check "unknown group: no pin directory, state, socket or XDP left" eval \
	'[ ! -e "$PIN_DIR" ] && [ ! -e "$WORK/state" ] && [ ! -e "$WORK/run" ] && [ "$(xdp_on)" = 0 ]'

# --- with --read-group ----------------------------------------------------
fsd_start --socket "$SOCK" --blocklist "$LIST" --read-group "$GROUP" ||
	bail "daemon starts with --read-group $GROUP"
ok "daemon starts with --read-group $GROUP"
check "socket is 0660 root:$GROUP" [ "$(stat -c '%a %U %G' "$SOCK")" = "660 root $GROUP" ]
check "socket directory is 0750 root:$GROUP" \
	[ "$(stat -c '%a %U %G' "$WORK/run")" = "750 root $GROUP" ]

# A finished window, for export to have something to write.
fsd_settle || bail "windows rotate"
cli block list --json >"$WORK/list.before" || not_ok "root lists the blocklist"
cp "$LIST" "$WORK/file.before"

for who in member primary initgroups; do
	ucli "$who" status --json >"$WORK/$who.status" 2>"$WORK/$who.err"
	check "$who (gid, groups: $(as "$who" id -G)) reads status" \
		jqf '.params' "$WORK/$who.status"
done
ucli member top --once --json >"$WORK/m.top" 2>"$WORK/m.err"
check "member reads top" jqf '.flows' "$WORK/m.top"
ucli member flows --json >"$WORK/m.flows" 2>"$WORK/m.err"
check "member reads flows" jqf '.distinct_flows' "$WORK/m.flows"
ucli member block list --json >"$WORK/m.list" 2>"$WORK/m.err"
check "member reads block list, the same as root" \
	eval '[ -s "$WORK/m.list" ] && cmp -s "$WORK/m.list" "$WORK/list.before"'
ucli member export --format native >"$WORK/m.native" 2>"$WORK/m.err"
check "member exports" [ -s "$WORK/m.native" ]
[ -s "$WORK/m.native" ] || diag <"$WORK/m.err"

# Every command of the request table, raw: reads answer, changes are refused.
for req in '{"cmd":"top"}' '{"cmd":"flows"}' '{"cmd":"export"}' \
	'{"cmd":"windows"}' '{"cmd":"status"}' '{"cmd":"block_list"}'; do
	a=$(raw member "$req")
	check "member: $req answered" \
		jqe 'type == "object" and (has("error") | not)' <<<"${a:-null}"
done
refused() {	# refused WHAT REQUEST
	local a want
	want="permission denied: $1 needs root (this socket gives group $GROUP read-only access)"
	a=$(raw member "$2")
	[ "$(jq -r .error <<<"$a")" = "$want" ] || { echo "$a" | diag; return 1; }
}
check "member: block_add refused" refused "block add" '{"cmd":"block_add","cidrs":["198.51.100.0/24"]}'
check "member: block_del refused" refused "block del" '{"cmd":"block_del","cidrs":["192.0.2.0/24"]}'
check "member: block_clear refused" refused "block clear" '{"cmd":"block_clear"}'
check "member: block_load_begin refused" refused "block load" '{"cmd":"block_load_begin","total":1}'
check "member: block_load_part refused" refused "block load" '{"cmd":"block_load_part","load":"0123456789abcdef","cidrs":["198.51.100.0/24"]}'
check "member: block_load_commit refused" refused "block load" '{"cmd":"block_load_commit","load":"0123456789abcdef"}'

# The same through the CLI: one line, exit 1.
for args in "add 198.51.100.0/24" "del 192.0.2.0/24" "clear"; do
	# shellcheck disable=SC2086 # the words are the command's
	ucli member block $args >"$WORK/m.out" 2>"$WORK/m.err"
	rc=$?
	cmd=${args%% *}
	check "member's block $cmd: exit 1, the one message" eval \
		'[ "$rc" -eq 1 ] && [ "$(cat "$WORK/m.err")" = "flowsketchd: permission denied: block $cmd needs root (this socket gives group $GROUP read-only access)" ]'
done
cli block list --json >"$WORK/list.after"
check "the member changed nothing: root's block list the same" \
	cmp -s "$WORK/list.before" "$WORK/list.after"
check "the member changed nothing: the list file the same" cmp -s "$LIST" "$WORK/file.before"

# A stranger: kept out by the file system, and the CLI says why.
ucli stranger status >"$WORK/s.out" 2>"$WORK/s.err"
rc=$?
check "stranger cannot connect: exit 1, one message naming the group" eval \
	'[ "$rc" -eq 1 ] && [ "$(cat "$WORK/s.err")" = "flowsketch: cannot connect to flowsketchd at $SOCK: Permission denied (the socket is for root and the members of group $GROUP)" ]'
# ... and by the daemon when the file system would let it in.
chmod 0666 "$SOCK" && chmod 0751 "$WORK/run"
a=$(raw stranger '{"cmd":"status"}')
check "stranger let in by the file system: refused by the daemon" \
	[ "$(jq -r .error <<<"$a")" = "permission denied: uid $U is neither root nor in group $GROUP" ]
chmod 0660 "$SOCK" && chmod 0750 "$WORK/run"

# Root does everything.
cli block add 198.51.100.0/24 >/dev/null &&
	cli block list --json | jqe '[.entries[].cidr] | index("198.51.100.0/24")'
check "root: block add" [ $? -eq 0 ]
cli block del 198.51.100.0/24 192.0.2.0/24 >/dev/null &&
	cli block list --json | jqe '[.entries[].cidr] == ["2001:db8::/32"]'
check "root: block del" [ $? -eq 0 ]
cli block clear >/dev/null && cli block list --json | jqe '.entries == []'
check "root: block clear" [ $? -eq 0 ]
check "root: status" eval 'cli status --json >/dev/null'

# --- without the option: root only, as before -----------------------------
fsd_stop
fsd_start --socket "$SOCK" --blocklist "$LIST" || bail "daemon starts without --read-group"
check "no --read-group: socket 0600 root:root, directory 0700" \
	[ "$(stat -c '%a %U %G' "$SOCK") $(stat -c '%a' "$WORK/run")" = "600 root root 700" ]
ucli member status >"$WORK/s.out" 2>"$WORK/s.err"
rc=$?
check "no --read-group: the group's member cannot connect either" eval \
	'[ "$rc" -eq 1 ] && [ "$(cat "$WORK/s.err")" = "flowsketch: cannot connect to flowsketchd at $SOCK: Permission denied (the socket is for root only)" ]'
chmod 0666 "$SOCK" && chmod 0711 "$WORK/run"
a=$(raw member '{"cmd":"status"}')
check "no --read-group: a non-root peer let in is refused by the daemon" \
	[ "$(jq -r .error <<<"$a")" = "permission denied: this socket is for root only (flowsketchd --read-group GROUP lets a group read)" ]
chmod 0600 "$SOCK" && chmod 0700 "$WORK/run"
check "no --read-group: root reads" eval 'cli status --json >/dev/null'

finish
