#!/usr/bin/env bash
# Issue 19, cases 1-3 (archives): SHA256SUMS seals the raw files and nothing
# after collect rewrites their lines.  A journal changed after sealing fails
# `kbv verify` even after `kbv analyze` (case 1); an empty SHA256SUMS, one
# without a raw file's line, and a file in the run's root that is not
# listed fail too (case 2, and case 3's second journal); `kbv seal --key`
# signs SHA256SUMS with Ed25519 and `kbv verify --pubkey` checks it; the
# archived snapshot still verifies; a merged run is sealed, and merge
# refuses a sealed shard that changed.
# usage: tests/cli/archive_seal.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd)
K="$build/kbv"
export KBV_TEMPLATES="$PWD/templates"
unset SOURCE_DATE_EPOCH
tmp=$(mktemp -d /tmp/kbv-archive-seal.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "archive_seal: $*"; exit 1; }

# A run as collect leaves it: the raw files and their sealed lines.
mkrun() {
    rm -rf "$1" && cp -R tests/fixtures/run_small "$1" && rm -f "$1/synth_truth.json"
    (cd "$1" && sha256sum manifest.json samples.jsonl >SHA256SUMS)
}
# fails_verify NAME DIR WORDS: kbv verify DIR exits 2 with WORDS on its output.
fails_verify() {
    "$K" verify "$2" >"$tmp/out" 2>&1; local rc=$?
    [ $rc -eq 2 ] || { cat "$tmp/out"; fail "$1: verify exits $rc, want 2"; }
    grep -q -- "$3" "$tmp/out" || { cat "$tmp/out"; fail "$1: no '$3' in verify's output"; }
}

# The archived snapshot verifies as it is.
for s in data/snapshots/*/; do
    "$K" verify "$s" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "snapshot $s does not verify"; }
done

# An intact run verifies before and after kbv report, which adds the lines
# of analysis.json and report/ and keeps the raw files' lines as they were.
r="$tmp/run"
mkrun "$r"
grep ' samples.jsonl$' "$r/SHA256SUMS" >"$tmp/raw_line"
"$K" verify "$r" >/dev/null 2>&1 || fail "a sealed run does not verify"
"$K" report "$r" >/dev/null 2>&1 || fail "kbv report on a sealed run"
"$K" verify "$r" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "verify after kbv report"; }
grep -q '^analysis.json: OK' "$tmp/out" || fail "analysis.json not listed after kbv report"
grep -q '^report/report.pdf: OK' "$tmp/out" || fail "report/report.pdf not listed after kbv report"
grep -qxF "$(cat "$tmp/raw_line")" "$r/SHA256SUMS" || fail "kbv report rewrote the journal's line"

# Case 1: a time changed in the journal, then kbv analyze: verify fails.
sed -i '23s/"gpu_ms":[0-9.]*/"gpu_ms":0.001/' "$r/samples.jsonl"
"$K" analyze "$r" >/dev/null 2>&1 || fail "analyze of the changed journal"
grep -qxF "$(cat "$tmp/raw_line")" "$r/SHA256SUMS" || fail "kbv analyze rewrote the journal's line"
fails_verify "changed journal after analyze" "$r" '^samples.jsonl: FAILED'

# Case 2: an empty SHA256SUMS; a raw file's line removed after the file
# changed; an unlisted file in the root.
mkrun "$r"
: >"$r/SHA256SUMS"
fails_verify "empty SHA256SUMS" "$r" 'lists no file'
mkrun "$r"
sed -i 's/"run_id"/"run_id_"/' "$r/manifest.json"
sed -i '/ manifest.json$/d' "$r/SHA256SUMS"
fails_verify "manifest line removed" "$r" '^manifest.json: NOT LISTED'
mkrun "$r"
echo '{}' >"$r/extra.json"
fails_verify "unlisted file" "$r" '^extra.json: NOT LISTED'

# Case 3: a second journal beside the first: verify and analyze refuse it.
mkrun "$r"
head -100 "$r/samples.jsonl" | gzip -c >"$r/samples.jsonl.gz"
fails_verify "second journal" "$r" '^samples.jsonl.gz: NOT LISTED'
"$K" analyze "$r" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "analyze with two journals exits $rc, want 2"
grep -q 'both samples.jsonl and samples.jsonl.gz' "$tmp/err" || { cat "$tmp/err"; fail "analyze: two journals not named"; }
[ ! -e "$r/analysis.json" ] || fail "analyze with two journals wrote analysis.json"

