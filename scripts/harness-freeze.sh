#!/usr/bin/env bash
# scripts/harness-freeze.sh COMMIT OUT.tar.gz - the sources of COMMIT that
# build kbv and run a collect, as one archive, so that a whole-suite run
# that outlasts several sessions is finished by the harness that started it
# while main moves on.
#
# Why.  A snapshot is collected by one harness (scripts/harness-digest.sh),
# and the suite takes more than one session's device time.  Without this,
# any fix to collect made while the run is in progress either waits for
# the run or restarts it.  With it, scripts/device-suite.sh builds the
# frozen sources (KBV_HARNESS_SRC, default data/suite-partial/harness-src.tar.gz)
# in a folder of their own and continues the run with them; the manifest
# names COMMIT, and the digest check of scripts/suite-session.sh still
# refuses any other harness.
#
# The archive holds COMMIT's tree without what a collect does not build or
# read (data/snapshots, the runs in progress data/suite-partial and
# data/suite-h100, data/parity, docs, bench, and
# tests but for the make fragments the Makefile includes), and a file
# KBV_COMMIT with COMMIT's full hash, from which the build names its commit
# (the tree has no .git).  It is written to a temporary name and renamed.
# Prints the frozen tree's harness digest.
set -euo pipefail
commit=${1:?usage: scripts/harness-freeze.sh COMMIT OUT.tar.gz}
out=${2:?usage: scripts/harness-freeze.sh COMMIT OUT.tar.gz}
cd "$(dirname "$0")/.."
full=$(git rev-parse --verify "$commit^{commit}") || { echo "harness-freeze: $commit is no commit" >&2; exit 2; }
tmp=$(mktemp -d /tmp/kbv-freeze.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git archive "$full" -- . ':!data/snapshots' ':!data/suite-partial' ':!data/suite-h100' ':!data/parity' ':!docs' ':!bench' ':!tests' |
    tar -C "$tmp/src" -xf -
git archive "$full" -- tests/module.mk tests/fuzz/fuzz.mk | tar -C "$tmp/src" -xf -
echo "$full" >"$tmp/src/KBV_COMMIT"
digest=$(scripts/harness-digest.sh "$tmp/src")
tar -C "$tmp/src" -czf "$tmp/out.tar.gz" .
mv "$tmp/out.tar.gz" "$out.tmp.$$" && mv "$out.tmp.$$" "$out"
echo "harness-freeze: $full (harness $digest) -> $out"
