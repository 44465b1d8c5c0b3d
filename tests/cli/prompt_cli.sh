#!/usr/bin/env bash
# kbv prompt: the prompt for a known problem carries its expression, inputs
# and rules with every placeholder filled; an unknown id exits 2 with
# suggestions; a template with an unknown placeholder exits 2 naming it;
# --out writes the same text to a file.
set -u
build=$1
kbv=$build/kbv
fail() { echo "FAIL: $*"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

"$kbv" prompt L1_019_relu > "$t/relu.txt" 2> "$t/err" || fail "kbv prompt L1_019_relu exits $?: $(cat "$t/err")"
grep -q 'torch.relu(x)' "$t/relu.txt" || fail "no expression in the ReLU prompt"
grep -q 'call->inputs\[0\]: x, input float32, shape \[4096, 393216\]' "$t/relu.txt" ||
    fail "no input line for x in the ReLU prompt"
grep -q 'extern "C" int  kbv_forward' "$t/relu.txt" || fail "no ABI in the prompt"
grep -q 'D4: every floating-point input times -1' "$t/relu.txt" || fail "no hidden distributions"
grep -q '{{' "$t/relu.txt" && fail "unfilled placeholder in the ReLU prompt"

# Every problem of the suite renders with the shipped template.
"$build/kbv-list" --json | python3 -c 'import json,sys; [print(p["id"]) for p in json.load(sys.stdin)["problems"]]' > "$t/ids" ||
    fail "kbv list --json"
[ -s "$t/ids" ] || fail "no problems listed"
while read -r id; do
    "$kbv" prompt "$id" > "$t/p.txt" 2> "$t/err" || fail "kbv prompt $id exits $?: $(cat "$t/err")"
    grep -q "# Problem $id\$" "$t/p.txt" || fail "prompt for $id does not name it"
    grep -q '{{' "$t/p.txt" && fail "unfilled placeholder in the prompt for $id"
done < "$t/ids"

# Unknown problem: exit 2, the message says so and suggests the near id.
"$kbv" prompt L1_019_rel > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] || fail "unknown problem exits $rc, want 2"
grep -q "^kbv: prompt: unknown problem 'L1_019_rel'" "$t/err" || fail "unknown problem message: $(cat "$t/err")"
grep -q 'L1_019_relu' "$t/err" || fail "no suggestion for L1_019_rel: $(cat "$t/err")"

# No problem, two problems: usage errors.
"$kbv" prompt > /dev/null 2>&1; [ $? -eq 2 ] || fail "no PROBLEM should exit 2"
"$kbv" prompt L1_019_relu L1_023_softmax > /dev/null 2>&1; [ $? -eq 2 ] || fail "two PROBLEMs should exit 2"

# A template with an unknown placeholder: exit 2, named with its line.
printf 'ok {{id}}\nbad {{shoe_size}}\n' > "$t/bad.txt"
"$kbv" prompt --template "$t/bad.txt" L1_019_relu > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] || fail "unknown placeholder exits $rc, want 2"
grep -q 'bad.txt:2: unknown placeholder {{shoe_size}}' "$t/err" || fail "placeholder message: $(cat "$t/err")"
"$kbv" prompt --template "$t/missing.txt" L1_019_relu > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing template exits $rc, want 2"

# --precision bf16: bfloat16 tensors, the BF16 tolerance and the note at
# the end; another precision is a usage error.
"$kbv" prompt --precision bf16 L1_019_relu > "$t/b.txt" 2> "$t/err" || fail "--precision bf16: $(cat "$t/err")"
grep -q 'call->inputs\[0\]: x, input bfloat16, shape' "$t/b.txt" || fail "--precision bf16: inputs not bfloat16"
grep -q 'max(1e-2 \* min(1, max |ref|), 1.2e-7) + 1e-2 \* |ref|' "$t/b.txt" || fail "--precision bf16: no BF16 tolerance"
[ "$(grep -n '^# The BF16 setting' "$t/b.txt" | cut -d: -f1)" -gt "$(grep -n '^Allowed:' "$t/b.txt" | cut -d: -f1)" ] ||
    fail "--precision bf16: the note is not at the end"
"$kbv" prompt --precision fp32 L1_019_relu > "$t/f.txt" || fail "--precision fp32"
"$kbv" prompt L1_019_relu | cmp -s - "$t/f.txt" || fail "--precision fp32 is not the default"
grep -q 'input bfloat16\|^# The BF16 setting' "$t/f.txt" && fail "the FP32 prompt mentions BF16"
"$kbv" prompt --precision fp16 L1_019_relu > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] || fail "--precision fp16 exits $rc, want 2"
grep -q "expected fp32 or bf16" "$t/err" || fail "--precision fp16 message: $(cat "$t/err")"

# A custom template and --out.
printf '%s\n' '{{id}} = {{expr}}' > "$t/mine.txt"
"$kbv" prompt --template "$t/mine.txt" --out "$t/o.txt" L1_019_relu || fail "--out"
[ "$(cat "$t/o.txt")" = 'L1_019_relu = torch.relu(x)' ] || fail "--out wrote: $(cat "$t/o.txt")"
exit 0
