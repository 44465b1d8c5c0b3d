#!/usr/bin/env python3
"""scripts/check-sizes.py - the size rules of the product sources: no file
over 1000 lines and no function over 150 lines (their bodies, from the
opening brace in column 0 to the closing one).  Product sources are the C,
CUDA and header files of the stages (not tests/, bench/ or scripts/).
Prints each breach and exits 1 when there is one.

usage: python3 scripts/check-sizes.py [--list N]   (--list: the N longest functions too)"""
import os
import re
import sys

ROOTS = ["include", "common", "collect", "analyze", "render", "dispatch"]
EXTS = (".c", ".h", ".cu")
MAX_FILE, MAX_FUNC = 1000, 150


def sources():
    for root in ROOTS:
        for d, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith(EXTS):
                    yield os.path.join(d, f)


def functions(lines):
    """(name, first line, length) of each function defined at file level: a
    '{' alone in column 0 after a line holding '(' closes in the next '}' in
    column 0."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() == "{" and i > 0:
            j = i - 1
            while j > 0 and "(" not in lines[j]:
                j -= 1
            m = re.search(r"([A-Za-z_]\w*)\s*\(", lines[j])
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if m and not lines[j].lstrip().startswith(("struct", "typedef", "enum")):
                out.append((m.group(1), j + 1, k - i + 1))
            i = k
        i += 1
    return out


def main(argv):
    show = int(argv[2]) if len(argv) > 2 and argv[1] == "--list" else 0
    bad = 0
    allf = []
    for p in sources():
        with open(p, errors="replace") as f:
            lines = f.read().split("\n")
        n = len(lines) - (1 if lines and lines[-1] == "" else 0)
        if n > MAX_FILE:
            print(f"{p}: {n} lines (limit {MAX_FILE})")
            bad += 1
        for name, line, length in functions(lines):
            allf.append((length, f"{p}:{line}: {name}"))
            if length > MAX_FUNC:
                print(f"{p}:{line}: {name}: {length} lines (limit {MAX_FUNC})")
                bad += 1
    for length, where in sorted(allf, reverse=True)[:show]:
        print(f"  {length:5d}  {where}")
    print(f"check-sizes: {bad} breach(es)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
