#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""layers.py - the layering and function-length rules of user/ and include/.

    scripts/layers.py [--root DIR] CHECK     one check; exit 1 on a problem
    scripts/layers.py [--root DIR] --write-known
                                             rewrite both known lists from
                                             the tree as it is

CHECK is one of
    placed   every module sits in a layer of user/LAYERS, every entry there
             names a module or folder that exists, every `#include "..."`
             is found;
    cycles   no include circle other than one a known upward include closes;
    upward   no include against user/LAYERS that tests/integration/
             layers.upward does not list, and every listed one still exists
             (the list only shrinks; delete it when empty);
    long     no function over 100 lines in user/ that tests/integration/
             layers.long does not list, none listed there longer than it says,
             and every listed one still over 100 lines.

A module is a source file and its header (x.c with x.h), named by its path
without the suffix; it depends on every module whose header one of its two
files includes.  Includes are resolved as the compiler does with the
Makefile's -I flags: beside the including file, then in INCLUDE_DIRS; an
include found in neither (a folder moved under -I) is matched by its path's
tail when exactly one file ends so.  Generated headers (skeletons,
vmlinux.h) are outside the rules.

user/LAYERS lists layers bottom first, one a line; an entry is a module or a
folder (all modules under it that no longer entry names).  A module may
include modules of its own layer or below.  The two programs (the folders of
user/ other than lib) never include each other.

