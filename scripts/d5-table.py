#!/usr/bin/env python3
"""scripts/d5-table.py [BUILD_DIR] - prints templates/d5.json, each problem's
own hard case (D5) in words as the suite defines it (from `kbv list
--json`).  render names a problem's D5 from the run's manifest; for a run
collected before manifests carried it, from this table beside the report
template.  tests/cli/d5_table.sh checks that the committed table is this
output:  python3 scripts/d5-table.py build > templates/d5.json"""
import json
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
listing = json.loads(subprocess.check_output([os.path.join(build, "kbv-list"), "--json"]))
doc = {"schema": "kbv-d5/1",
       "note": "each problem's own hard case (D5) as kbv's suite defines it; made by scripts/d5-table.py",
       "d5": {p["id"]: p["d5"] for p in listing["problems"] if p.get("d5")},
       "d5_label": {p["id"]: p["d5_label"] for p in listing["problems"] if p.get("d5_label")}}
sys.stdout.write(json.dumps(doc, indent=1) + "\n")
