#!/usr/bin/env python3
"""Checks a collect run of tests/gpu/hostile (plus ordinary sets) against
each hostile set.json.

usage: hostile_check.py RUN_DIR HOSTILE_DIR [--other SET_DIR]... [--journal-only]

For every (set, problem) of a hostile set's "expected" (skipped, with a
note, when hostile[problem].requires_sandbox names a mechanism that the
manifest's config.sandbox.applied lacks, e.g. "seccomp"):
  - the journal holds exactly one status record for it;
  - its class in analysis.json is the expected one, or one of
    hostile[problem].accept;
  - its status is one of hostile[problem].status (default: "error" classes
    need some status other than ok with a non-empty detail, other classes
    need status ok), and the detail matches hostile[problem].detail (a
    case-insensitive regular expression);
  - the static record's flags include hostile[problem].static_flags and its
    defines include hostile[problem].defines;
  - analysis.json's flags include hostile[problem].flags;
  - leaked_min_bytes / peak_over_io_min_bytes: the candidate's memory record;
  - report_detail: a regular expression; what it matches in the status
    detail is printed as a note (figures a candidate measured);
  - evidence: a regular expression the class's evidence must match;
  - every pair's class and speedups are printed as a note;
  - honest_time: the candidate's median time is at least a quarter of the
    fp32 baseline's (an interposed timer did not make it look fast) and the
    physical-floor probe passed;
  - time_vs_fp32_min: the candidate's median time is at least this multiple
    of the fp32 baseline's (work it did where the timer does not look was
    counted).
For every --other set, each problem of its "expected" has that class (the
hostile pairs did not disturb the rest of the run).  The journal as a whole:
every pair exactly once, no torn line, no line over 64 KiB, under 64 MiB.
Prints one line per check ("ok   ..." or "FAIL ...") and exits 1 on any
failure.
"""
import collections
import json
import os
import re
import sys


