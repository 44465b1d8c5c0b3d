"""runjournal.py - opening a run's journal, for the scripts beside it.

A run folder holds samples.jsonl, or samples.jsonl.gz once archived
(make snapshot).  open_journal(run) returns it open for text reading (the
caller closes it) or raises FileNotFoundError naming the folder;
journal(run, who) exits instead, with a message that also names the
calling script."""
import gzip
import os
import sys


def open_journal(run):
    for name in ("samples.jsonl", "samples.jsonl.gz"):
        path = os.path.join(run, name)
        if os.path.exists(path):
            return gzip.open(path, "rt") if name.endswith(".gz") else open(path)
    raise FileNotFoundError("%s: no samples.jsonl or samples.jsonl.gz" % run)


def journal(run, who):
    try:
        return open_journal(run)
    except FileNotFoundError as ex:
        sys.exit("%s: %s" % (who, ex))


def records(run, who, rtype=None):
    """The journal's records of one type ("time", "status", ...; None: all),
    skipping a torn last line of an interrupted run; with a type, a line is
    parsed only when it names it as collect writes it, which keeps a scan
    of a large journal fast.  who=None raises FileNotFoundError for a run
    without a journal instead of exiting."""
    import json
    needle = '"type":"%s"' % rtype if rtype else ""
    with (open_journal(run) if who is None else journal(run, who)) as f:
        for line in f:
            if needle not in line:
                continue
            try:
                yield json.loads(line)
            except ValueError:
                continue


def pair_seconds(run, who):
    """Where a run's collect time went: (sets, pairs).  sets maps a set to
    {"pairs", "seconds", "phases": {phase: seconds}}; pairs is a list of
    (seconds, set, problem, status, detail).  The seconds are each worker
    status record's "seconds" (the worker's life from start to status, what
    one GPU spends on the pair); the phases are those its detail names
    (setup, checks, probes, timing, memory).  Pairs without a worker (no
    candidate, statuses the supervisor wrote) are not counted."""
    import re
    sets, pairs = {}, []
    for r in records(run, who, "status"):
        sec = r.get("seconds")
        if not isinstance(sec, (int, float)):
            continue
        s = sets.setdefault(r["set"], {"pairs": 0, "seconds": 0.0, "phases": {}})
        s["pairs"] += 1
        s["seconds"] += sec
        for name, val in re.findall(r"(\w+) ([0-9.]+)", r.get("detail", "")):
            s["phases"][name] = s["phases"].get(name, 0.0) + float(val)
        pairs.append((sec, r["set"], r["problem"], r.get("status", "?"), r.get("detail", "")))
    return sets, pairs


def pairs_left(run, who=None):
    """(left, total): the (set, problem) pairs of the run's plan (its
    manifest's sets x problems; every pair gets a status, "missing" too)
    that the journal holds no status record for, in plan order, and the
    plan's size.  who as for records; a manifest that cannot be read raises
    OSError or ValueError."""
    import json
    m = json.load(open(os.path.join(run, "manifest.json")))
    done = {(r.get("set"), r.get("problem")) for r in records(run, who, "status")}
    plan = [(s["name"], p) for s in m.get("sets", []) for p in m.get("problems", [])]
    return [k for k in plan if k not in done], len(plan)


def require_whole(run, who, refused):
    """Exits with a message starting with who when the run cannot be read
    or some pair of its plan has no status yet (pairs_left), naming the
    first and the --resume command; refused says what the caller did not
    do ("not archived").  Returns when the run is whole."""
    try:
        left, total = pairs_left(run)
    except FileNotFoundError as ex:
        sys.exit("%s: %s; %s" % (who, ex, refused))
    if left:
        sys.exit("%s: %s is incomplete: %d of %d pairs have no status (first: %s/%s); "
                 "continue it with kbv collect --resume --out %s; %s"
                 % (who, run, len(left), total, left[0][0], left[0][1], run, refused))


def centre(samples):
    """A variant's time as analyze's time_ms gives it (analyze/rvec.h):
    samples is a list of (ms, input_set), input_set None where the record
    names none.  The median of the times, or, where at least two input sets
    hold 5 samples each, the mean of those sets' medians (the other samples
    then count for nothing); None without samples."""
    import statistics
    if not samples:
        return None
    by = {}
    for ms, k in samples:
        if isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= 7:
            by.setdefault(k, []).append(ms)
    strata = [statistics.median(v) for _, v in sorted(by.items()) if len(v) >= 5]
    if len(strata) >= 2:
        return sum(strata) / len(strata)
    return statistics.median(ms for ms, _ in samples)
