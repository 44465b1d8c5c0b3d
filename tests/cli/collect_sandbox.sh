#!/bin/bash
# The worker sandbox (DESIGN.md 5a step 7a) as collect chooses it, on a CPU
# stand-in for the GPU (tests/fakegpu): by default the manifest says what
# held; where CUDA cannot start under it (KBV_FAKE_SANDBOX_BREAKS=1: the fake
# context fails under a seccomp filter, as cudaErrorOperatingSystem did on a
# real driver) auto runs without it and says why, require stops with an
# error, and off applies none.  Skipped (pass) without the CUDA headers or
# python3.
set -u
B=${1:-build}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
[ -f "$CUDA_INC/cuda_runtime_api.h" ] || { echo "skip: no CUDA headers"; exit 0; }
command -v python3 >/dev/null || { echo "skip: no python3 for the checks"; exit 0; }
T=$(mktemp -d /tmp/kbv-cli-sandbox.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "kept $T" || rm -rf "$T"' EXIT
fail() { echo "collect_sandbox: $*"; exit 1; }
tests/fakegpu/build.sh "$B" "$T" || fail "fake build: see above"
export NVCC="$PWD/tests/fakegpu/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC
collect() {   # NAME [options]: a short collect of the correct fake set into $T/NAME
    local name=$1
    shift
    "$T/bin/kbv-collect" --suite smoke --problems L1_019_relu --candidates tests/fakegpu/sets/correct \
        --out "$T/$name" --timeout 8 --max-time 0.2 "$@" 2>"$T/$name.log"
}
# what a manifest says: applied|refused|status of the pair
said() { python3 - "$T/$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))["config"].get("sandbox", {})
st = [json.loads(l).get("status") for l in open(sys.argv[1] + "/samples.jsonl") if '"type":"status"' in l]
print("%s|%s|%s" % (m.get("applied"), m.get("refused", ""), ",".join(st)))
PY
}

collect auto || fail "collect (auto) exited $?: $(tail -3 "$T/auto.log")"
got=$(said auto)
case $got in
landlock*"|"*"|ok") ;;
"none||ok") echo "note: this kernel offers no sandbox; the auto case checks the status only" ;;
*) fail "auto: manifest and status say '$got'" ;;
esac

KBV_FAKE_SANDBOX_BREAKS=1 collect broken || fail "collect (auto, CUDA broken under the sandbox) exited $?: $(tail -3 "$T/broken.log")"
got=$(said broken)
case $got in
"none|"*"CUDA under the worker sandbox"*"|ok") ;;
"none||ok") [ "$(said auto | cut -d'|' -f1)" = none ] || fail "auto with CUDA broken: nothing refused" ;;
*) fail "auto with CUDA broken under the sandbox: manifest and status say '$got'" ;;
esac

if KBV_FAKE_SANDBOX_BREAKS=1 collect required --sandbox require; then
    fail "--sandbox require ran although CUDA cannot start under the sandbox"
fi
grep -q 'sandbox' "$T/required.log" || fail "--sandbox require: no word of the sandbox in $(tail -2 "$T/required.log")"

collect off --sandbox off || fail "collect (off) exited $?: $(tail -3 "$T/off.log")"
[ "$(said off)" = "none||ok" ] || fail "off: manifest and status say '$(said off)'"
exit 0
