#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# own_files.sh - the demo and the tests never use the host's flowsketch
# files: every daemon they start has a blocklist file of its own, and the
# demo a state directory of its own.  By default flowsketchd reads and
# rewrites /var/lib/flowsketch/blocklist and keeps history under
# /run/flowsketch: a host with a real list would load it into a test, and
# a test could rewrite it.
#
#   1. Every daemon start in scripts/ and tests/integration/ names a list
#      file: on its own line (continuations joined), through an array
#      whose definition in the same file has --blocklist, or through a
#      function's "$@" whose every call does.  Starts with --detach or
#      --help, and --ingress tracepoint (which reads no list and refuses
#      one), are exempt.
#   2. The demo runs (DEMO_SECONDS=1) in a mount namespace of its own
#      where /var/lib/flowsketch/blocklist holds a line no daemon accepts
#      (a daemon that reads it stops at start: the demo fails) and
#      /run/flowsketch is a file (a daemon that keeps state there cannot
#      make its directory: it warns, and the status the demo prints
#      names it).  Both traps are unchanged after it.  The host's own /var/lib and /run are not touched: tmpfs
#      mounts over them, seen by the demo alone.
#
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh
. scripts/tap.sh

# --- 1. every start names a list -------------------------------------------
lint=$(python3 - scripts/*.sh tests/integration/*.sh <<'EOF'
import re, sys

DAEMON = re.compile(r'(?<![\w=/.-])("\$\{?(?:FSD|NEW_FSD)\}?"|\$\{?(?:FSD|NEW_FSD)\}?|[\w./$-]*build/flowsketchd)(?=[\s"\)]|$)')
RUNS = re.compile(r'(\s-i\s|--pin-dir|"\$@"|\[@\]\})')
EXEMPT = re.compile(r'--detach|--help|--ingress tracepoint')
ARRAY = re.compile(r'"\$\{(\w+)\[@\]\}"')
FUNC = re.compile(r'^\s*(?:function\s+)?([A-Za-z_]\w*)\s*\(\)\s*\{?')


def logical(path):
    """(line number, text) with continuations joined and comments out."""
    out, buf, start = [], '', None
    for n, raw in enumerate(open(path, encoding='utf-8'), 1):
        line = raw.rstrip('\n')
        if start is None:
            start = n
        if line.endswith('\\'):
            buf += line[:-1] + ' '
            continue
        buf += line
        if not buf.lstrip().startswith('#'):
            out.append((start, buf))
        buf, start = '', None
    return out


def check(path):
    lines = logical(path)
    # Arrays whose definition (up to its closing parenthesis, over lines)
    # holds --blocklist.
    arrays, text = set(), open(path, encoding='utf-8').read()
    for m in re.finditer(r'(?:^|[\s;(])(?:local\s+)?(\w+)\+?=\(([^)]*)\)', text):
        if '--blocklist' in m.group(2):
            arrays.add(m.group(1))
    # Which function each line is in: brace depth from a NAME() { line.
    funcs, cur, depth = {}, None, 0
    for n, t in lines:
        m = FUNC.match(t)
        if m and cur is None:
            cur, depth = m.group(1), 0
        if cur is not None:
            funcs[n] = cur
            depth += t.count('{') - t.count('}')
            if depth <= 0 and ('}' in t or t.rstrip().endswith('}')):
                cur = None

    def names_list(rest):
        if '--blocklist' in rest or EXEMPT.search(rest):
            return True
        return any(a in arrays for a in ARRAY.findall(rest))

    def calls_ok(fn, seen):
        """Every call of fn in this file passes a list (or is exempt)."""
        call = re.compile(r'(?:^|[;&|(!]\s*|\b(?:if|then|do|else|while|until|exec)\s+)' +
                          re.escape(fn) + r'(?=\s|$|;)')
        good, found = True, False
        for n, t in lines:
            if FUNC.match(t) and FUNC.match(t).group(1) == fn:
                continue
            for m in call.finditer(t):
                found = True
                rest = t[m.end():]
                if names_list(rest):
                    continue
                inner = funcs.get(n)
                if '"$@"' in rest and inner and inner not in seen:
                    good &= calls_ok(inner, seen | {inner})
                else:
                    bad.append('%s:%d: %s called without a list file' % (path, n, fn))
                    good = False
        if not found:
            bad.append('%s: %s passes "$@" to flowsketchd but is not called here: '
                       'give it a list file itself' % (path, fn))
        return good and found

    for n, t in lines:
        m = DAEMON.search(t)
        if not m:
            continue
        rest = t[m.end():]
        if not RUNS.search(rest):
            continue
        starts.append('%s:%d' % (path, n))
        if names_list(rest):
            continue
        fn = funcs.get(n)
        if '"$@"' in rest and fn:
            calls_ok(fn, {fn})	# says what is wrong
        else:
            bad.append('%s:%d: flowsketchd started without a list file of its own' % (path, n))


starts, bad = [], []
for p in sys.argv[1:]:
    check(p)
print(len(starts))
for b in dict.fromkeys(bad):
    print(b)
EOF
)
nstarts=$(head -1 <<<"$lint")
problems=$(tail -n +2 <<<"$lint")
# The floor only proves the lint still finds daemon starts: with the
# harness (scripts/daemon_test.sh) most tests share one, so there are 19.
all_named() { [ -n "$nstarts" ] && [ "$nstarts" -gt 10 ] && [ -z "$problems" ]; }
check "every one of the $nstarts daemon starts in scripts/ and tests/integration/ names a list file of its own" \
	all_named
[ -n "$problems" ] && diag <<<"$problems"

# --- 2. the demo, with traps on the host's paths ------------------------------
fs_require_root
for b in build/flowsketchd build/flowsketch build/tools/fs-gen; do
	[ -x "$b" ] || bail "$b is built (run make)"
done
command -v unshare >/dev/null || bail "unshare is installed (util-linux)"
fs_bpffs_mount || bail "bpffs is mounted"
OUT=$(mktemp -d /tmp/fs-own.XXXXXX) || bail "a work directory"
trap 'rm -rf "$OUT"' EXIT
# In the demo's own mount namespace: tmpfs over /var/lib and /run (the
# host's stay as they are, and the namespace's netns mounts go with it),
# the traps in them, the demo, then the traps' sums.
unshare --mount --propagation private bash -c '
	set -u
	mount -t tmpfs fs-own-varlib /var/lib && mount -t tmpfs fs-own-run /run || exit 97
	mkdir -p /var/lib/flowsketch && echo "no daemon of the demo may read this line" >/var/lib/flowsketch/blocklist
	echo "no daemon of the demo may make a directory here" >/run/flowsketch
	sum() { md5sum /var/lib/flowsketch/blocklist /run/flowsketch; ls -A /var/lib/flowsketch; }
	sum >"$1/before"
	DEMO_SECONDS=1 scripts/demo.sh </dev/null >"$1/demo.out" 2>&1
	echo $? >"$1/rc"
	sum >"$1/after"
' - "$OUT"
rc=$(cat "$OUT/rc" 2>/dev/null || echo none)
demo_ran() { [ "$rc" = 0 ] && grep -q 'flowsketchd attached to' "$OUT/demo.out"; }
check "the demo runs with /var/lib/flowsketch/blocklist unreadable as a list and /run/flowsketch not a directory (exit $rc)" \
	demo_ran
[ "$rc" = 0 ] || tail -n 15 "$OUT/demo.out" | diag
check "the traps are as they were: nothing written under /var/lib/flowsketch or /run/flowsketch" \
	cmp -s "$OUT/before" "$OUT/after"
# A state directory the daemon cannot make only costs it its windows at a
# restart (a warning): the status the demo prints says where they are.
host=$(grep -oE '/(run|var/lib)/flowsketch[^ ]*' "$OUT/demo.out" | sort -u | tr '\n' ' ')
check "the status the demo prints names no host path (${host:-none})" [ -z "$host" ]
finish
