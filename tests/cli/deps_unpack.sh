#!/bin/bash
# scripts/deps.sh unpack DIR, with stand-ins for apt-get and dpkg: every
# package collect and render need is downloaded and unpacked into DIR;
# a download that fails, or that brings fewer packages than asked for,
# exits 1 and says so; no DIR is a usage error.
set -u
T=$(mktemp -d /tmp/kbv-cli-deps.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "deps_unpack: $*"; exit 1; }
mkdir -p "$T/bin"
cat >"$T/bin/apt-get" <<'SH'
#!/bin/sh
[ "$1" = download ] || exit 100
[ -n "${FAKE_APT_FAIL:-}" ] && exit 100
shift
for p in "$@"; do
    [ "$p" = "${FAKE_APT_SKIP:-}" ] && continue
    echo "$p" >"${p}_1.0_amd64.deb"
done
SH
cat >"$T/bin/dpkg" <<'SH'
#!/bin/sh
[ "$1" = -x ] || exit 2
mkdir -p "$3/pkgs" && cp "$2" "$3/pkgs/"
SH
chmod +x "$T/bin/"*
export PATH="$T/bin:$PATH" TMPDIR="$T"
bash scripts/deps.sh unpack "$T/root" >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
n=$(ls "$T/root/pkgs" | wc -l)
[ "$n" = 26 ] || fail "$n packages unpacked, not 26"
for p in libcjson-dev libcairo2-dev libhpdf-dev fonts-dejavu-core libfreetype6; do
    [ -f "$T/root/pkgs/${p}_1.0_amd64.deb" ] || fail "$p not unpacked"
done
grep -q "26 packages unpacked into $T/root (make DEPS_ROOT=$T/root)" "$T/out" || fail "message: $(cat "$T/out")"
ls "$T" | grep -q kbv-debs && fail "the download folder was left"
FAKE_APT_FAIL=1 bash scripts/deps.sh unpack "$T/r2" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "apt-get download failed" "$T/out" || fail "a failed download: $(cat "$T/out")"
FAKE_APT_SKIP=libhpdf-dev bash scripts/deps.sh unpack "$T/r3" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "25 packages downloaded, 26 wanted" "$T/out" || fail "a short download: $(cat "$T/out")"
bash scripts/deps.sh unpack >/dev/null 2>&1 && fail "unpack without a folder passed"
echo "deps_unpack: ok"
