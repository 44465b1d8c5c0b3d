#!/usr/bin/env bash
# Issue 19, case 10: kbv-collect reads candidates only as regular files
# inside their set folder (a candidate that links to /etc/passwd and a
# folder named like a candidate are usage errors, exit 2), refuses a
# set.json that is not an object with a "name" ([1,2], {}, an unknown key),
# repeated or empty GPU ids in --gpus, and an --out inside a candidate
# folder; all before any GPU work.  kbv-collect is built here from
# collect/supervise/collect_main.c with the host libraries (no nvcc, no worker: a run
# that passes every check stops at the missing worker, exit 1).
# usage: tests/cli/collect_inputs.sh BUILD_DIR
set -u
B=${1:-build}
for l in libkbv_collecthost.a libkbv_suite.a libkbv_common.a; do
    [ -f "$B/$l" ] || { echo "skip: no $B/$l"; exit 0; }
done
T=$(mktemp -d /tmp/kbv-collect-inputs.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "collect_inputs: $*"; exit 1; }
DEPS_I= DEPS_L=
if [ -n "${DEPS_ROOT:-}" ]; then
    DEPS_I="-I$DEPS_ROOT/usr/include"
    DEPS_L="-L$DEPS_ROOT/usr/lib/x86_64-linux-gnu -Wl,-rpath,$(cd "$DEPS_ROOT" && pwd)/usr/lib/x86_64-linux-gnu"
fi
mkdir -p "$T/bin"
gcc $DEPS_I -std=c11 -O1 -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -Iinclude -Icommon -Icollect/supervise -Icollect/suite -c collect/supervise/collect_main.c \
    -o "$T/collect_main.o" 2>"$T/cc" || { cat "$T/cc"; fail "collect_main.c does not build"; }
gcc -o "$T/bin/kbv-collect" "$T/collect_main.o" "$B/libkbv_collecthost.a" "$B/libkbv_suite.a" "$B/libkbv_common.a" \
    $DEPS_L -lcjson -lcrypto -lz -lm || fail "kbv-collect does not link"
C="$T/bin/kbv-collect --suite smoke --problems L1_019_relu"
export KBV_CACHE="$T/cache"

# refused NAME WORDS CMD...: exit 2, WORDS in the message, no run folder.
refused() {
    local name=$1 words=$2; shift 2
    timeout 20 "$@" >/dev/null 2>"$T/err"; local rc=$?
    [ $rc -eq 2 ] || { cat "$T/err"; fail "$name: exit $rc, want 2"; }
    grep -q -- "$words" "$T/err" || { cat "$T/err"; fail "$name: no '$words' in the message"; }
    [ ! -e "$T/out" ] || fail "$name: a run folder was made"
}
# passes NAME CMD...: the inputs are accepted (the run then stops at the
# missing worker, exit 1).
passes() {
    local name=$1; shift
    timeout 20 "$@" >/dev/null 2>"$T/err"; local rc=$?
    [ $rc -eq 1 ] && grep -q 'kbv-worker: not found' "$T/err" || { cat "$T/err"; fail "$name: exit $rc, want 1 at the worker"; }
    rm -rf "$T/out"
}

mkset() {  # mkset DIR: a set folder with set.json and one candidate
    mkdir -p "$1" && cp data/candidates/naive/L1_019_relu.cu "$1/" && echo '{"name": "'"$(basename "$1")"'"}' >"$1/set.json"
}
mkset "$T/good"
passes "a good set" $C --candidates "$T/good" --out "$T/out"

# A candidate that is a symbolic link, to a file outside or inside the set.
mkset "$T/link"
rm "$T/link/L1_019_relu.cu" && ln -s /etc/passwd "$T/link/L1_019_relu.cu"
refused "candidate -> /etc/passwd" "L1_019_relu.cu: a symbolic link" $C --candidates "$T/link" --out "$T/out"
mkset "$T/link2"
mv "$T/link2/L1_019_relu.cu" "$T/link2/real.txt" && ln -s real.txt "$T/link2/L1_019_relu.cu"
refused "candidate -> a file in the set" "a symbolic link" $C --candidates "$T/link2" --out "$T/out"
# A folder named like a candidate.
mkset "$T/dir"
rm "$T/dir/L1_019_relu.cu" && mkdir "$T/dir/L1_019_relu.cu"
refused "a folder named X.cu" "L1_019_relu.cu: a folder" $C --candidates "$T/dir" --out "$T/out"
# A FIFO named like a candidate: refused at once, not read.
mkset "$T/fifo"
rm "$T/fifo/L1_019_relu.cu" && mkfifo "$T/fifo/L1_019_relu.cu"
refused "a FIFO named X.cu" "not a regular file" $C --candidates "$T/fifo" --out "$T/out"

# set.json shapes.
for shape in '[1,2]' '{}' '"x"' '{"name": ""}' '{"name": 3}' '{"name": "s", "nmae": "typo"}' \
             '{"name": "s", "expected": [1]}' '{"name": "s", "precision": "fp16"}' \
             '{"name": "s", "precision": "fp32", "compare_with": "naive"}'; do
    mkset "$T/shape"
    echo "$shape" >"$T/shape/set.json"
    refused "set.json $shape" "set.json" $C --candidates "$T/shape" --out "$T/out"
    rm -rf "$T/shape"
done
mkset "$T/shape"
echo '{"name": "s", "description": "d", "origin": "o", "precision": "bf16", "compare_with": "naive", "expected": {}, "expected_status": {}}' >"$T/shape/set.json"
passes "set.json with every known key" $C --candidates "$T/shape" --out "$T/out"

# --gpus: repeated or empty ids.
for g in 0,0,0 0,,1 ,0 0, 1,0,1; do
    refused "--gpus $g" "--gpus" $C --candidates "$T/good" --gpus "$g" --out "$T/out"
done
passes "--gpus 0,1" $C --candidates "$T/good" --gpus 0,1 --out "$T/out"

# --out inside a candidate folder (a set folder, or a folder of sets).
refused "--out inside the set" "inside the candidate folder" $C --candidates "$T/good" --out "$T/good/run"
[ ! -e "$T/good/run" ] || fail "--out inside the set: the folder was made"
mkdir -p "$T/sets" && mkset "$T/sets/one"
refused "--out inside a folder of sets" "inside the candidate folder" $C --candidates "$T/sets" --out "$T/sets/run"
ln -s "$T/good" "$T/alias"
refused "--out through a link into the set" "inside the candidate folder" $C --candidates "$T/good" --out "$T/alias/r"
exit 0
