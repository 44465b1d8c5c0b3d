#!/usr/bin/env bash
# The dispatcher and every built program: --help and --version answer with
# exit 0; an unknown command or option is a usage error (exit 2) with a
# message on stderr; `kbv verify` catches a changed file.
set -u
build=$1
kbv=$build/kbv
fail() { echo "FAIL: $*"; exit 1; }

"$kbv" --help | grep -q '^usage: kbv' || fail "kbv --help"
"$kbv" --version | grep -q 'kbv' || fail "kbv --version"
"$kbv" >/dev/null 2>&1; [ $? -eq 2 ] || fail "kbv with no command should exit 2"
"$kbv" frobnicate 2>"$build/.err"; [ $? -eq 2 ] || fail "unknown command should exit 2"
grep -q "kbv: 'frobnicate' is not available" "$build/.err" || fail "unknown command message: $(cat "$build/.err")"
for prog in "$build"/kbv-*; do
    [ -x "$prog" ] || continue
    name=$(basename "$prog")
    "$prog" --help >/dev/null 2>&1 || fail "$name --help exits non-zero"
    "$prog" --help 2>&1 | grep -qi 'usage' || fail "$name --help prints no usage"
    "$prog" --version 2>&1 | grep -q 'kbv' || fail "$name --version"
    "$prog" --no-such-option >/dev/null 2>&1; rc=$?
    [ $rc -eq 2 ] || fail "$name --no-such-option exits $rc, want 2"
    sub=${name#kbv-}
    "$kbv" "$sub" --help >/dev/null 2>&1 || fail "kbv $sub --help"
done
"$kbv" verify --help | grep -q usage || fail "kbv verify --help"
"$kbv" report --help | grep -q usage || fail "kbv report --help"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
echo '{}' >"$t/manifest.json"
echo '{"type":"status"}' >"$t/samples.jsonl"
(cd "$t" && sha256sum manifest.json samples.jsonl >SHA256SUMS)
"$kbv" verify "$t" >/dev/null || fail "verify of an intact run"
echo '{"x":1}' >"$t/manifest.json"
"$kbv" verify "$t" >"$t/out" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "verify of a changed run exits $rc, want 2"
grep -q 'manifest.json: FAILED' "$t/out" || fail "verify does not name the changed file"
"$kbv" verify "$t/nope" 2>/dev/null; [ $? -eq 2 ] || fail "verify of a missing folder should exit 2"
exit 0
