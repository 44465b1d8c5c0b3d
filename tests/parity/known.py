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


# How many more of collect's mismatches kbv's bf16 output may have than
# PyTorch's, both failing, for the difference to be the rounding both
# share: the 5% that parity allows a time.
SHARED_ROUNDING_SLACK = 1.05


def output_reason(record, measured):
    """The reason a parity record's own measurements give for its bf16
    output exceptions, or None.  Every failure in `measured` (failures
    joined by "; ") must be a bf16 output difference from PyTorch, and
    collect's BF16 check, applied to both outputs against the float
    computation on the same bfloat16 inputs (parity.py's
    bf16_torch_collect_check, bf16_kbv_collect_check), must say one of:
    - PyTorch's fails and kbv's passes: the difference is PyTorch's error
      (a bfloat16 accumulation, as PyTorch's cumsum has);
    - both fail, kbv's on no more values than PyTorch's (within
      SHARED_ROUNDING_SLACK): both are bfloat16 computations that drift
      from the float one by the same measure (a deep network rounding
      every layer's output), and kbv's is no further from it than
      PyTorch's, so the two differ from each other by that drift.
    Any other failure beside it (a slow ratio) leaves the exception
    unexplained, so that a reason never hides a measurement."""
    if not record or not measured:
        return None
    if not all(part.startswith("bf16 output: ") for part in measured.split("; ")):
        return None
    torch_check = record.get("bf16_torch_collect_check") or {}
    kbv_check = record.get("bf16_kbv_collect_check") or {}
    try:
        if torch_check.get("pass") is False and kbv_check.get("pass") is True:
            return ("PyTorch's own bf16 output fails collect's check against the float computation on the same "
                    "bf16 inputs (%d of %d values, max |err| %.3g) where kbv's passes (max |err| %.3g), measured"
                    % (int(torch_check["mismatches"]), int(torch_check["count"]),
                       float(torch_check["max_abs_err"]), float(kbv_check["max_abs_err"])))
        if torch_check.get("pass") is False and kbv_check.get("pass") is False:
            torch_bad, kbv_bad = int(torch_check["mismatches"]), int(kbv_check["mismatches"])
            if torch_bad > 0 and kbv_bad <= SHARED_ROUNDING_SLACK * torch_bad:
                return ("both bf16 outputs fail collect's check against the float computation on the same bf16 "
                        "inputs, kbv's on no more values than PyTorch's (%d and %d of %d, max |err| %.3g and %.3g): "
                        "bf16 rounding that both share, measured"
                        % (kbv_bad, torch_bad, int(torch_check["count"]),
                           float(kbv_check["max_abs_err"]), float(torch_check["max_abs_err"])))
    except (KeyError, TypeError, ValueError):
        return None
    return None


def exception_text(pid, measured, record=None):
    """A parity exception: "known: <reason>; <measured>" for a problem with
    a reason here, or whose record measures one (output_reason), else
    "unexplained: <measured>"."""
    reason = KNOWN.get(pid) or output_reason(record, measured)
    return ("known: " + reason + "; " if reason else "unexplained: ") + measured