Function length is counted as ctags does: from the line that names the
function to the line of its closing brace.  The scan removes comments,
strings, character constants and preprocessor lines, then counts braces at
file scope; a body is a brace at depth 0 that follows a closing parenthesis.
"""
import argparse
import os
import re
import sys

SCOPE = ("include", "user")
INCLUDE_DIRS = ("include", "user/lib")
LAYERS = "user/LAYERS"
KNOWN_UPWARD = "tests/integration/layers.upward"
KNOWN_LONG = "tests/integration/layers.long"
LONG_SCOPE = "user"
MAX_LINES = 100
GENERATED = re.compile(r"(\.skel\.h|vmlinux\.h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root, top):
    """Paths (relative to root, '/'-separated) of the .c and .h under top."""
    out = []
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/"))
    return out


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def module(path):
    return path[:-2]


def resolve(path, name, files):
    """The file of `#include "name"` in path, None if generated, or why not
    found (beginning with '?')."""
    for d in (os.path.dirname(path),) + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, name)).replace(os.sep, "/")
        if p in files:
            return p
    if GENERATED.search(name):
        return None
    tails = [f for f in files if f.endswith("/" + name)]
    if len(tails) == 1:
        return tails[0]
    return "?found in %d places: %s" % (len(tails), " ".join(sorted(tails))) if tails else "?found nowhere"


def include_graph(root):
    """{module: {module it includes}} and the includes that were not found."""
    files = set()
    for top in SCOPE:
        files.update(sources(root, top))
    graph, lost = {}, []
    for path in sorted(files):
        deps = graph.setdefault(module(path), set())
        for name in INCLUDE.findall(read(root, path)):
            target = resolve(path, name, files)
            if target and target[0] == "?":
                lost.append('%s: #include "%s" %s' % (path, name, target[1:]))
            elif target and module(target) != module(path):
                deps.add(module(target))
    return graph, lost


def read_layers(root):
    """[[entry, ...], ...] bottom first, from user/LAYERS."""
    layers = []
    for line in read(root, LAYERS).splitlines():
        line = line.split("#", 1)[0].split()
        if line:
            layers.append([e.rstrip("/") for e in line])
    return layers


def place(graph, layers):
    """{module: layer index} by the longest entry naming it; the problems."""
    rank, used, problems = {}, set(), []
    for m in graph:
        best = None
        for i, layer in enumerate(layers):
            for e in layer:
                if (m == e or m.startswith(e + "/")) and (best is None or len(e) > len(best[1])):
                    best = (i, e)
        if best is None:
            problems.append("%s is in no layer of %s" % (m, LAYERS))
        else:
            rank[m] = best[0]
            used.add(best[1])
    for layer in layers:
        for e in layer:
            if e not in used:
                problems.append("%s entry %s names no module" % (LAYERS, e))
    return rank, problems


def program(m):
    parts = m.split("/")
    return parts[1] if parts[0] == "user" and len(parts) > 2 and parts[1] != "lib" else None


def upward(graph, rank):
    """Includes against the layer order, as 'from -> to' lines."""
    out = []
    for m in sorted(graph):
        for d in sorted(graph[m]):
            if m not in rank or d not in rank:
                continue
            across = program(m) and program(d) and program(m) != program(d)
            if rank[d] > rank[m] or across:
                out.append("%s -> %s" % (m, d))
    return out


def read_known(root, path):
    """The entries of a known list: {key: rest of line}."""
    known = {}
    full = os.path.join(root, path)
    if not os.path.exists(full):
        return known
    for line in read(root, path).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, _, rest = line.partition(" = ")
            known[key.strip()] = rest.strip()
    return known


def cycle_from(graph, start):
    """A shortest circle through start as a list of modules, or None."""
    seen, queue = {start: None}, [start]
    while queue:
        m = queue.pop(0)
        for d in sorted(graph.get(m, ())):
            if d == start:
                path = [m]
                while seen[path[-1]] is not None:
                    path.append(seen[path[-1]])
                return list(reversed(path)) + [start]
            if d not in seen:
                seen[d] = m
                queue.append(d)
    return None


def cycles(graph):
    """One circle, as text, per group of modules that reach each other."""
    out, covered = [], set()
    for m in sorted(graph):
        if m in covered:
            continue
        c = cycle_from(graph, m)
        if c:
            group = reachable_both(graph, m)
            text = "circle: " + " -> ".join(c)
            if len(group) > len(c) - 1:
                text += " (%d modules in all: %s)" % (len(group), " ".join(sorted(group)))
            out.append(text)
            covered.update(group)
    return out


def reachable_both(graph, m):
    def reach(g, s):
        seen, todo = {s}, [s]
        while todo:
            for d in g.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen
    back = {}
    for a, ds in graph.items():
        for d in ds:
            back.setdefault(d, set()).add(a)
    return reach(graph, m) & reach(back, m)


def strip_code(text):
    """text with comments, strings and character constants blanked and
    preprocessor lines (with their continuations) emptied; newlines kept,
    so line numbers hold."""
    token = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    text = token.sub(lambda t: re.sub(r"[^\n]", " ", t.group(0)), text)
    lines, directive = text.split("\n"), False
    for i, line in enumerate(lines):
        if directive or line.lstrip().startswith("#"):
            directive = line.rstrip().endswith("\\")
            lines[i] = ""
    return "\n".join(lines)


def functions(text):
    """[(name, first line, last line)] of the function bodies in text, or
    raises ValueError when the braces do not balance."""
    code = strip_code(text)
    out, depth, start = [], 0, None
    for pos, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                start = function_head(code, pos)
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise ValueError("'}' without '{' at line %d" % line_of(code, pos))
            if depth == 0 and start:
                out.append((start[0], start[1], line_of(code, pos)))
                start = None
    if depth:
        raise ValueError("%d '{' never closed" % depth)
    return out


def function_head(code, brace):
    """(name, line) when the '{' at brace opens a function body, else None."""
    i = len(code[:brace].rstrip()) - 1
    if i < 0 or code[i] != ")":
        return None
    level = 0
    while i >= 0:
        level += {")": 1, "(": -1}.get(code[i], 0)
        if level == 0:
            break
        i -= 1
    m = re.search(r"([A-Za-z_]\w*)\s*$", code[:i])
    if not m or m.group(1) in ("if", "while", "for", "switch", "return", "sizeof"):
        return None
    return m.group(1), line_of(code, m.start(1))


def line_of(code, pos):
    return code.count("\n", 0, pos) + 1


def long_functions(root):
    """{'file function': lines} of the functions over MAX_LINES; problems."""
    out, problems = {}, []
    for path in sources(root, LONG_SCOPE):
        try:
            for name, first, last in functions(read(root, path)):
                if last - first + 1 > MAX_LINES:
                    out["%s %s" % (path, name)] = last - first + 1
        except ValueError as e:
            problems.append("%s: cannot count its functions: %s" % (path, e))
    return out, problems


def check_placed(root):
    graph, lost = include_graph(root)
    _, problems = place(graph, read_layers(root))
    return lost + problems, []


def check_upward(root):
    graph, _ = include_graph(root)
    rank, _ = place(graph, read_layers(root))
    now = set(upward(graph, rank))
    known = set(read_known(root, KNOWN_UPWARD))
    problems = ["include against %s: %s" % (LAYERS, v) for v in sorted(now - known)]
    problems += ["%s lists %s, which is gone: delete the line" % (KNOWN_UPWARD, v)
                 for v in sorted(known - now)]
    return problems, ["known: %s" % v for v in sorted(now & known)]


def check_cycles(root):
    graph, _ = include_graph(root)
    known = set(read_known(root, KNOWN_UPWARD))
    everyone = cycles(graph)
    for v in known:
        a, _, b = v.partition(" -> ")
        graph.get(a, set()).discard(b)
    problems = cycles(graph)
    return problems, ["closed by a known upward include: " + c for c in everyone if c not in problems]


def check_long(root):
    now, problems = long_functions(root)
    known = read_known(root, KNOWN_LONG)
    for f, n in sorted(now.items()):
        if f not in known:
            problems.append("%s: %d lines (at most %d)" % (f, n, MAX_LINES))
        elif n > int(known[f]):
            problems.append("%s: %d lines, longer than the %s listed" % (f, n, known[f]))
    problems += ["%s lists %s, now at most %d lines: delete the line" % (KNOWN_LONG, f, MAX_LINES)
                 for f in sorted(set(known) - set(now))]
    return problems, ["known: %s = %d lines" % (f, n) for f, n in sorted(now.items()) if f in known]


def write_known(root):
    graph, _ = include_graph(root)
    rank, _ = place(graph, read_layers(root))
    head = "# %s: %s.\n# Written by scripts/layers.py --write-known; lines may only go.\n"
    with open(os.path.join(root, KNOWN_UPWARD), "w") as f:
        f.write(head % (KNOWN_UPWARD, "includes against " + LAYERS + " today (from -> to)"))
        f.writelines(v + "\n" for v in upward(graph, rank))
    now, _ = long_functions(root)
    with open(os.path.join(root, KNOWN_LONG), "w") as f:
        f.write(head % (KNOWN_LONG, "functions over %d lines today (file function = lines)" % MAX_LINES))
        f.writelines("%s = %d\n" % kv for kv in sorted(now.items()))


CHECKS = {"placed": check_placed, "cycles": check_cycles,
          "upward": check_upward, "long": check_long}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--write-known", action="store_true")
    ap.add_argument("check", nargs="?", choices=sorted(CHECKS))
    a = ap.parse_args()
    if a.write_known:
        write_known(a.root)
        return 0
    if not a.check:
        ap.error("name a check or --write-known")
    problems, notes = CHECKS[a.check](a.root)
    for n in notes:
        print("  " + n)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
