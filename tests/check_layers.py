#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layer checker: every call between the library's files goes down.

Reads the layer rule from src/LAYERS (layer: the layers it may call) and
the defined and undefined symbols of every built object file of the
library (nm).  A call from a file of layer A to a symbol defined in a
file of layer B fails the check unless B is A or B is listed under A.
A cycle of calls between files (in one layer or not) fails it too, since
a cycle means no file of it can be understood, tested or replaced alone.
Headers obey the same rule: a file of layer A may include "B/x.h" only
when B is A or listed under A, so no layer even sees a higher one's types.

    check_layers.py SRC_DIR OBJ_DIR [NM]

OBJ_DIR holds the objects in the same folders as SRC_DIR (CMake's
CMakeFiles/libparplan.dir/src).  Exit status 0: the tree keeps the rule;
1: it does not (every offending call is listed); 2: bad usage or input.
"""
import os
import subprocess
import sys


def bad_input(msg):
    print("check_layers: " + msg, file=sys.stderr)
    sys.exit(2)


def read_rule(path):
    rule = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                bad_input(f"{path}:{n}: expected 'layer: lower layers'")
            name, below = line.split(":", 1)
            name = name.strip()
            if name in rule:
                bad_input(f"{path}:{n}: layer '{name}' listed twice")
            for b in below.split():
                if b not in rule:
                    bad_input(f"{path}:{n}: '{name}' may call '{b}', "
                             "which is not listed above it")
            rule[name] = set(below.split())
    return rule


def objects(obj_dir):
    for root, _, files in os.walk(obj_dir):
        for f in sorted(files):
            if f.endswith(".c.o"):
                rel = os.path.relpath(os.path.join(root, f), obj_dir)
                yield rel[:-2], os.path.join(root, f)


def symbols(nm, path):
    out = subprocess.run([nm, path], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRCGS":
            defined.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            undefined.add(p[1])
    return defined, undefined


def bad_includes(src, rule):
    """#include "layer/file.h" lines against the rule, as messages."""
    out = []
    for layer in sorted(rule):
        folder = os.path.join(src, layer)
        if not os.path.isdir(folder):
            continue
        for f in sorted(os.listdir(folder)):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, f)
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    line = line.strip()
                    if not line.startswith('#include "'):
                        continue
                    inc = line[len('#include "'):].split('"', 1)[0]
                    lb = inc.split("/", 1)[0] if "/" in inc else None
                    if lb in rule and lb != layer and lb not in rule[layer]:
                        out.append(f"{layer}/{f}:{n} includes {inc}: "
                                   f"layer '{layer}' may not see '{lb}'")
    return out


def cycles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    src, obj_dir = argv[1], argv[2]
    nm = argv[3] if len(argv) == 4 else "nm"
    try:
        rule = read_rule(os.path.join(src, "LAYERS"))
    except OSError as e:
        bad_input(f"cannot read the rule: {e}")
    defs, uses = {}, {}
    for name, path in objects(obj_dir):
        layer = name.split(os.sep, 1)[0]
        if os.sep not in name or layer not in rule:
            # Generated code (the ONNX bindings) sits outside the layers.
            continue
        try:
            d, u = symbols(nm, path)
        except (OSError, subprocess.CalledProcessError) as e:
            bad_input(f"{nm} {path}: {e}")
        for s in d:
            defs[s] = name
        uses[name] = u
    if not uses:
        print(f"check_layers: no objects under {obj_dir}", file=sys.stderr)
        return 2
    bad = []
    graph = {}
    for name in sorted(uses):
        la = name.split(os.sep, 1)[0]
        for s in sorted(uses[name]):
            to = defs.get(s)
            if to is None or to == name:
                continue
            graph.setdefault(name, set()).add(to)
            lb = to.split(os.sep, 1)[0]
            if lb != la and lb not in rule[la]:
                bad.append(f"{name} calls {s} of {to}: "
                           f"layer '{la}' may not call '{lb}'")
    bad.extend(bad_includes(src, rule))
    for comp in cycles(graph):
        bad.append("cycle of calls between " +
                   ", ".join(comp))
    for b in bad:
        print("check_layers: " + b)
    if bad:
        print(f"check_layers: {len(bad)} calls against the rule of "
              f"{os.path.join(src, 'LAYERS')}")
        return 1
    print(f"check_layers: {len(uses)} files keep the layer rule")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
