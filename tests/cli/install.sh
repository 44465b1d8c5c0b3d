#!/usr/bin/env bash
# make install into a staging folder (DESTDIR): the programs, the header and
# the templates land under PREFIX, and the installed programs find their own
# templates from there (kbv prompt, kbv render) outside the checkout.
set -u
build=$1
fail() { echo "FAIL: $*"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
make --no-print-directory BUILD="$build" install DESTDIR="$t/stage" PREFIX=/opt/kbv >"$t/log" 2>&1 ||
    fail "make install: $(tail -3 "$t/log")"
root=$t/stage/opt/kbv
for f in bin/kbv bin/kbv-analyze bin/kbv-render bin/kbv-merge bin/kbv-list bin/kbv-prompt include/kbv.h \
         share/kbv/templates/report.json share/kbv/templates/style.json; do
    [ -e "$root/$f" ] || fail "$f not installed"
done
cp -r tests/fixtures/run_small "$t/run"
(
    cd "$t" || exit 1
    env -u KBV_TEMPLATES "$root/bin/kbv" prompt L1_019_relu >prompt.txt || fail "installed kbv prompt"
    grep -q 'L1_019_relu' prompt.txt || fail "installed kbv prompt printed no problem"
    env -u KBV_TEMPLATES "$root/bin/kbv" report run >report.log 2>&1 || fail "installed kbv report: $(tail -2 report.log)"
    [ -f run/report/report.pdf ] || fail "installed kbv report wrote no PDF"
) || exit 1
exit 0
