#!/usr/bin/env bash
# templates/slurm/ without a cluster: the array task script, the merge
# script and submit.sh run against a stand-in kbv and a stand-in sbatch that
# record their arguments, so that every option they build is checked
# against the values written here by hand.  (tests/slurm/run.sh runs the
# same templates on a real Slurm cluster.)
set -u
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
tpl=$PWD/templates/slurm

# A kbv that writes its arguments, one a line, to $t/calls.
mkdir -p "$t/bin"
cat >"$t/bin/kbv" <<'EOF'
#!/usr/bin/env bash
{ printf '%s\n' "$@"; echo --; } >>"$KBV_TEST_CALLS"
EOF
cp "$t/bin/kbv" "$t/bin/kbv-collect"
chmod +x "$t/bin/kbv" "$t/bin/kbv-collect"
export KBV_TEST_CALLS=$t/calls
calls() { tr '\n' ' ' <"$t/calls"; }

# One array task; the environment as Slurm and submit.sh give it.  It runs
# in a folder with a file that L1_* would match, to show that patterns in
# the collect options reach collect unexpanded.
mkdir -p "$t/wd" && touch "$t/wd/L1_file"
task() {
    : >"$t/calls"
    (cd "$t/wd" && env -i PATH="$PATH" KBV_TEST_CALLS="$t/calls" KBV_BIN="$t/bin/kbv" KBV_RUN_DIR="$t/run" \
        KBV_SEED=7 "$@" bash "$tpl/collect-array.sbatch" 2>"$t/err")
}
task KBV_SHARDS=3 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_JOB_ID=9 KBV_CANDIDATES="a:b c" \
    KBV_COLLECT_ARGS="--suite smoke --problems L1_*" || fail "task 0: $(cat "$t/err")"
want="collect --shard 1/3 --seed 7 --out $t/run/shard-1 --candidates a --candidates b c --suite smoke --problems L1_* -- "
[ "$(calls)" = "$want" ] || fail "task 0 ran: $(calls); want: $want"
# Re-running one task of three: the shard count is KBV_SHARDS, not the
# size of the new array.
task KBV_SHARDS=3 SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=1 KBV_CANDIDATES=a || fail "task 2: $(cat "$t/err")"
want="collect --shard 3/3 --seed 7 --out $t/run/shard-3 --candidates a -- "
[ "$(calls)" = "$want" ] || fail "task 2 ran: $(calls); want: $want"
# Without KBV_SHARDS, the array's size.
task SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4 || fail "task 1 of 4: $(cat "$t/err")"
[ "$(calls)" = "collect --shard 2/4 --seed 7 --out $t/run/shard-2 -- " ] || fail "task 1 of 4 ran: $(calls)"
# Several GPUs given to the task: one worker pool each, numbered from 0.
task KBV_SHARDS=2 SLURM_ARRAY_TASK_ID=0 CUDA_VISIBLE_DEVICES=4,5,7 || fail "gpus: $(cat "$t/err")"
[ "$(calls)" = "collect --shard 1/2 --seed 7 --out $t/run/shard-1 --gpus 0,1,2 -- " ] || fail "three GPUs ran: $(calls)"
task KBV_SHARDS=2 SLURM_ARRAY_TASK_ID=0 CUDA_VISIBLE_DEVICES=3 || fail "one gpu: $(cat "$t/err")"
[ "$(calls)" = "collect --shard 1/2 --seed 7 --out $t/run/shard-1 -- " ] || fail "one GPU ran: $(calls)"
# A requeued task continues its shard.
mkdir -p "$t/run/shard-2" && echo '{}' >"$t/run/shard-2/manifest.json"
task KBV_SHARDS=2 SLURM_ARRAY_TASK_ID=1 || fail "resume: $(cat "$t/err")"
[ "$(calls)" = "collect --shard 2/2 --seed 7 --out $t/run/shard-2 --resume -- " ] || fail "requeued task ran: $(calls)"
# A task outside the shards, and a run without an array, are refused.
task KBV_SHARDS=2 SLURM_ARRAY_TASK_ID=2; [ $? -eq 2 ] || fail "task 2 of 2 shards was not refused"
[ ! -s "$t/calls" ] || fail "a refused task ran kbv"
task KBV_SHARDS=2 >/dev/null; [ $? -ne 0 ] || fail "a task outside an array ran"
rm -rf "$t/run"

