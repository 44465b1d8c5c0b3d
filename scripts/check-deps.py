#!/usr/bin/env python3
"""scripts/check-deps.py - the dependency picture of the product sources: for
every C, CUDA and header file, the module folder of each header it includes
("x.h" resolved by name; every header name is unique), folded into a graph
of folders.  Prints the graph, and exits 1 when it has a cycle or an edge
that the layout does not allow:

    include  <- common <- collect/suite <- collect/baselines <- collect/worker
                       <- collect/suite <- collect/supervise <- collect/worker
             <- common <- analyze, render, dispatch

(problems/ subfolders belong to their module).  System and library headers
(<...>) are not part of the picture.

usage: python3 scripts/check-deps.py"""
import os
import re
import sys

ROOTS = ["include", "common", "collect", "analyze", "render", "dispatch"]
ALLOWED = {
    "include": set(),
    "common": {"include"},
    "collect/suite": {"common", "include"},
    "collect/baselines": {"collect/suite", "common", "include"},
    "collect/supervise": {"collect/suite", "common", "include"},
    "collect/worker": {"collect/supervise", "collect/baselines", "collect/suite", "common", "include"},
    "analyze": {"common", "include"},
    "render": {"common", "include"},
    "dispatch": {"common", "include"},
}


def module_of(path):
    parts = path.split(os.sep)
    if parts[0] == "collect" and len(parts) > 2:
        return "collect/" + parts[1]
    return parts[0]


def main():
    headers, files = {}, []
    for root in ROOTS:
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                if n.endswith((".c", ".cu", ".h")):
                    files.append(p)
                if n.endswith(".h"):
                    if n in headers and module_of(headers[n]) != module_of(p):
                        print(f"check-deps: header name {n} in two modules: {headers[n]}, {p}")
                        return 1
                    headers[n] = p
    edges = {}
    bad = 0
    for p in files:
        src = module_of(p)
        with open(p, errors="replace") as f:
            for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M):
                h = os.path.basename(m.group(1))
                if h not in headers:
                    continue
                dst = module_of(headers[h])
                if dst == src:
                    continue
                edges.setdefault(src, {}).setdefault(dst, set()).add(f"{p} -> {h}")
    for src in sorted(edges):
        for dst in sorted(edges[src]):
            ok = src in ALLOWED and dst in ALLOWED[src]
            print(f"{src:18s} -> {dst:18s} {len(edges[src][dst]):3d} includes{'' if ok else '   NOT ALLOWED'}")
            if not ok:
                bad += 1
                for w in sorted(edges[src][dst])[:5]:
                    print("      " + w)
    # A cycle among the folders (also where ALLOWED would be too lax).
    state = {}

    def visit(n, stack):
        state[n] = 1
        for m in edges.get(n, {}):
            if state.get(m) == 1:
                print("check-deps: cycle: " + " -> ".join(stack + [n, m]))
                return True
            if not state.get(m) and visit(m, stack + [n]):
                return True
        state[n] = 2
        return False

    cyc = any(not state.get(n) and visit(n, []) for n in sorted(edges))
    print(f"check-deps: {bad} edge(s) not allowed, {'a cycle' if cyc else 'no cycle'}")
    return 1 if bad or cyc else 0


if __name__ == "__main__":
    sys.exit(main())
