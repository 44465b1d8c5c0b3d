"""runjournal.py - opening a run's journal, for the scripts beside it.

A run folder holds samples.jsonl, or samples.jsonl.gz once archived
(make snapshot).  journal(run, who) returns it open for text reading (the
caller closes it), or exits with a message that names the calling script
and the folder."""
import gzip
import os
import sys


def journal(run, who):
    for name in ("samples.jsonl", "samples.jsonl.gz"):
        path = os.path.join(run, name)
        if os.path.exists(path):
            return gzip.open(path, "rt") if name.endswith(".gz") else open(path)
    sys.exit("%s: no samples.jsonl(.gz) in %s" % (who, run))
