#!/usr/bin/env bash
# bench/sandbox_diag.sh - builds bench/sandbox_diag.c and runs it in each
# mode (none, landlock, seccomp, both), under strace where there is one,
# keeping the failed system calls of each mode in OUT (default .).
set -u
cd "$(dirname "$0")/.." || exit 2
out=${OUT:-.}
cuda=${CUDA_HOME:-/usr/local/cuda}
gcc -std=gnu11 -O1 -D_GNU_SOURCE -Icommon -Icollect/supervise -Iinclude -I"$cuda/include" -o "$out/sandbox_diag" \
    bench/sandbox_diag.c common/err.c -L"$cuda/lib64" -L"$cuda/lib64/stubs" -lcuda || exit 1
for m in none landlock seccomp both; do
    "$out/sandbox_diag" "$m"
    if command -v strace >/dev/null; then
        strace -f -o "$out/strace-$m.txt" "$out/sandbox_diag" "$m" >/dev/null
        grep -E '= -1 E(ACCES|PERM|NOSYS)' "$out/strace-$m.txt" | head -20 | sed "s/^/  $m: /"
    fi
done
rm -f "$out/sandbox_diag"