# Signatures.
if command -v openssl >/dev/null 2>&1 && openssl genpkey -algorithm ed25519 -out "$tmp/k.pem" 2>/dev/null; then
    openssl pkey -in "$tmp/k.pem" -pubout -out "$tmp/k.pub" 2>/dev/null || fail "openssl pkey"
    openssl genpkey -algorithm ed25519 -out "$tmp/k2.pem" 2>/dev/null
    openssl pkey -in "$tmp/k2.pem" -pubout -out "$tmp/k2.pub" 2>/dev/null
    mkrun "$r"
    "$K" seal --key "$tmp/k.pem" "$r" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "seal"; }
    [ -s "$r/SHA256SUMS.sig" ] || fail "seal wrote no SHA256SUMS.sig"
    "$K" verify --pubkey "$tmp/k.pub" "$r" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "verify --pubkey of a sealed run"; }
    "$K" verify --pubkey "$tmp/k2.pub" "$r" >"$tmp/out" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q 'signature does not match' "$tmp/out" || { cat "$tmp/out"; fail "another key: exit $rc"; }
    # SHA256SUMS rewritten along with a changed journal: the sums match,
    # the signature does not.
    sed -i '23s/"gpu_ms":[0-9.]*/"gpu_ms":0.001/' "$r/samples.jsonl"
    (cd "$r" && sha256sum manifest.json samples.jsonl >SHA256SUMS)
    "$K" verify "$r" >/dev/null 2>&1 || fail "rewritten sums should match without --pubkey"
    "$K" verify --pubkey "$tmp/k.pub" "$r" >"$tmp/out" 2>&1; rc=$?
    [ $rc -eq 2 ] || { cat "$tmp/out"; fail "rewritten sums pass the signature check"; }
    # seal refuses a run that does not verify, and a key of another kind
    mkrun "$r"
    echo x >>"$r/samples.jsonl"
    "$K" seal --key "$tmp/k.pem" "$r" >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] && [ ! -e "$r/SHA256SUMS.sig" ] || fail "seal of a changed run: exit $rc"
    "$K" seal --key "$tmp/k.pub" "$tmp/run" >/dev/null 2>&1; [ $? -eq 2 ] || fail "seal with a public key"
    "$K" seal "$r" >/dev/null 2>&1; [ $? -eq 2 ] || fail "seal without --key"
    if openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 -out "$tmp/rsa.pem" 2>/dev/null; then
        mkrun "$r"
        "$K" seal --key "$tmp/rsa.pem" "$r" >/dev/null 2>"$tmp/err"; rc=$?
        [ $rc -eq 2 ] && grep -q 'not an Ed25519 key' "$tmp/err" || fail "seal with an RSA key: exit $rc"
    fi
else
    echo "archive_seal: no openssl with Ed25519: signatures not tested"
fi

# A merged run is sealed by merge.
if [ -x "$build/kbv-merge" ]; then
    mkdir -p "$tmp/s1"
    echo '{"schema":"kbv-run/1","run_id":"s1","created_utc":"2026-01-01T00:00:00Z","config":{"seed":1},
           "problems":["p1","p2"],"sets":[{"name":"a","dir":"x","files":{}}]}' >"$tmp/s1/manifest.json"
    printf '%s\n' '{"type":"status","set":"a","problem":"p1","status":"missing","detail":""}' \
        '{"type":"status","set":"a","problem":"p2","status":"missing","detail":""}' >"$tmp/s1/samples.jsonl"
    "$K" merge "$tmp/m" "$tmp/s1" >/dev/null 2>&1 || fail "merge of one shard"
    "$K" verify "$tmp/m" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "a merged run does not verify"; }
    "$K" merge "$tmp/s1/out" "$tmp/s1" >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] && grep -q 'inside the shard' "$tmp/err" || { cat "$tmp/err"; fail "merge into a shard: exit $rc"; }
    [ ! -e "$tmp/s1/out" ] || fail "merge wrote inside a shard"
    # A sealed shard whose journal changed is refused: merging would seal
    # the change anew.
    (cd "$tmp/s1" && sha256sum manifest.json samples.jsonl >SHA256SUMS)
    rm -rf "$tmp/m" && "$K" merge "$tmp/m" "$tmp/s1" >/dev/null 2>&1 || fail "merge of a sealed shard"
    sed -i 's/"missing","detail":""/"missing","detail":"x"/' "$tmp/s1/samples.jsonl"
    rm -rf "$tmp/m" && "$K" merge "$tmp/m" "$tmp/s1" >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] && grep -q 'fails kbv verify' "$tmp/err" || { cat "$tmp/err"; fail "merge of a changed shard: exit $rc"; }
    [ ! -e "$tmp/m" ] || fail "merge of a changed shard wrote a run"
fi
exit 0
