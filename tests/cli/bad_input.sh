#!/usr/bin/env bash
# Bad input everywhere: every program, given a bad argument or a bad file,
# exits 2 with "kbv: <stage>: ..." naming the path (and the line, where the
# file has lines), and leaves nothing half-written: no analysis.json, no
# report/, no merged run, no run folder, no "*.tmp.*" temporaries.
# collect's cases run where kbv-collect was built (nvcc); they need no GPU
# (--build-only, and every case fails before anything is built).
# usage: tests/cli/bad_input.sh BUILD_DIR
set -u
B=${1:-build}
K="$B/kbv"
T=$(mktemp -d /tmp/kbv-cli-bad.XXXXXX)
trap 'rm -rf "$T"' EXIT
export KBV_CACHE="$T/cache"
n=0
fail() { echo "bad_input: $*"; exit 1; }

# expect NAME STAGE WORDS -- COMMAND...: exit 2 and a message line
# "kbv: STAGE: ..." holding each of WORDS (fixed strings, "|"-separated).
expect() {
    local name=$1 stage=$2 words=$3
    shift 4
    "$@" >"$T/out" 2>"$T/err" </dev/null
    local rc=$?
    n=$((n + 1))
    [ $rc -eq 2 ] || { head -5 "$T/err"; fail "$name: exit $rc, want 2"; }
    local line
    line=$(grep -v "^kbv: $stage: warning: " "$T/err" | grep -m1 "^kbv: $stage: ") || { head -5 "$T/err"; fail "$name: no 'kbv: $stage: ' message"; }
    local IFS='|'
    for w in $words; do
        case "$line" in *"$w"*) ;; *) echo "$line"; fail "$name: the message does not say '$w'" ;; esac
    done
    return 0
}
# nothing NAME PATH...: none of the paths exists.
nothing() {
    local name=$1
    shift
    for p in "$@"; do [ ! -e "$p" ] || fail "$name: $p left behind"; done
}
no_temps() {
    local left
    left=$(find "$T" -name '*.tmp.*' | head -3)
    [ -z "$left" ] || fail "temporaries left behind: $left"
}

mkrun() {  # mkrun DIR: a copy of the small run fixture
    rm -rf "$1" && mkdir -p "$1" && cp tests/fixtures/run_small/manifest.json tests/fixtures/run_small/samples.jsonl "$1/"
}

