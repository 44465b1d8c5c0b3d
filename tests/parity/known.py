"""tests/parity/known.py - the known reasons why a kbv baseline's parity
ratio exceeds 1.05 or its output differs from PyTorch's, read from
data/parity/known.json (the data; this module only reads it, see
docs/parity.md).  parity.py prefixes a problem's exception with
"known: <reason>" when its id is there (else "unexplained: "); explain.py
re-applies the list to a parity file without measuring again."""
import json
import os

# The repository root is two folders up from this file.
KNOWN_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "parity", "known.json")


def load(path=None):
    """The reasons of a known-reasons file (schema kbv-parity-known/1), by
    problem id.  Raises ValueError on a file of another shape."""
    with open(path or os.environ.get("KBV_PARITY_KNOWN") or KNOWN_PATH) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or doc.get("schema") != "kbv-parity-known/1":
        raise ValueError("%s: not a kbv-parity-known/1 file" % (path or KNOWN_PATH))
    reasons = doc.get("reasons")
    if not isinstance(reasons, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                                for k, v in reasons.items()):
        raise ValueError("%s: \"reasons\" must map problem ids to non-empty strings" % (path or KNOWN_PATH))
    return reasons


KNOWN = load()


def exception_text(pid, measured):
    """A parity exception: "known: <reason>; <measured>" for a problem with
    a reason here, else "unexplained: <measured>"."""
    reason = KNOWN.get(pid)
    return ("known: " + reason + "; " if reason else "unexplained: ") + measured
