#!/usr/bin/env python3
"""tests/parity/explain.py - re-applies the reasons of data/parity/known.json
(read through known.py) to a parity file (data/parity/<gpu>.json) without
measuring again: an exception that starts "unexplained: " or "known: <old
reason>; " gets the present reason of its problem, or the one its own
measurements give (known.output_reason: PyTorch's bf16 output fails
collect's check where kbv's passes), or "unexplained: " when there is
none.  An archived run's parity.json is sealed (SHA256SUMS):
explain a copy, then `kbv analyze --parity-only` the run it belongs to.  The
measurements are not touched.  Writes the file in place, atomically.

usage: python3 tests/parity/explain.py PARITY_JSON"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from known import KNOWN, exception_text  # noqa: E402


# How the measured part of an exception begins (parity.py's failures).
MEASURED = ("slower than PyTorch", "fp32 run:", "tf32 run:", "fp32 output:", "tf32 output:", "bf16 run:",
            "bf16 output:", "fallback baseline")


def failures_of(pid, exception):
    """The measured part of an exception: what follows the reason.  A
    reason may itself contain "; ", so the present reason is stripped
    whole, and an old one up to the first measured part."""
    if exception.startswith("unexplained: "):
        return exception[len("unexplained: "):]
    if exception.startswith("known: "):
        rest = exception[len("known: "):]
        reason = KNOWN.get(pid)
        if reason and rest.startswith(reason + "; "):
            return rest[len(reason) + 2:]
        at = [i for i in (rest.find("; " + m) for m in MEASURED) if i >= 0]
        if at:
            return rest[min(at) + 2:]
        return rest.split("; ", 1)[1] if "; " in rest else ""
    return exception


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    path = argv[1]
    try:
        with open(path) as f:
            doc = json.load(f)
        problems = doc["problems"]
    except (OSError, ValueError, KeyError, TypeError) as ex:
        print(f"explain: {path}: {ex}", file=sys.stderr)
        return 2
    changed = 0
    for r in problems:
        exc = r.get("exception")
        if not exc or not (exc.startswith("unexplained: ") or exc.startswith("known: ")):
            continue
        fails = failures_of(r.get("id"), exc)
        new = exception_text(r.get("id"), fails, r)
        if new != exc:
            r["exception"] = new
            changed += 1
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    left = [r["id"] for r in problems if (r.get("exception") or "").startswith("unexplained: ")]
    print(f"explain: {path}: {changed} exception(s) rewritten; unexplained: {', '.join(left) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