# --- collect -----------------------------------------------------------------
if [ -x "$B/kbv-collect" ]; then
    C="$K collect --build-only --problems L1_019_relu"
    for s in 3/2 0/0 5/3 -1/2 1/2x a/b 1 ''; do
        expect "collect --shard '$s'" collect "--shard|$s" -- $C --shard "$s" --out "$T/c"
    done
    # Shards are numbered from 1 where the message says so (else from 0).
    if grep -q '1 <= I' "$T/err"; then
        expect "collect --shard 0/2" collect "--shard|0/2" -- $C --shard 0/2 --out "$T/c"
    else
        expect "collect --shard 2/2" collect "--shard|2/2" -- $C --shard 2/2 --out "$T/c"
    fi
    for s in abc -1 1e3 99999999999999999999999 ''; do
        expect "collect --seed '$s'" collect "--seed" -- $C --seed "$s" --out "$T/c"
    done
    for s in 0 -3 abc 101; do
        expect "collect --trials $s" collect "--trials" -- $C --trials "$s" --out "$T/c"
    done
    expect "collect --gpus abc" collect "--gpus|abc" -- $C --gpus abc --out "$T/c"
    expect "collect --suite" collect "--suite|nonsense" -- $C --suite nonsense --out "$T/c"
    expect "collect --problems" collect "NOPE" -- $K collect --build-only --problems 'NOPE*' --out "$T/c"
    expect "collect --candidates missing" collect "/no/such/dir" -- $C --candidates /no/such/dir --out "$T/c"
    expect "collect --bogus" collect "bogus" -- $C --bogus --out "$T/c"
    mkdir -p "$T/empty"
    expect "collect --candidates empty" collect "$T/empty" -- $C --candidates "$T/empty" --out "$T/c"
    # A set folder whose set.json is malformed (line 2), and one that is not JSON.
    mkdir -p "$T/badset" "$T/badset2"
    cp data/candidates/naive/L1_019_relu.cu "$T/badset/"
    printf '{"name": "x",\n "description": oops}\n' >"$T/badset/set.json"
    expect "collect malformed set.json" collect "$T/badset/set.json|line 2" -- $C --candidates "$T/badset" --out "$T/c"
    cp data/candidates/naive/L1_019_relu.cu "$T/badset2/"
    printf '\x1f\x8b\x08binary' >"$T/badset2/set.json"
    expect "collect binary set.json" collect "$T/badset2/set.json" -- $C --candidates "$T/badset2" --out "$T/c"
    # Two folders that call themselves the same set.
    mkdir -p "$T/twin1" "$T/twin2"
    echo '{"name": "twin"}' >"$T/twin1/set.json"
    echo '{"name": "twin"}' >"$T/twin2/set.json"
    expect "collect same set twice" collect "twin" -- $C --candidates "$T/twin1" --candidates "$T/twin2" --out "$T/c"
    nothing "collect" "$T/c"
    # --resume of a folder whose manifest is malformed.
    mkdir -p "$T/res" && echo '{' >"$T/res/manifest.json"
    expect "collect --resume bad manifest" collect "$T/res/manifest.json" -- $C --resume --out "$T/res"
    nothing "collect --resume" "$T/res/samples.jsonl"
else
    echo "bad_input: collect cases skipped (no $B/kbv-collect: built only with nvcc)"
fi

# --- analyze -----------------------------------------------------------------
expect "analyze missing dir" analyze "$T/nosuch" -- $K analyze "$T/nosuch"
expect "analyze no argument" analyze "RUN_DIR" -- $K analyze
expect "analyze --seed abc" analyze "--seed|abc" -- $K analyze --seed abc "$T/nosuch"
expect "analyze --resamples 0" analyze "--resamples" -- $K analyze --resamples 0 "$T/nosuch"
mkdir -p "$T/nomanifest"
expect "analyze no manifest" analyze "$T/nomanifest/manifest.json" -- $K analyze "$T/nomanifest"
mkrun "$T/other"
sed -i 's#"kbv-run/1"#"kbv-run/2"#' "$T/other/manifest.json"
expect "analyze other schema" analyze "$T/other|manifest.json|kbv-run/2" -- $K analyze "$T/other"
mkrun "$T/badman"
printf '{"schema": "kbv-run/1",\n "run_id": "x",\n oops}\n' >"$T/badman/manifest.json"
expect "analyze malformed manifest" analyze "$T/badman/manifest.json|line 3" -- $K analyze "$T/badman"
mkrun "$T/mid"
sed -i '100s/.*/{"type":"time","set":"tuned", garbage/' "$T/mid/samples.jsonl"
expect "analyze malformed middle line" analyze "$T/mid/samples.jsonl:100" -- $K analyze "$T/mid"
expect "analyze malformed middle line, 2 jobs" analyze "$T/mid/samples.jsonl:100" -- $K analyze --jobs 2 "$T/mid"
mkrun "$T/unk"
sed -i '7s/"set":"tuned"/"set":"nosuch"/' "$T/unk/samples.jsonl"
expect "analyze unknown set" analyze "$T/unk/samples.jsonl:7|nosuch" -- $K analyze "$T/unk"
mkrun "$T/neg"
sed -i '0,/"gpu_ms":[0-9.e-]*/s//"gpu_ms":-1/' "$T/neg/samples.jsonl"
expect "analyze negative time" analyze "$T/neg/samples.jsonl:|gpu_ms" -- $K analyze "$T/neg"
# A compressed journal cut short is an error, not a torn line.
mkrun "$T/gz"
gzip -c "$T/gz/samples.jsonl" | head -c 4000 >"$T/gz/samples.jsonl.gz"
rm "$T/gz/samples.jsonl"
expect "analyze truncated .gz" analyze "$T/gz/samples.jsonl.gz|truncated" -- $K analyze "$T/gz"
# Binary garbage as the journal.
mkrun "$T/bin"
head -c 3000 /dev/urandom | tr -d '\n' >"$T/bin/samples.jsonl"
printf '\n' >>"$T/bin/samples.jsonl"
expect "analyze binary journal" analyze "$T/bin/samples.jsonl:1" -- $K analyze "$T/bin"
for d in other badman mid unk neg gz bin nomanifest; do nothing "analyze $d" "$T/$d/analysis.json"; done
# An earlier analysis.json survives a failed analysis: only a complete new
# one replaces it (issue 19, case 4).
echo '{"stale":true}' >"$T/mid/analysis.json"
expect "analyze stale" analyze "$T/mid/samples.jsonl:100" -- $K analyze "$T/mid"
[ "$(cat "$T/mid/analysis.json")" = '{"stale":true}' ] || fail "analyze stale: the earlier analysis.json was not kept"

