#!/usr/bin/env bash
# check-l3.sh - the GPU check of level 3 (KernelBench's networks as layer
# programs, collect/suite/problems/net.h): collects the naive set (and the
# tuned set where it has level-3 files) on the level-3 problems with one
# trial, compares the classes with each set's expectations, checks that
# the analysis splits out level L3, and optionally compares kbv's level-3
# baselines with PyTorch (tests/parity/parity.py builds each network with
# torch.nn and loads kbv's packed parameters into it).
#
#   scripts/check-l3.sh OUT_DIR [PROBLEM_GLOB...]
#
# Run after `make all tests` (DEPS_ROOT set on a GPU host).  Each glob is
# one collect run.  The default globs, 'L3_00[13489]_*' and 'L3_01[13]_*', take
# problems (MLPs, LeNet-5, the basic block, ResNet-18, VGG-16, the DenseNet
# transition) that cover linear layers, dense convolutions, batch norm,
# every pooling, residual blocks and the tuned level-3 candidates of those problems in
# about 60 s of GPU time.  'L3_0[12][1-379]_*' adds the grouped convolutions
# and ReLU6 (MobileNetV1, MBConv, EfficientNet-B0/B1, RegNet).  The
# networks with branches (the stack, concatenation, channel shuffle,
# transposed convolutions, softmax, ceil-mode pooling): 'L3_00[67]_*'
# 'L3_01[4-8]_*' 'L3_02[56]_*' 'L3_045_*'.  Heavier:
# L3_005_alexnet (2.3 TFLOP a call, about a second a call with the naive
# direct convolution), L3_002_shallowwidemlp (8.6 GB of parameters drawn
# every trial), L3_010_resnet101 (about 25 distinct convolutions for the
# baseline to time first), L3_012_vgg19; 'L3_*' runs everything.  The
# recurrent networks and NetVLAD (problems/l3model.h): 'L3_03[4-9]_*'
# 'L3_04[0-2]_*' 'L3_04[67]_*' (cuDNN's RNNs, whose naive candidates
# launch two kernels per step and layer, and NetVLAD), and
# L3_033_vanillarnn alone (2.7 GB of parameters drawn every trial).  The
# transformers: 'L3_03[12]_*' 'L3_04[34]_*' 'L3_050_*' (vision attention,
# CViT, minGPT's attention and block, ReLU attention; L3_031's
# 16384-token attention keeps 2 GB of scores a head), 'L3_02[89]_*' and
# 'L3_030_*' (ViT, Swin MLP, Swin V2).
# KBV_L3_PARITY=1 also runs the parity check on the same problems (PyTorch
# with CUDA needed; 10 samples a side; about a minute more).
# Writes OUT_DIR/run.tar.gz (the runs), OUT_DIR/classes.txt (one line per
# pair with its class and the expected one, then a summary per set),
# OUT_DIR/levels.txt (the levels of each set's analysis), OUT_DIR/logs.tar.gz
# and, with parity, OUT_DIR/parity-l3.json.  Exit 0 when every expectation
# holds and every analysis has level L3.
set -uo pipefail
out=${1:?usage: scripts/check-l3.sh OUT_DIR [PROBLEM_GLOB...]}
shift
[ $# -gt 0 ] || set -- 'L3_00[13489]_*' 'L3_01[13]_*'
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf runs/check-l3-*
: > "$out/classes.txt"
: > "$out/levels.txt"

sets=(--candidates data/candidates/naive)
if ls data/candidates/tuned/L3_*.cu >/dev/null 2>&1; then
    sets+=(--candidates data/candidates/tuned)
fi
status=0
k=0
for g in "$@"; do
    k=$((k + 1))
    run=runs/check-l3-$k
    echo "== collect $g"
    if ! build/kbv collect "${sets[@]}" --problems "$g" --trials 1 --max-time 1 --out "$run" \
            2>"$out/collect-$k.log"; then
        echo "collect failed ($g):"; tail -20 "$out/collect-$k.log"; status=1; continue
    fi
    if ! build/kbv analyze "$run" >/dev/null 2>"$out/analyze-$k.log"; then
        echo "analyze failed ($g):"; tail -5 "$out/analyze-$k.log"; status=1; continue
    fi
    python3 scripts/compare-expected.py "$run" --all | tee -a "$out/classes.txt" || status=1
    # level L3 in each set's per-level split
    python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
ok = bool(a.get("sets"))
for s in a.get("sets", []):
    names = [L.get("level") for L in s.get("levels", [])]
    print("set %s: levels %s" % (s.get("name"), ", ".join(map(str, names))))
    ok = ok and "L3" in names
sys.exit(0 if ok else 1)
' "$run/analysis.json" | tee -a "$out/levels.txt" || status=1
done
(cd runs && tar -czf "$out/run.tar.gz" check-l3-*) 2>/dev/null
if [ "${KBV_L3_PARITY:-0}" = 1 ]; then
    echo "== parity"
    globs=$(IFS=,; echo "$*")
    python3 tests/parity/parity.py --problems "$globs" --samples 10 --out "$out/parity-l3.json" \
        >"$out/parity.log" 2>&1
    echo "parity exit $?"
    tail -15 "$out/parity.log"
fi
(cd "$out" && tar -czf logs.tar.gz ./*.log && rm -f ./*.log) 2>/dev/null
echo "check-l3: exit $status"
exit $status