# The merge job: merge, verify, report; merge only with KBV_REPORT=0.
merge() {
    : >"$t/calls"
    env -i PATH="$PATH" KBV_TEST_CALLS="$t/calls" KBV_BIN="$t/bin/kbv" KBV_RUN_DIR="$t/run" "$@" \
        bash "$tpl/merge-report.sbatch" 2>"$t/err"
}
merge KBV_SHARDS=2 || fail "merge: $(cat "$t/err")"
want="merge $t/run/merged $t/run/shard-1 $t/run/shard-2 -- verify $t/run/merged -- report $t/run/merged -- "
[ "$(calls)" = "$want" ] || fail "merge job ran: $(calls); want: $want"
merge KBV_SHARDS=1 KBV_REPORT=0 || fail "merge only: $(cat "$t/err")"
[ "$(calls)" = "merge $t/run/merged $t/run/shard-1 -- verify $t/run/merged -- " ] || fail "merge-only job ran: $(calls)"
mkdir -p "$t/run/merged"
merge KBV_SHARDS=1; [ $? -eq 2 ] || fail "merge over an existing merged/ was not refused"
grep -q 'already exists' "$t/err" || fail "merge over merged/: $(cat "$t/err")"
rm -rf "$t/run"

# submit.sh with an sbatch that records each call (arguments, then the
# script's #SBATCH lines and the KBV_ variables it was given) and answers
# with job ids 101, 102, ...
cat >"$t/bin/sbatch" <<'EOF'
#!/usr/bin/env bash
n=$(($(cat "$KBV_TEST_SB/n" 2>/dev/null || echo 100) + 1))
echo "$n" >"$KBV_TEST_SB/n"
{
    printf '%s\n' "$@"
    echo "cwd=$PWD"
    eval "script=\${$#}"
    echo "== script"
    grep '^#SBATCH' "$script"
    echo "== env"
    env | grep '^KBV_' | grep -v '^KBV_TEST' | sort
} >"$KBV_TEST_SB/$n"
echo "$n"
EOF
chmod +x "$t/bin/sbatch"
mkdir -p "$t/sb"
export KBV_TEST_SB=$t/sb
submit() { PATH="$t/bin:$PATH" "$tpl/submit.sh" "$@" 2>"$t/err"; }
has() { grep -qxF -- "$2" "$t/sb/$1" || fail "sbatch call $1 lacks '$2': $(tr '\n' ' ' <"$t/sb/$1")"; }
hasnt() { ! grep -qxF -- "$2" "$t/sb/$1" || fail "sbatch call $1 has '$2'"; }

mkdir -p "$t/c/one" "$t/c/two"
out=$(submit --shards 4 --run-dir "$t/run" --seed 11 --candidates "$t/c/one" --candidates "$t/c/two" \
    --kbv "$t/bin/kbv" --max-parallel 2 --sbatch --partition=gpu -- --suite smoke --problems 'L1_*') ||
    fail "submit: $(cat "$t/err")"
[ "$out" = $'collect_job=101\nmerge_job=102' ] || fail "submit printed: $out"
has 101 --array=0-3%2
has 101 --partition=gpu
has 101 "--output=$t/run/logs/collect-%a.out"
has 101 "#SBATCH --gres=gpu:1"
has 101 KBV_SHARDS=4
has 101 KBV_SEED=11
has 101 "KBV_RUN_DIR=$t/run"
has 101 "KBV_CANDIDATES=$t/c/one:$t/c/two"
has 101 "KBV_COLLECT_ARGS=--suite smoke --problems L1_*"
has 101 "KBV_BIN=$t/bin/kbv"
has 102 --dependency=afterok:101
has 102 --kill-on-invalid-dep=yes
has 102 --partition=gpu
has 102 KBV_REPORT=1
hasnt 102 "#SBATCH --gres=gpu:1"
[ -d "$t/run/logs" ] || fail "no logs folder"
# The same run folder again is refused: its shards would mix.
mkdir -p "$t/run/shard-1"
submit --shards 4 --run-dir "$t/run" --seed 11 --candidates "$t/c/one" --kbv "$t/bin/kbv"; [ $? -eq 2 ] ||
    fail "a second submit into a run folder with shards was not refused"
