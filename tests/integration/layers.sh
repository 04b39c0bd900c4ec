#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# layers.sh - the C code keeps its layers (user/LAYERS) and its functions
# short: scripts/layers.py's four checks on the tree, then each check
# against a small fake tree that breaks it once (a circle, an include
# against the order, a 101-line function, a stale known line, ...), which
# it must catch, so that a check that cannot fail is found out.
# tests/integration/layers.upward and layers.long list today's exceptions;
# after a change that removes some, `scripts/layers.py --write-known`
# rewrites both.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/tap.sh

PY=${PYTHON:-python3}
layers() { "$PY" scripts/layers.py "$@"; }

# The tree itself.
for c in placed cycles upward long; do
	out=$(layers "$c" 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] || diag <<<"$out"
	case $c in
	placed) what="every module has a layer in user/LAYERS, every include is found" ;;
	cycles) what="no include circle beyond those a known upward include closes" ;;
	upward) what="no include against user/LAYERS beyond layers.upward, none of it gone" ;;
	long) what="no function over 100 lines in user/ beyond layers.long, none of it shorter or longer" ;;
	esac
	check "$what" test "$rc" -eq 0
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A fake tree that passes every check: lib below the program's low module
# below its top; lo.c's function is 100 lines (the most allowed) and hides
# braces in a string, a character constant, comments and a macro; top.c's
# is 101 lines and listed as known.
body() {	# FILE NAME LINES: a function of LINES lines from name to '}'
	{
		echo "int $2(void)"
		echo '{'
		echo '	const char *s = "}}{"; char c = '"'"'{'"'"'; /* } */'
		echo '	// }'
		echo '#define CLOSE \'
		echo '	}'
		for ((i = 8; i < $3; i++)); do echo '	(void)s;'; done
		echo '	return c;'
		echo '}'
	} >>"$1"
}
fake() {
	rm -rf "$tmp/t" && mkdir -p "$tmp/t/user/lib" "$tmp/t/user/prog" "$tmp/t/user/other" \
		"$tmp/t/include" "$tmp/t/tests/integration" && cd "$tmp/t" || exit 2
	echo '#include "base.h"' >user/lib/base.c
	echo '' >user/lib/base.h
	printf '#include "lo.h"\n#include "base.h"\n#include "prog.skel.h"\n' >user/prog/lo.c
	echo '' >user/prog/lo.h
	body user/prog/lo.c lo_fn 100
	printf '#include "lo.h"\n#include "top.h"\n' >user/prog/top.c
	echo '#include "base.h"' >user/prog/top.h
	body user/prog/top.c top_fn 101
	echo '#include "base.h"' >user/other/o.c
	printf '# bottom first\nuser/lib\nuser/prog/lo user/other\nuser/prog/top\n' >user/LAYERS
	echo 'user/prog/top.c top_fn = 101' >tests/integration/layers.long
	: >tests/integration/layers.upward
	cd - >/dev/null || exit 2
}
# catches CHECK WHAT: CHECK fails on the fake tree as it now is and says
# WHAT (so that a crash, which also exits 1, is not taken for a catch).
catches() {
	local out rc
	out=$(layers --root "$tmp/t" "$1" 2>&1)
	rc=$?
	if [ "$rc" -eq 1 ] && [[ "$out" == *"$2"* ]]; then return 0; fi
	diag <<<"$out (exit $rc)"
	return 1
}
passes() {
	local out
	out=$(layers --root "$tmp/t" "$1" 2>&1) && return 0
	diag <<<"$out"
	return 1
}

fake
check "the fake tree passes all four checks" \
	eval 'passes placed && passes cycles && passes upward && passes long'

fake
echo '#include "lo.h"' >>"$tmp/t/user/other/o.c"
echo '#include "o.h"' >>"$tmp/t/user/prog/lo.h"
echo '' >"$tmp/t/user/other/o.h"
check "a circle within one layer is caught (cycles)" \
	catches cycles "circle: user/other/o -> user/prog/lo -> user/other/o"

fake
echo '#include "top.h"' >>"$tmp/t/user/prog/lo.h"
check "an include against the order is caught (upward)" \
	catches upward "include against user/LAYERS: user/prog/lo -> user/prog/top"
check "... and the circle it closes (cycles)" \
	catches cycles "circle: user/prog/lo -> user/prog/top -> user/prog/lo"
echo 'user/prog/lo -> user/prog/top' >"$tmp/t/tests/integration/layers.upward"
check "... and passes once listed as known" passes upward
check "... and so does the circle it closes" passes cycles

fake
echo 'user/prog/top -> user/lib/base' >"$tmp/t/tests/integration/layers.upward"
check "a known upward include that is gone is caught (upward)" \
	catches upward "lists user/prog/top -> user/lib/base, which is gone"

fake
echo '#include "../prog/lo.h"' >>"$tmp/t/user/other/o.c"
check "an include from one program into another is caught (upward)" \
	catches upward "user/other/o -> user/prog/lo"

fake
body "$tmp/t/user/prog/lo.c" lo_long 101
check "a 101-line function is caught (long)" \
	catches long "user/prog/lo.c lo_long: 101 lines"

fake
echo 'user/prog/top.c top_fn = 100' >"$tmp/t/tests/integration/layers.long"
check "a known long function grown longer than listed is caught (long)" \
	catches long "user/prog/top.c top_fn: 101 lines, longer than the 100 listed"

fake
echo 'user/prog/lo.c lo_fn = 100' >>"$tmp/t/tests/integration/layers.long"
check "a known long function now short enough is caught (long)" \
	catches long "lists user/prog/lo.c lo_fn, now at most 100 lines"

fake
echo 'int broken(void) { {' >>"$tmp/t/user/prog/lo.c"
check "a file whose braces do not balance is caught (long)" \
	catches long "user/prog/lo.c: cannot count its functions"

fake
echo '' >"$tmp/t/user/prog/new.c"
check "a module in no layer is caught (placed)" \
	catches placed "user/prog/new is in no layer"

fake
echo '#include "missing.h"' >>"$tmp/t/user/prog/lo.c"
check "an include found nowhere is caught (placed)" \
	catches placed '#include "missing.h" found nowhere'

fake
echo 'user/gone' >>"$tmp/t/user/LAYERS"
check "a layer entry that names nothing is caught (placed)" \
	catches placed "entry user/gone names no module"

finish
