#!/usr/bin/env bash
# Everything one visit to a GPU host does, in one scripted call: build the
# GPU-side programs against unpacked packages, run the GPU tests, collect a
# run of the bundled candidate sets, and keep what should come back under
# OUT_DIR (compressed journals, logs, the parity file, benchmark figures).
#   scripts/gpu-session.sh OUT_DIR [steps...]
# steps: build test-gpu collect report parity bench (default: all, in that order)
#   KBV_COLLECT_ARGS   extra arguments for the collect step
set -uo pipefail
out=${1:?usage: scripts/gpu-session.sh OUT_DIR [steps...]}
shift
steps=${*:-build test-gpu collect report parity bench}
mkdir -p "$out"
root=$PWD/.deps/root
export DEPS_ROOT=$root
jobs=$(nproc)
log() { echo "== $(date -u +%H:%M:%S) $*"; }
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }

# render looks for DejaVu Sans where Debian puts it.
if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] && [ -d "$root/usr/share/fonts/truetype/dejavu" ]; then
    mkdir -p /usr/share/fonts/truetype/dejavu && cp "$root"/usr/share/fonts/truetype/dejavu/*.ttf /usr/share/fonts/truetype/dejavu/
fi

if has build; then
    log "build"
    make -j"$jobs" DEPS_ROOT="$root" all tests >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    tail -1 "$out/build.log"
fi
if has test-gpu; then
    log "test-gpu"
    make DEPS_ROOT="$root" test-gpu >"$out/test-gpu.log" 2>&1
    echo "test-gpu exit $?"; tail -30 "$out/test-gpu.log"
fi
if has collect; then
    log "collect"
    run=runs/gpu-session
    rm -rf "$run"
    # shellcheck disable=SC2086
    build/kbv collect --out "$run" ${KBV_COLLECT_ARGS:-} 2>"$out/collect.log"
    echo "collect exit $?"; tail -5 "$out/collect.log"
    if [ -f "$run/manifest.json" ]; then
        tar -C runs -czf "$out/run.tar.gz" gpu-session
    fi
fi
if has report && [ -d runs/gpu-session ]; then
    log "report"
    build/kbv report runs/gpu-session >"$out/report.log" 2>&1; echo "report exit $?"; tail -3 "$out/report.log"
    [ -f runs/gpu-session/report/report.pdf ] && cp runs/gpu-session/report/report.pdf "$out/report.pdf"
fi
if has parity && [ -x tests/parity/run.sh ]; then
    log "parity"
    tests/parity/run.sh build --out "$out/parity.json" >"$out/parity.log" 2>&1; echo "parity exit $?"; tail -15 "$out/parity.log"
fi
if has bench && [ -x scripts/bench-collect.sh ]; then
    log "bench-collect"
    scripts/bench-collect.sh build >"$out/bench-collect.log" 2>&1; echo "bench exit $?"; tail -8 "$out/bench-collect.log"
fi
# Logs go back as one archive so that the eight-file limit holds.
(cd "$out" && tar -czf logs.tar.gz ./*.log && rm -f ./*.log)
log "done"
