#!/usr/bin/env bash
# The Debian packages kbv and its tests need.
#   scripts/deps.sh check     exit 0 when everything is present
#   scripts/deps.sh install   apt-get install them when root, else print the line
set -u
packages=(build-essential pkg-config libcjson-dev libssl-dev zlib1g-dev libcairo2-dev
          libhpdf-dev fonts-dejavu-core libcmocka-dev qpdf poppler-utils libxml2-utils
          librsvg2-bin python3)

# What each package provides that kbv uses, so that `check` looks at the
# files themselves (packages installed another way count too).
have_all() {
    local missing=()
    [ -f /usr/include/cjson/cJSON.h ] || missing+=(libcjson-dev)
    [ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
    [ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
    pkg-config --exists cairo 2>/dev/null || missing+=(libcairo2-dev)
    [ -f /usr/include/hpdf.h ] || missing+=(libhpdf-dev)
    [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
    [ -f /usr/include/cmocka.h ] || missing+=(libcmocka-dev)
    command -v qpdf >/dev/null || missing+=(qpdf)
    command -v pdftotext >/dev/null || missing+=(poppler-utils)
    command -v xmllint >/dev/null || missing+=(libxml2-utils)
    command -v rsvg-convert >/dev/null || missing+=(librsvg2-bin)
    command -v python3 >/dev/null || missing+=(python3)
    command -v cc >/dev/null || missing+=(build-essential)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "kbv: deps: missing: ${missing[*]}" >&2
        return 1
    fi
    return 0
}

case "${1:-check}" in
check)
    have_all
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
    have_all
    ;;
*)
    echo "usage: scripts/deps.sh check|install" >&2
    exit 2
    ;;
esac
