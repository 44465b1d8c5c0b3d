#!/usr/bin/env bash
# scripts/check-bf16.sh OUT_DIR [BUILD_DIR] - the BF16 setting (issue 17) on
# a GPU host, in about a minute: collects data/candidates/naive-bf16 (and
# tuned-bf16 where it has the problem) on six problems, one per kind of
# baseline (a GEMM, a convolution, an elementwise map, a softmax, a norm and
# a level-2 chain), analyzes the run where kbv-analyze can, and times the
# bf16 baselines against PyTorch eager in bfloat16 (tests/parity/parity.py
# --precision bf16).  Prints, per pair: status, checks passed, failed
# probes, the class (from analysis.json when analyze ran), the speedup
# against the bf16 baseline (median over rounds of bf16 / candidate) and
# the baseline's choice (native or fallback); per problem the parity ratio.
# Writes OUT_DIR/run (manifest, journal), OUT_DIR/parity-bf16.json,
# OUT_DIR/summary.txt and the logs.  Needs `make all` done (DEPS_ROOT set
# where the libraries are unpacked) and, for the parity part, PyTorch.
set -uo pipefail
out=${1:?usage: scripts/check-bf16.sh OUT_DIR [BUILD_DIR]}
B=${2:-build}
cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(cd "$out" && pwd)
PROBLEMS=(L1_001_square_matrix_multiplication L1_050_conv_standard_2d__square_input__square_kernel
          L1_019_relu L1_023_softmax L1_040_layernorm L2_012_gemm_multiply_leakyrelu)
tmp=$(mktemp -d /tmp/kbv-check-bf16.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Each bundled bf16 set, cut down to the six problems (a copy of the files,
# with the set's own set.json, so that the run names the real sets).
cands=()
for s in naive-bf16 tuned-bf16; do
    [ -f "data/candidates/$s/set.json" ] || continue
    mkdir -p "$tmp/sets/$s"
    for p in "${PROBLEMS[@]}"; do
        [ -f "data/candidates/$s/$p.cu" ] && cp "data/candidates/$s/$p.cu" "$tmp/sets/$s/"
    done
    cp "data/candidates/$s/set.json" "$tmp/sets/$s/"
    cands+=(--candidates "$tmp/sets/$s")
done
t0=$(date +%s)
# One trial per distribution and a short time cap keep six pairs per set
# within the minute; the protocol is otherwise the full one.  The other
# problems of the suite are "missing" pairs, which cost nothing.
timeout 75 "$B/kbv-collect" --precision bf16 "${cands[@]}" \
    --out "$out/run" --trials 1 --max-time 0.3 --timeout 40 2>"$out/collect.log"
echo "check-bf16: collect exit $? in $(( $(date +%s) - t0 )) s" | tee "$out/summary.txt"
if [ -x "$B/kbv-analyze" ]; then
    "$B/kbv-analyze" "$out/run" 2>"$out/analyze.log" ||
        echo "check-bf16: kbv-analyze failed (bf16 pairs need the analyze side of issue 17): $(tail -1 "$out/analyze.log")" |
        tee -a "$out/summary.txt"
fi
python3 - "$out/run" "${PROBLEMS[@]}" <<'PY' | tee -a "$out/summary.txt"
import json, os, statistics, sys
run, want = sys.argv[1], sys.argv[2:]
recs = []
with open(os.path.join(run, "samples.jsonl")) as f:
    for line in f:
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
classes = {}
ap = os.path.join(run, "analysis.json")
if os.path.exists(ap):
    for s in json.load(open(ap)).get("sets", []):
        for p in s.get("problems", []):
            classes[(s["name"], p["problem"])] = p.get("class")
pairs = {}
for r in recs:
    if r.get("problem") in want:
        pairs.setdefault((r["set"], r["problem"]), []).append(r)
print("%-12s %-52s %-12s %-7s %-22s %-14s %-8s %s" % ("set", "problem", "status", "checks", "failed probes",
                                                      "class", "speedup", "bf16 baseline"))
for (s, p), rs in sorted(pairs.items()):
    st = next((r for r in rs if r["type"] == "status"), {})
    ch = [r for r in rs if r["type"] == "check" and not r.get("skipped")]
    bad = [r["probe"] for r in rs if r["type"] == "probe" and not r.get("pass")]
    t = {}
    for r in rs:
        if r["type"] == "time":
            t.setdefault(r["variant"], {})[r["round"]] = r["gpu_ms"]
    rounds = sorted(set(t.get("bf16", {})) & set(t.get("candidate", {})))
    sp = statistics.median(t["bf16"][k] / t["candidate"][k] for k in rounds) if rounds else None
    other = sorted(v for v in t if v not in ("bf16", "candidate"))
    choice = next((r["choice"] for r in rs if r["type"] == "baseline" and r.get("variant") == "bf16"), "-")
    tam = [r for r in rs if r["type"] == "tamper"]
    print("%-12s %-52s %-12s %-7s %-22s %-14s %-8s %s%s%s" % (
        s, p, st.get("status", "?"), "%d/%d" % (sum(bool(c["pass"]) for c in ch), len(ch)),
        ",".join(bad) or "-", classes.get((s, p), "-"), "%.3g" % sp if sp else "-", choice[:70],
        "  OTHER VARIANTS " + ",".join(other) if other else "", "  TAMPER " + tam[0]["detail"][:80] if tam else ""))
    if st.get("status") not in (None, "ok"):
        print("    detail:", st.get("detail", "")[:200])
PY
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    t0=$(date +%s)
    globs=$(IFS=,; echo "${PROBLEMS[*]}")
    timeout 50 python3 tests/parity/parity.py --build "$B" --precision bf16 --problems "$globs" --samples 20 \
        --out "$out/parity-bf16.json" 2>"$out/parity.log"
    echo "check-bf16: parity exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
    python3 - "$out/parity-bf16.json" <<'PY' | tee -a "$out/summary.txt"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as ex:
    print("check-bf16: no parity file:", ex); sys.exit(0)
print("parity (kbv bf16 median / PyTorch bf16 median), torch", d.get("torch"), "on", d.get("gpu"))
for r in d["problems"]:
    ratio = r.get("bf16_ratio")
    print("  %-52s ratio %-6s match %-5s %s | %s" % (r["id"], "%.3f" % ratio if ratio else "-", r.get("bf16_match"),
                                                   (r.get("bf16_choice") or "")[:60], r.get("exception") or "within"))
PY
else
    echo "check-bf16: no PyTorch with CUDA here: parity skipped" | tee -a "$out/summary.txt"
fi
