#!/usr/bin/env bash
# Runs every unit test program (cmocka, TAP output) and every CLI test script,
# and ends with one summary line: "N passed, N failed".
# usage: tests/run.sh BUILD_DIR
set -u
build=${1:-build}
export CMOCKA_MESSAGE_OUTPUT=TAP
passed=0
failed=0
failures=()

for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    log=$(mktemp)
    "$t" >"$log" 2>&1
    rc=$?
    ok=$(grep -c '^ok ' "$log")
    bad=$(grep -c '^not ok ' "$log")
    passed=$((passed + ok))
    failed=$((failed + bad))
    if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
        # A crash or an exit before the plan finished counts as one failure.
        failed=$((failed + 1))
        failures+=("$name (exit $rc)")
        sed 's/^/    /' "$log" | tail -20
    elif [ "$bad" -gt 0 ]; then
        failures+=("$name")
        grep -A4 '^not ok ' "$log" | sed 's/^/    /'
    fi
    printf '  %-40s %d passed, %d failed\n' "$name" "$ok" "$bad"
    rm -f "$log"
done

for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    [ "${KBV_TEST_UNIT_ONLY:-0}" = 1 ] && break
    name=$(basename "$s" .sh)
    log=$(mktemp)
    if bash "$s" "$build" >"$log" 2>&1; then
        passed=$((passed + 1))
        printf '  %-40s ok\n' "cli/$name"
    else
        failed=$((failed + 1))
        failures+=("cli/$name")
        printf '  %-40s FAILED\n' "cli/$name"
        tail -20 "$log" | sed 's/^/    /'
    fi
    rm -f "$log"
done

if [ "${#failures[@]}" -gt 0 ]; then
    echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
