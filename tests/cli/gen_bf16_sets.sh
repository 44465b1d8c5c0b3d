#!/bin/bash
# The bundled BF16 sets (issue 17) are what their generators write:
# scripts/gen-naive-candidates.py --bf16 and scripts/gen-tuned-candidates.py
# --bf16, run from a copy of the scripts, must reproduce every .cu file of
# data/candidates/naive-bf16 and tuned-bf16 byte for byte; every naive-bf16
# file declares bf16_t and either reads no tensor of the ABI as float or
# (a level-2 chain of steps) widens and narrows around its float chain;
# both set.json files name the BF16 setting.
set -u
B=${1:-build}
for p in kbv-list kbv-prompt; do [ -x "$B/$p" ] || { echo "gen_bf16_sets: no $B/$p"; exit 1; }; done
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
T=$(mktemp -d /tmp/kbv-cli-genbf16.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "gen_bf16_sets: $*"; exit 1; }
mkdir -p "$T/scripts"
cp scripts/gen-naive-candidates.py scripts/gen-tuned-candidates.py scripts/naive_l3.py "$T/scripts/"
B=$(cd "$B" && pwd)
python3 "$T/scripts/gen-naive-candidates.py" --bf16 "$B" >"$T/naive.log" || fail "naive generator: $(tail -2 "$T/naive.log")"
python3 "$T/scripts/gen-tuned-candidates.py" --bf16 "$B" >"$T/tuned.log" || fail "tuned generator: $(tail -2 "$T/tuned.log")"
# Hand-written files (without the generators' mark, such as tuned-bf16's
# algebraic rewrites) are the generators' to keep, not to write.
for s in naive-bf16 tuned-bf16; do
    want=$(grep -l "Written by scripts/gen-" data/candidates/$s/*.cu | wc -l)
    got=$(ls "$T/data/candidates/$s/"*.cu | wc -l)
    [ "$want" = "$got" ] || fail "$s: the generator writes $got files, the set holds $want generated ones"
    for f in $(grep -l "Written by scripts/gen-" data/candidates/$s/*.cu); do
        cmp -s "$f" "$T/data/candidates/$s/$(basename "$f")" || fail "$f differs from what the generator writes"
    done
done
n_problems=$("$B/kbv-list" | tail -n 1 | awk '{print $1}')
N_PROBLEMS=$n_problems python3 - <<'PY' || exit 1
import glob, json, os, re, sys
for s, cw in (("naive-bf16", "naive"), ("tuned-bf16", "tuned")):
    j = json.load(open("data/candidates/%s/set.json" % s))
    ids = sorted(f.split("/")[-1][:-3] for f in glob.glob("data/candidates/%s/*.cu" % s))
    if j.get("precision") != "bf16" or j.get("compare_with") != cw or sorted(j.get("expected", {})) != ids:
        print("gen_bf16_sets: %s/set.json" % s, {k: j.get(k) for k in ("precision", "compare_with")}); sys.exit(1)
naive = glob.glob("data/candidates/naive-bf16/*.cu")
if len(naive) != int(os.environ["N_PROBLEMS"]):
    print("gen_bf16_sets: naive-bf16 has %d files, not one per problem (%s)" % (len(naive), os.environ["N_PROBLEMS"])); sys.exit(1)
for f in naive:
    t = open(f).read()
    # A chain of steps runs its float kernels on widened copies (forward_f32
    # behind a kbv_forward that widens and narrows); every other file reads
    # the ABI's tensors as bfloat16.
    wrapped = "static int forward_f32(const kbv_call *call)" in t and "widen<<<" in t and "narrow<<<" in t
    if "struct bf16_t" not in t or (not wrapped and re.search(r"\(\s*(const\s+)?float\s*\*\s*\)\s*(call->|[a-z]+->data)", t)):
        print("gen_bf16_sets: %s reads a tensor as float" % f); sys.exit(1)
PY
echo "gen_bf16_sets: ok"
