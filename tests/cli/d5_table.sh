#!/bin/bash
# templates/d5.json is what scripts/d5-table.py makes from the suite (each
# problem's D5 in words, render's fallback for runs whose manifest does not
# name D5); a collected manifest names the same texts.
set -u
B=${1:-build}
[ -x "$B/kbv-list" ] || { echo "d5_table: no $B/kbv-list"; exit 1; }
T=$(mktemp -d /tmp/kbv-cli-d5.XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 scripts/d5-table.py "$B" >"$T/d5.json" || { echo "d5_table: d5-table.py failed"; exit 1; }
cmp -s "$T/d5.json" templates/d5.json ||
    { echo "d5_table: templates/d5.json is stale: python3 scripts/d5-table.py $B > templates/d5.json"; exit 1; }
python3 - templates/d5.json <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))["d5"]
if "L1_100_hingeloss" not in d or "targets" not in d["L1_100_hingeloss"] or "L1_019_relu" not in d:
    print("d5_table: expected hinge loss and ReLU D5s, got", sorted(d)[:5]); sys.exit(1)
PY
echo "d5_table: ok"