# --- render ------------------------------------------------------------------
cp -R tests/fixtures/render_run "$T/rr"
printf '{"title": "x",\n "subtitle": "y",\n oops}\n' >"$T/bad_tmpl.json"
expect "render malformed template" render "$T/bad_tmpl.json|line 3" -- $K render "$T/rr" --template "$T/bad_tmpl.json"
sed 's/"title": "\(.*\)"/"title": "\1 {{no_such_name}}"/' templates/report.json >"$T/unk_tmpl.json"
grep -q no_such_name "$T/unk_tmpl.json" || fail "could not make the unknown-placeholder template"
expect "render unknown placeholder" render "$T/unk_tmpl.json|{{no_such_name}}" -- $K render "$T/rr" --template "$T/unk_tmpl.json"
sed '0,/"title": "/s//"title": "{{run_id/' templates/report.json >"$T/open_tmpl.json"
expect "render unclosed placeholder" render "$T/open_tmpl.json|placeholder" -- $K render "$T/rr" --template "$T/open_tmpl.json"
expect "render missing template" render "/no/such.json" -- $K render "$T/rr" --template /no/such.json
printf '{"page": {"width": 595, "height": 842, "margin": 50},\n "nonsense": 1}\n' >"$T/bad_style.json"
expect "render bad style" render "$T/bad_style.json" -- $K render "$T/rr" --style "$T/bad_style.json"
printf '{\n "page": ]\n' >"$T/bad_style2.json"
expect "render malformed style" render "$T/bad_style2.json|line 2" -- $K render "$T/rr" --style "$T/bad_style2.json"
expect "render --bogus" render "bogus" -- $K render "$T/rr" --bogus
nothing "render" "$T/rr/report"
mkdir -p "$T/rnone"
expect "render no analysis" render "$T/rnone/analysis.json" -- $K render "$T/rnone"
expect "render missing dir" render "$T/nosuch" -- $K render "$T/nosuch"
mkdir -p "$T/rbad"
printf '{"schema": "kbv-analysis/1",\n "sets": [}\n' >"$T/rbad/analysis.json"
expect "render malformed analysis" render "$T/rbad/analysis.json|line 2" -- $K render "$T/rbad"
echo '{"schema": "kbv-analysis/1", "sets": 5}' >"$T/rbad/analysis.json"
expect "render analysis without fields" render "$T/rbad|analysis.json" -- $K render "$T/rbad"
echo '{"schema": "kbv-analysis/9"}' >"$T/rbad/analysis.json"
expect "render analysis of another schema" render "$T/rbad/analysis.json|kbv-analysis/9" -- $K render "$T/rbad"
nothing "render" "$T/rnone/report" "$T/rbad/report"