def load_sets(d):
    out = {}
    for sub in sorted(os.listdir(d)):
        p = os.path.join(d, sub, "set.json")
        if os.path.isfile(p):
            j = json.load(open(p))
            out[j["name"]] = j
    return out


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    run, hostile_dir = args[0], args[1]
    others = [args[i + 1] for i, a in enumerate(args) if a == "--other" and i + 1 < len(args)]
    journal_only = "--journal-only" in args
    fails = []

    def ok(msg):
        print("ok   " + msg)

    def fail(msg):
        print("FAIL " + msg)
        fails.append(msg)

    jpath = os.path.join(run, "samples.jsonl")
    size = os.path.getsize(jpath)
    status = collections.defaultdict(list)
    static = {}
    memory = {}
    probes = collections.defaultdict(list)
    longest = 0
    torn = 0
    with open(jpath, "rb") as f:
        for n, raw in enumerate(f, 1):
            longest = max(longest, len(raw))
            if not raw.endswith(b"\n"):
                torn += 1
                continue
            try:
                r = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as ex:
                fail(f"samples.jsonl:{n}: not valid UTF-8 JSON ({ex})")
                continue
            key = (r.get("set"), r.get("problem"))
            t = r.get("type")
            if t == "status":
                status[key].append(r)
            elif t == "static":
                static[key] = r
            elif t == "memory" and r.get("variant") == "candidate":
                memory[key] = r
            elif t == "probe":
                probes[key].append(r)
    if torn:
        fail(f"journal: {torn} torn line(s)")
    if size > 64 << 20 or longest > 64 << 10:
        fail(f"journal: {size} bytes, longest line {longest} bytes (an output flood reached it?)")
    else:
        ok(f"journal: {size} bytes, longest line {longest} bytes")
    manifest = json.load(open(os.path.join(run, "manifest.json")))
    missing = [(s["name"], p) for s in manifest["sets"] for p in manifest["problems"] if (s["name"], p) not in status]
    dup = [k for k, v in status.items() if len(v) != 1]
    if missing or dup:
        fail(f"journal: pairs without a status {missing[:5]}, pairs with several {dup[:5]}")
    else:
        ok(f"journal: each of the {len(status)} pairs has exactly one status")

    classes = {}
    if not journal_only:
        a = json.load(open(os.path.join(run, "analysis.json")))
        for s in a["sets"]:
            for p in s["problems"]:
                classes[(s["name"], p["problem"])] = p

    names = {s["name"] for s in manifest["sets"]}
    held = (manifest.get("config", {}).get("sandbox") or {}).get("applied", "none")
    for name, j in load_sets(hostile_dir).items():
        if name not in names:
            fail(f"{name}: not in the run")
            continue
        for prob, want in j.get("expected", {}).items():
            h = j.get("hostile", {}).get(prob, {})
            tag = f"{name}/{prob}"
            need = h.get("requires_sandbox")
            if need and need not in held:
                print(f"note {tag}: not checked: its expectation needs the workers' {need}, and they held {held!r}")
                continue
            recs = status.get((name, prob), [])
            if len(recs) != 1:
                fail(f"{tag}: {len(recs)} status records")
                continue
            st = recs[0].get("status", "")
            detail = recs[0].get("detail", "") or ""
            short = detail[:160].replace("\n", " ")
            allowed = h.get("status")
            if allowed is None:
                status_ok = (st != "ok" and detail.strip() != "") if want == "error" else st == "ok"
            else:
                status_ok = st in allowed
            if "detail" in h and not re.search(h["detail"], detail, re.I):
                status_ok = False
            if "report_detail" in h:
                m = re.search(h["report_detail"], detail)
                print(f"note {tag}: {(m.group(0) if m else detail)[:400]}")
            if status_ok:
                ok(f"{tag}: status {st} ({short!r})")
            else:
                fail(f"{tag}: status {st} ({short!r}); expected {allowed or ('not ok' if want == 'error' else 'ok')}"
                     f"{' with detail /' + h['detail'] + '/' if 'detail' in h else ''}")
            if not journal_only:
                got = classes.get((name, prob))
                accept = [want] + h.get("accept", [])
                if got is None:
                    fail(f"{tag}: not in analysis.json")
                else:
                    ev = [e["text"] for e in got.get("evidence", []) if e.get("kind") == "class"]
                    line = f"{tag}: class {got['class']}{': ' + ev[0][:140] if ev else ''}"
                    if got["class"] in accept:
                        ok(line)
                    else:
                        fail(f"{line}; expected {' or '.join(accept)}")
                    if "evidence" in h:
                        if ev and re.search(h["evidence"], ev[0], re.I):
                            ok(f"{tag}: evidence matches /{h['evidence']}/")
                        else:
                            fail(f"{tag}: evidence {ev[:1]} does not match /{h['evidence']}/")
                    sp = got.get("speedup") or {}
                    def est(b):
                        v = sp.get(b)
                        return f"{v['estimate']:.3g}" if isinstance(v, dict) and v.get("estimate") is not None else "-"
                    print(f"note {tag}: class {got['class']}, speedup vs fp32 {est('fp32')}, vs tf32 {est('tf32')}")
                    for fl in h.get("flags", []):
                        if fl in got.get("flags", []):
                            ok(f"{tag}: flag {fl}")
                        else:
                            fail(f"{tag}: no flag {fl} (flags {got.get('flags')})")
                    if "time_vs_fp32_min" in h:
                        t = got.get("time_ms", {})
                        c, b = t.get("candidate"), t.get("fp32")
                        if c is None or b is None or c < h["time_vs_fp32_min"] * b:
                            fail(f"{tag}: candidate time {c} ms vs fp32 {b} ms, under "
                                 f"{h['time_vs_fp32_min']}x: work outside the timed window went uncounted")
                        else:
                            ok(f"{tag}: candidate time {c:.4g} ms is {c / b:.2f}x fp32's {b:.4g} ms")
                    if h.get("honest_time"):
                        t = got.get("time_ms", {})
                        c, b = t.get("candidate"), t.get("fp32")
                        floor_fail = [p for p in probes.get((name, prob), [])
                                      if p.get("probe") == "physical-floor" and p.get("pass") is False]
                        if c is None or b is None or c < 0.25 * b or floor_fail:
                            fail(f"{tag}: candidate time {c} ms vs fp32 {b} ms"
                                 f"{' and the physical-floor probe failed' if floor_fail else ''}: the interposed "
                                 f"timing symbols took effect")
                        else:
                            ok(f"{tag}: honest time: candidate {c:.4g} ms vs fp32 {b:.4g} ms")
            srec = static.get((name, prob), {})
            for fl in h.get("static_flags", []):
                if fl in srec.get("flags", []):
                    ok(f"{tag}: static flag {fl}")
                else:
                    fail(f"{tag}: static flag {fl} missing (flags {srec.get('flags')})")
            for d in h.get("defines", []):
                if d in srec.get("defines", []):
                    ok(f"{tag}: static scan lists the definition of {d}")
                else:
                    fail(f"{tag}: static scan does not list the definition of {d} (defines {srec.get('defines')})")
            m = memory.get((name, prob))
            if "leaked_min_bytes" in h:
                lk = m.get("leaked_bytes", 0) if m else None
                if lk is not None and lk >= h["leaked_min_bytes"]:
                    ok(f"{tag}: leaked_bytes {lk:.0f}")
                else:
                    fail(f"{tag}: leaked_bytes {lk}, expected >= {h['leaked_min_bytes']}")
            if "peak_over_io_min_bytes" in h:
                if m and m.get("peak_bytes", 0) - m.get("io_bytes", 0) >= h["peak_over_io_min_bytes"]:
                    ok(f"{tag}: peak {m['peak_bytes']:.0f} B = io {m['io_bytes']:.0f} B + "
                       f"{m['peak_bytes'] - m['io_bytes']:.0f} B (untracked {m.get('untracked_bytes', 0):.0f} B): "
                       f"the hidden allocation was counted")
                else:
                    fail(f"{tag}: memory record {m}: the candidate's hidden allocation "
                         f"(>= {h['peak_over_io_min_bytes']} B) was not counted")

    for d in others:
        j = json.load(open(os.path.join(d, "set.json")))
        name = j["name"]
        for prob, want in j.get("expected", {}).items():
            if prob not in manifest["problems"]:
                continue
            tag = f"{name}/{prob} (ordinary set, after the hostile ones)"
            recs = status.get((name, prob), [])
            st = recs[0].get("status") if recs else None
            if journal_only:
                got_cls = None
            else:
                got = classes.get((name, prob))
                got_cls = got["class"] if got else None
            if st is None or (want != "error" and st != "ok") or (not journal_only and got_cls != want):
                fail(f"{tag}: status {st}, class {got_cls}, expected {want}")
            else:
                ok(f"{tag}: status {st}, class {got_cls or '(not analyzed)'}")
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, ValueError, KeyError, TypeError) as ex:
        print(f"FAIL hostile_check: {type(ex).__name__}: {ex}")
        sys.exit(1)
