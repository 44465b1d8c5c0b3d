#!/usr/bin/env bash
# The Debian packages kbv and its tests need.
#   scripts/deps.sh check [build|test]   exit 0 when everything is present
#   scripts/deps.sh install              apt-get install them when root, else print the line
#   scripts/deps.sh unpack DIR           download the shared libraries collect and render
#                                        need and unpack them into DIR, for a GPU host without
#                                        a package registry (README; make DEPS_ROOT=DIR)
# `build` is what building and `make report` need; `test` (the default) adds
# the tools the tests use.  DEPS_ROOT names a folder of unpacked packages
# (usr/include, usr/lib, usr/share/fonts) that counts as installed.
set -u
packages=(build-essential pkg-config libcjson-dev libssl-dev zlib1g-dev libcairo2-dev
          libhpdf-dev fonts-dejavu-core libcmocka-dev qpdf poppler-utils libxml2-utils
          librsvg2-bin python3 python3-numpy slurm-wlm munge clang libclang-rt-14-dev)

# What each package provides that kbv uses, so that `check` looks at the
# files themselves (packages installed another way count too).
root=${DEPS_ROOT:-}
have_file() { [ -f "$1" ] || { [ -n "$root" ] && [ -f "$root$1" ]; }; }

have_all() {
    local what=${1:-test}
    local missing=()
    have_file /usr/include/cjson/cJSON.h || missing+=(libcjson-dev)
    have_file /usr/include/openssl/evp.h || missing+=(libssl-dev)
    have_file /usr/include/zlib.h || missing+=(zlib1g-dev)
    have_file /usr/include/cairo/cairo.h || missing+=(libcairo2-dev)
    have_file /usr/include/hpdf.h || missing+=(libhpdf-dev)
    have_file /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || missing+=(fonts-dejavu-core)
    command -v python3 >/dev/null || missing+=(python3)
    command -v cc >/dev/null || missing+=(build-essential)
    if [ "$what" = build ]; then
        [ ${#missing[@]} -eq 0 ] && return 0
        echo "kbv: deps: missing: ${missing[*]}" >&2
        return 1
    fi
    have_file /usr/include/cmocka.h || missing+=(libcmocka-dev)
    command -v qpdf >/dev/null || missing+=(qpdf)
    command -v pdftotext >/dev/null || missing+=(poppler-utils)
    command -v xmllint >/dev/null || missing+=(libxml2-utils)
    command -v rsvg-convert >/dev/null || missing+=(librsvg2-bin)
    # tests/emu/ (the baseline's interpreter on the CPU, against numpy)
    python3 -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
    # tests/fuzz/ (make fuzz-ci): clang and its libFuzzer runtime, which
    # Debian ships in libclang-rt-14-dev (only recommended by clang-14).
    command -v clang >/dev/null || missing+=(clang)
    compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null ||
        missing+=(libclang-rt-14-dev)
    # tests/slurm/ starts a one-node Slurm cluster; KBV_SKIP_SLURM=1 skips it.
    if [ "${KBV_SKIP_SLURM:-0}" != 1 ]; then
        # The daemons live in /usr/sbin, which a user's PATH may lack.
        { [ -x /usr/sbin/slurmctld ] || command -v slurmctld >/dev/null; } && command -v sbatch >/dev/null ||
            missing+=(slurm-wlm)
        [ -x /usr/sbin/munged ] || command -v munged >/dev/null || missing+=(munge)
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        echo "kbv: deps: missing: ${missing[*]}" >&2
        return 1
    fi
    return 0
}

# What a host without a registry lacks for `make all` and render: the
# libraries and their headers, not the compilers or the test tools.
unpacked=(libcjson1 libcjson-dev libcairo2 libcairo2-dev libhpdf-2.3.0 libhpdf-dev libpixman-1-0
          libfreetype6 libfreetype-dev libfontconfig1 libfontconfig-dev libpng16-16 libpng-dev libxcb1
          libxcb-render0 libxcb-shm0 libx11-6 libxext6 libxrender1 libxau6 libxdmcp6 libbsd0 libmd0
          libbrotli1 libexpat1 fonts-dejavu-core)

case "${1:-check}" in
check)
    have_all "${2:-test}"
    ;;
install)
    if have_all 2>/dev/null; then
        echo "kbv: deps: all present"
        exit 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "kbv: deps: not root; install them with:" >&2
        echo "  sudo apt-get install -y ${packages[*]}" >&2
        exit 1
    fi
    echo "kbv: deps: installing ${packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null ||
        { echo "kbv: deps: apt-get failed" >&2; exit 1; }
    # Debian's python3-numpy serves /usr/bin/python3; the tests run the
    # python3 on PATH, which on a host with its own Python (pyenv, a
    # virtual environment) does not see it: that one gets numpy from pip.
    if ! python3 -c 'import numpy' 2>/dev/null; then
        echo "kbv: deps: $(command -v python3) lacks numpy: python3 -m pip install numpy"
        python3 -m pip install -q numpy >/dev/null 2>&1 ||
            { echo "kbv: deps: pip could not install numpy for $(command -v python3)" >&2; exit 1; }
    fi
    have_all
    ;;
unpack)
    dir=${2:?usage: scripts/deps.sh unpack DIR}
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kbv-debs.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get download "${unpacked[@]}" >/dev/null) ||
        { echo "kbv: deps: apt-get download failed (no registry here? run it where there is one)" >&2; exit 1; }
    mkdir -p "$dir" || exit 1
    n=0
    for f in "$tmp"/*.deb; do
        [ -f "$f" ] || continue
        dpkg -x "$f" "$dir" || { echo "kbv: deps: $f does not unpack into $dir" >&2; exit 1; }
        n=$((n + 1))
    done
    [ "$n" -eq "${#unpacked[@]}" ] ||
        { echo "kbv: deps: $n packages downloaded, ${#unpacked[@]} wanted" >&2; exit 1; }
    echo "kbv: deps: $n packages unpacked into $dir (make DEPS_ROOT=$dir)"
    ;;
*)
    echo "usage: scripts/deps.sh check|install|unpack DIR" >&2
    exit 2
    ;;
esac