# --- report (analyze, then render) ---------------------------------------------
expect "report malformed line" analyze "$T/mid/samples.jsonl:100" -- $K report "$T/mid"
nothing "report" "$T/mid/report"
[ "$(cat "$T/mid/analysis.json")" = '{"stale":true}' ] || fail "report: the earlier analysis.json was not kept"

# --- merge -------------------------------------------------------------------
mkdir -p "$T/g1"
echo garbage >"$T/g1/manifest.json"
echo garbage >"$T/g1/samples.jsonl"
mkrun "$T/g2"
expect "merge garbage manifest" merge "$T/g1/manifest.json" -- $K merge "$T/m1" "$T/g1" "$T/g2"
mkrun "$T/g3"
printf '{"type":"status"\n' >"$T/g3/samples.jsonl"
expect "merge garbage journal" merge "$T/g3/samples.jsonl:1" -- $K merge "$T/m1" "$T/g2" "$T/g3"
mkrun "$T/g4"
expect "merge pair in two shards" merge "is in two shards|tuned/L1_001_square_matrix_multiplication" -- $K merge "$T/m1" "$T/g2" "$T/g4"
expect "merge missing shard" merge "$T/nosuch" -- $K merge "$T/m1" "$T/g2" "$T/nosuch"
expect "merge no shards" merge "RUN_DIR" -- $K merge "$T/m1"
nothing "merge" "$T/m1"

# --- prompt and list ---------------------------------------------------------
expect "prompt unknown id" prompt "NO_SUCH_ID" -- $K prompt NO_SUCH_ID
printf 'one\ntwo {{id}}\nthree {{nope}}\n' >"$T/p.txt"
expect "prompt unknown placeholder" prompt "$T/p.txt:3|{{nope}}" -- $K prompt --template "$T/p.txt" L1_019_relu
printf 'one\n{{id\n' >"$T/p2.txt"
expect "prompt unclosed placeholder" prompt "$T/p2.txt:2" -- $K prompt --template "$T/p2.txt" L1_019_relu
expect "prompt missing template" prompt "/no/such.txt" -- $K prompt --template /no/such.txt L1_019_relu
expect "list --bogus" list "bogus" -- $K list --bogus

# --- verify ------------------------------------------------------------------
mkrun "$T/v"
(cd "$T/v" && sha256sum manifest.json samples.jsonl >SHA256SUMS)
$K verify "$T/v" >/dev/null 2>&1 || fail "verify: an intact run must pass"
echo '{"type":"note"}' >>"$T/v/samples.jsonl"
expect "verify tampered" verify "$T/v/SHA256SUMS" -- $K verify "$T/v"
grep -q '^samples.jsonl: FAILED' "$T/out" || fail "verify tampered: samples.jsonl not reported as FAILED"
rm "$T/v/manifest.json"
expect "verify missing file" verify "$T/v/SHA256SUMS" -- $K verify "$T/v"
grep -q '^manifest.json: MISSING' "$T/out" || fail "verify: manifest.json not reported as MISSING"
printf '%s  manifest.json\nnot a sum\n' "$(printf '0%.0s' $(seq 64))" >"$T/v/SHA256SUMS"
expect "verify malformed SHA256SUMS" verify "$T/v/SHA256SUMS:2" -- $K verify "$T/v"
printf '%s  ../outside\n' "$(printf '0%.0s' $(seq 64))" >"$T/v/SHA256SUMS"
expect "verify escaping path" verify "$T/v/SHA256SUMS:1" -- $K verify "$T/v"
expect "verify missing dir" verify "$T/nosuch" -- $K verify "$T/nosuch"

no_temps
echo "bad_input: $n bad inputs, each exit 2 with the path named and nothing left behind"
