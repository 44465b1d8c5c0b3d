#!/bin/bash
# scripts/harness-freeze.sh: the archive of a commit builds the harness of
# that commit (the same digest as the commit's own tree), names the commit
# in KBV_COMMIT, holds the make fragments the Makefile includes and none of
# the archived data; a name that is no commit is refused with nothing
# written.  Skipped (pass) outside a git checkout.
set -u
git rev-parse --verify HEAD >/dev/null 2>&1 || { echo "skip: not a git checkout"; exit 0; }
T=$(mktemp -d /tmp/kbv-cli-freeze.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "harness_freeze: $*"; exit 1; }
head=$(git rev-parse HEAD)
scripts/harness-freeze.sh HEAD "$T/h.tar.gz" >"$T/log" 2>&1 || fail "exited $?: $(cat "$T/log")"
mkdir "$T/src" "$T/head"
tar -C "$T/src" -xzf "$T/h.tar.gz" || fail "the archive does not unpack"
[ "$(cat "$T/src/KBV_COMMIT")" = "$head" ] || fail "KBV_COMMIT is $(cat "$T/src/KBV_COMMIT"), not $head"
for f in Makefile tests/module.mk tests/fuzz/fuzz.mk collect scripts/suite-session.sh data/candidates data/baselines; do
    [ -e "$T/src/$f" ] || fail "the archive lacks $f"
done
for f in data/snapshots data/suite-partial data/parity docs bench tests/cli; do
    [ -e "$T/src/$f" ] && fail "the archive holds $f, which no collect builds or reads"
done
# The digest of HEAD's own tree (not the working tree, which may differ).
git archive HEAD | tar -C "$T/head" -xf -
want=$(scripts/harness-digest.sh "$T/head")
[ "$(scripts/harness-digest.sh "$T/src")" = "$want" ] || fail "the frozen tree's harness digest differs from HEAD's"
grep -q "harness $want" "$T/log" || fail "the digest printed is not HEAD's: $(cat "$T/log")"
scripts/harness-freeze.sh no-such-commit "$T/bad.tar.gz" >"$T/log2" 2>&1 && fail "a name that is no commit was accepted"
grep -q "no-such-commit is no commit" "$T/log2" || fail "the refusal does not say why: $(cat "$T/log2")"
[ -e "$T/bad.tar.gz" ] && fail "a refused freeze wrote its output"
echo "harness_freeze: ok"
