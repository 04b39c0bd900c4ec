#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fake_daemon.sh - the harness of the CLI's tests against
# tools/fs-fake-daemon, which answers every request with a file: no root,
# no namespace, no datapath.  Source it (it sources tap.sh); it defines
# functions and these names, nothing else:
#
#   CLI FAKE                      build/flowsketch, build/tools/fs-fake-daemon
#   fake_test TAG [NEED...]       the set-up: the EXIT trap (every fake
#                                 daemon stopped, T gone unless
#                                 FS_TEST_KEEP=1), CLI, FAKE and each NEED
#                                 there (a path or a command), T a fresh
#                                 work directory; bails on what is missing
#   fake_serve NAME FILE [OPTION...]
#                                 a fake daemon on $T/NAME.sock answering
#                                 FILE, its requests in $T/NAME.log,
#                                 FAKE_PID its pid; 0 once it listens
. "${BASH_SOURCE[0]%/*}/tap.sh"

CLI=${CLI:-build/flowsketch}
FAKE=build/tools/fs-fake-daemon
T=""
FAKE_PID=""
FAKE_PIDS=()

fake_test() {
	local tag=$1 need; shift
	trap _fake_cleanup EXIT
	for need in "$CLI" "$FAKE" "$@"; do
		command -v "$need" >/dev/null || [ -x "$need" ] ||
			bail "$need is there (make; scripts/deps.sh)"
	done
	T=$(mktemp -d "/tmp/fs-$tag.XXXXXX") || bail "a work directory"
}

_fake_cleanup() {
	local pid
	for pid in "${FAKE_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -n "$T" ] && [ -z "${FS_TEST_KEEP:-}" ] && rm -rf "$T"
}

fake_serve() {
	local sock="$T/$1.sock" tries=50
	"$FAKE" --log "$T/$1.log" "${@:3}" "$sock" "$2" &
	FAKE_PID=$!
	FAKE_PIDS+=("$FAKE_PID")
	until [ -S "$sock" ]; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}
