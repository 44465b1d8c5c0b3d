#!/usr/bin/env bash
# check-candidates.sh - compiles every bundled candidate the way kbv-collect
# does (docs/DESIGN.md section 5a) and checks every set.json.
#
#   scripts/check-candidates.sh [--no-compile] [SET_DIR...]
#                                        default: data/candidates/*/
#
# --no-compile checks the set.json files only (no nvcc needed).
# Environment: NVCC (default nvcc), ARCH (default sm_90), JOBS (default: the
# number of cores), KBV_CHECK_CACHE (a folder remembering sources that
# compiled, keyed by the SHA-256 of source, flags and compiler version;
# default ${XDG_CACHE_HOME:-$HOME/.cache}/kbv-check; set it empty to
# disable), BUILD (default build).  When $BUILD/kbv-list exists, every file name and every key of
# "expected" must be a problem id of the suite.
# Exit 0 when every file compiles and every set.json is well-formed, else 1.
set -u

COMPILE=1
if [ "${1:-}" = "--no-compile" ]; then
    COMPILE=0
    shift
fi
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
CACHE=${KBV_CHECK_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/kbv-check}
FLAGS="-shared -Xcompiler -fPIC -cudart shared -arch=$ARCH -O3 -std=c++17 -Iinclude"

cd "$(dirname "$0")/.." || exit 1
if [ "$COMPILE" = 1 ] && ! command -v "$NVCC" >/dev/null 2>&1; then
    echo "check-candidates: $NVCC not found" >&2
    exit 1
fi
[ $# -gt 0 ] || set -- data/candidates/*/
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
[ -n "$CACHE" ] && mkdir -p "$CACHE"
VERSION=$([ "$COMPILE" = 1 ] && "$NVCC" --version | tail -1)

# The suite's ids, when the list program has been built.
IDS=""
BUILD=${BUILD:-build}
if [ -x "$BUILD/kbv-list" ]; then
    "$BUILD/kbv-list" --json 2>/dev/null |
        python3 -c 'import json,sys; [print(p["id"]) for p in json.load(sys.stdin)["problems"]]' > "$TMP/ids" 2>/dev/null
    [ -s "$TMP/ids" ] && IDS="$TMP/ids"
fi

# Compiles one source to a private object; prints one verdict line, and the
# compiler's log on failure.
compile_one() {
    local src=$1 key name
    key=$( { printf '%s\n%s\n' "$FLAGS" "$VERSION"; cat "$src"; } | sha256sum | cut -c1-64)
    if [ -n "$CACHE" ] && [ -f "$CACHE/$key" ]; then
        echo "ok   $src (cached)"
        return 0
    fi
    name=$(echo "$src" | tr '/' '_')
    # shellcheck disable=SC2086
    if "$NVCC" $FLAGS -o "$TMP/$name.so" "$src" >"$TMP/$name.log" 2>&1; then
        # kbv looks the entry point up by its C name.
        if ! nm -D --defined-only "$TMP/$name.so" | grep -q ' T kbv_forward$'; then
            echo "FAIL $src: no exported kbv_forward (extern \"C\")"
            return 1
        fi
        rm -f "$TMP/$name.so"
        if [ -n "$CACHE" ]; then : > "$CACHE/$key"; fi
        echo "ok   $src"
        return 0
    fi
    echo "FAIL $src"
    sed 's/^/     /' "$TMP/$name.log"
    return 1
}
export -f compile_one
export NVCC FLAGS CACHE TMP VERSION

status=0
: > "$TMP/srcs"
for dir in "$@"; do
    dir=${dir%/}
    python3 - "$dir" "$IDS" <<'PY' || status=1
import json, os, sys
d, idfile = sys.argv[1], sys.argv[2]
bad = []
try:
    s = json.load(open(os.path.join(d, "set.json")))
except Exception as ex:
    print("FAIL %s/set.json: %s" % (d, ex)); sys.exit(1)
for k in ("name", "description", "origin"):
    if not isinstance(s.get(k), str) or not s[k]:
        bad.append("missing string %r" % k)
if s.get("name") != os.path.basename(d):
    bad.append("name %r is not the folder name" % s.get("name"))
exp = s.get("expected", {})
if not isinstance(exp, dict):
    bad.append("expected is not an object"); exp = {}
classes = {"error", "incorrect", "constant-output", "identity", "stale-output",
           "caching", "input-mutation", "deferred-work", "impossible-speed",
           "nondeterministic", "hidden-fail", "correct"}
files = {f[:-3] for f in os.listdir(d) if f.endswith(".cu")}
ids = set(open(idfile).read().split()) if idfile else None
for p, c in sorted(exp.items()):
    if c not in classes: bad.append("%s: unknown class %r" % (p, c))
    if p not in files: bad.append("%s: expected, but there is no %s.cu" % (p, p))
if os.path.basename(d) == "hacks":
    for f in sorted(files - set(exp)):
        bad.append("%s.cu has no expected class (required for hacks)" % f)
if ids is not None:
    for f in sorted(files - ids):
        bad.append("%s.cu: not a problem of the suite" % f)
for b in bad: print("FAIL %s/set.json: %s" % (d, b))
print("%s %s/set.json (%d sources, %d expected)" % ("ok  " if not bad else "FAIL", d, len(files), len(exp)))
sys.exit(1 if bad else 0)
PY
    ls "$dir"/*.cu 2>/dev/null >> "$TMP/srcs"
done

n=$(wc -l < "$TMP/srcs")
if [ "$COMPILE" = 0 ]; then
    echo "check-candidates: $n sources, set.json only"
    exit $status
fi
xargs -P "$JOBS" -I{} bash -c 'compile_one "$1"' _ {} < "$TMP/srcs" > "$TMP/out"
cat "$TMP/out"
fails=$(grep -c '^FAIL' "$TMP/out")
echo "check-candidates: $n sources, $fails failed to compile"
[ "$fails" -eq 0 ] || status=1
exit $status