[ ! -e "$t/sb/103" ] || fail "a refused submit called sbatch"
# --redo: only the named shards, with the settings saved at submission.
out=$(submit --run-dir "$t/run" --redo 2,4 --sbatch --partition=big) || fail "redo: $(cat "$t/err")"
[ "$out" = $'collect_job=103\nmerge_job=104' ] || fail "redo printed: $out"
has 103 --array=1,3
has 103 --partition=big
has 103 KBV_SHARDS=4
has 103 KBV_SEED=11
has 103 "KBV_CANDIDATES=$t/c/one:$t/c/two"
has 103 "KBV_COLLECT_ARGS=--suite smoke --problems L1_*"
has 104 --dependency=afterok:103
submit --run-dir "$t/run" --redo 2 --seed 12; [ $? -eq 2 ] || fail "--redo with another seed was not refused"
submit --run-dir "$t/run" --redo 5; [ $? -eq 2 ] || fail "--redo of shard 5 of 4 was not refused"
rm -rf "$t/run"
# --build-only: no GPU line, no report; --gres gpu:4 goes to the command line.
submit --shards 2 --run-dir "$t/run" --seed 1 --candidates "$t/c/one" --kbv "$t/bin/kbv" -- --build-only >/dev/null ||
    fail "build-only submit: $(cat "$t/err")"
hasnt 105 "#SBATCH --gres=gpu:1"
has 105 "#SBATCH --job-name=kbv-collect"
has 106 KBV_REPORT=0
rm -rf "$t/run"
submit --shards 2 --run-dir "$t/run" --seed 1 --candidates "$t/c/one" --kbv "$t/bin/kbv" --gres gpu:4 >/dev/null ||
    fail "gres submit: $(cat "$t/err")"
has 107 --gres=gpu:4
# Bad usage: exit 2, nothing submitted.
for bad in "--run-dir $t/x" "--shards 0 --run-dir $t/x" "--shards 2" "--shards 2 --run-dir $t/x --seed -1" \
    "--shards 2 --run-dir $t/x --candidates $t/nowhere" "--shards 2 --run-dir $t/x -- --shard 1/2" \
    "--shards 2 --run-dir $t/x --frobnicate"; do
    # shellcheck disable=SC2086
    submit $bad --kbv "$t/bin/kbv" >/dev/null; rc=$?
    [ $rc -eq 2 ] || fail "submit.sh $bad: exit $rc, want 2"
done
[ ! -e "$t/sb/109" ] || fail "bad usage called sbatch"
# --redo from another folder: relative candidate folders, the GPU request
# and the report setting of the original submission hold.
rm -rf "$t/run"
(cd "$t" && submit --shards 2 --run-dir run --seed 1 --candidates c/one --kbv bin/kbv -- --build-only >/dev/null) ||
    fail "relative submit: $(cat "$t/err")"
has 109 "cwd=$t"
out=$(cd / && submit --run-dir "$t/run" --redo 2) || fail "redo from /: $(cat "$t/err")"
[ "$out" = $'collect_job=111\nmerge_job=112' ] || fail "redo printed: $out"
has 111 "cwd=$t"
has 111 --array=1
has 111 KBV_CANDIDATES=c/one
hasnt 111 "#SBATCH --gres=gpu:1"
has 112 KBV_REPORT=0
"$tpl/submit.sh" --help | grep -q '^usage: ' || fail "submit.sh --help"
exit 0
