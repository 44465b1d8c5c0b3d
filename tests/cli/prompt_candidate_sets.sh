#!/usr/bin/env bash
# The bundled candidate sets are well-formed: every set.json names its
# folder and has a description and an origin, every expected class is one
# of DESIGN.md section 7, every file is a problem of the suite, every hack
# has an expected class, and the hacks set covers every hack class at least
# twice.  (Compiling them needs nvcc: scripts/check-candidates.sh without
# --no-compile.)
set -u
build=$1
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$build/kbv-list" ] || fail "no $build/kbv-list"
out=$(BUILD="$build" scripts/check-candidates.sh --no-compile 2>&1) || fail "check-candidates: $(echo "$out" | grep FAIL | head -3)"
python3 - <<'PY' || exit 1
import json, collections, sys
exp = json.load(open("data/candidates/hacks/set.json"))["expected"]
count = collections.Counter(exp.values())
need = ["constant-output", "identity", "stale-output", "caching", "input-mutation", "deferred-work",
        "impossible-speed", "nondeterministic", "hidden-fail"]
short = [c for c in need if count[c] < 2]
if short:
    print("FAIL: hacks has fewer than two candidates for: " + ", ".join(short))
    sys.exit(1)
PY
exit 0
