#!/bin/bash
# scripts/device-suite-keep.sh: the files a device call brought back are
# copied into the partial folder (mode 644), a torn archive or a file that
# is not JSON is refused and the kept copy left as it was, the progress
# line is printed, the call's GPU is appended to devices.txt, test-gpu.txt
# goes to KBV_TESTED instead, and a folder with nothing to keep exits 1.
set -u
T=$(mktemp -d /tmp/kbv-cli-keep.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "device_suite_keep: $*"; exit 1; }
mkdir -p "$T/out" "$T/partial" "$T/empty" "$T/tested"
export KBV_TESTED="$T/tested"
echo old >"$T/partial/torch-bf16.json.keep"
echo '{"problems": []}' >"$T/partial/torch-bf16.json"
echo 'a run' | gzip >"$T/out/suite-run.tar.gz"
echo '{"precision": "fp32", "problems": []}' >"$T/out/torch-fp32.json"
echo '{"precision": "bf16", "probl' >"$T/out/torch-bf16.json"
echo 'run X: 3 of 9 pairs done; to be continued with --resume' >"$T/out/suite-progress.txt"
chmod 600 "$T/out/torch-fp32.json"
KBV_PARTIAL="$T/partial" bash scripts/device-suite-keep.sh "$T/out" >"$T/log" 2>&1 || fail "exit $?: $(cat "$T/log")"
cmp -s "$T/out/suite-run.tar.gz" "$T/partial/suite-run.tar.gz" || fail "the run was not kept"
cmp -s "$T/out/torch-fp32.json" "$T/partial/torch-fp32.json" || fail "torch-fp32.json was not kept"
[ "$(stat -c %a "$T/partial/torch-fp32.json")" = 644 ] || fail "mode $(stat -c %a "$T/partial/torch-fp32.json")"
grep -q '"problems": \[\]}' "$T/partial/torch-bf16.json" && ! grep -q probl\$ "$T/partial/torch-bf16.json" ||
    fail "a torn torch-bf16.json replaced the kept one"
grep -q "torch-bf16.json is not JSON: not kept" "$T/log" || fail "no word on the torn file: $(cat "$T/log")"
grep -q "3 of 9 pairs done" "$T/log" || fail "no progress line: $(cat "$T/log")"
ls -a "$T/partial" | grep -q '\.tmp$' && fail "a temporary file was left"
# test-gpu's verdicts go to KBV_TESTED, whatever the partial folder.
echo 'abc 0123 smoke PASS' >"$T/out/test-gpu.txt"
KBV_PARTIAL="$T/partial" bash scripts/device-suite-keep.sh "$T/out" >/dev/null 2>&1
cmp -s "$T/out/test-gpu.txt" "$T/tested/test-gpu.txt" && [ ! -e "$T/partial/test-gpu.txt" ] ||
    fail "test-gpu.txt not kept in KBV_TESTED alone"
rm "$T/out/test-gpu.txt"
# The call's GPU is appended to devices.txt, one line per call.
echo '0, NVIDIA H200, GPU-1234, 1650, 00000000:00:06.0' >"$T/out/device.txt"
KBV_PARTIAL="$T/partial" bash scripts/device-suite-keep.sh "$T/out" >/dev/null 2>&1
KBV_PARTIAL="$T/partial" bash scripts/device-suite-keep.sh "$T/out" >/dev/null 2>&1
[ "$(grep -c 'GPU-1234' "$T/partial/devices.txt")" = 2 ] || fail "devices.txt: $(cat "$T/partial/devices.txt")"
rm "$T/out/device.txt"
printf 'not gzip' >"$T/out/suite-run.tar.gz"
rm "$T/out/torch-fp32.json" "$T/out/torch-bf16.json"
KBV_PARTIAL="$T/partial" bash scripts/device-suite-keep.sh "$T/out" >"$T/log" 2>&1
[ $? -eq 1 ] || fail "a folder with only a torn archive did not exit 1: $(cat "$T/log")"
gzip -t "$T/partial/suite-run.tar.gz" || fail "a torn archive replaced the kept run"
KBV_PARTIAL="$T/partial" bash scripts/device-suite-keep.sh "$T/empty" >/dev/null 2>&1
[ $? -eq 1 ] || fail "an empty folder did not exit 1"
KBV_PARTIAL="$T/partial" bash scripts/device-suite-keep.sh "$T/nothere" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a missing folder did not exit 2"
echo "device_suite_keep: ok"
