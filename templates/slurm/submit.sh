#!/usr/bin/env bash
# Submits a sharded kbv collect as a Slurm job array, and a job that merges
# the shards and renders the report once every shard has succeeded.
# Prints the two job ids on stdout as collect_job=ID and merge_job=ID.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
    cat <<EOF
usage: templates/slurm/submit.sh --shards N --run-dir DIR [options] [-- COLLECT_OPTIONS...]

Runs \`kbv collect --shard i/N\` for i = 1..N as one Slurm job array (one GPU
per task by default), writing DIR/shard-<i>, then \`kbv merge DIR/merged
DIR/shard-*\` and \`kbv report DIR/merged\` in a job that depends on the
array (afterok).  Every task gets the same seed and candidate folders.
Submit from a folder that every node sees (the jobs run there).

options:
  --shards N          the number of shards, one array task each
  --run-dir DIR       the run's folder: shard-<i>/, merged/ and logs/ go there
  --candidates DIR    a candidate set folder (repeatable); default: every
                      folder under data/candidates/ that has a set.json
  --seed N            the run seed (default: a random one, printed)
  --kbv PATH          the kbv program (default: build/kbv of this repository
                      when built, else kbv on PATH); kbv-collect sits beside it
  --gres SPEC         generic resources per task: gpu:1 (the template's
                      default), gpu:4 (collect then runs --gpus 0,1,2,3), or
                      none (no GPU: for --build-only)
  --max-parallel K    run at most K shards at once
  --redo LIST         re-run only these shards (1-based, comma-separated)
                      of the run in --run-dir, with the settings it was
                      submitted with (DIR/submit.env), then merge again; a
                      shard that has a manifest continues with --resume
  --no-report         merge only, do not run \`kbv report\`
  --sbatch ARG        pass ARG to both sbatch calls (repeatable),
                      e.g. --sbatch --partition=gpu --sbatch --account=lab
  --collect-sbatch ARG, --merge-sbatch ARG
                      pass ARG to one of the two sbatch calls only
  -h, --help          this text

Options after -- go to every \`kbv collect\` (split on blanks), e.g.
  -- --suite smoke --problems 'L1_*'
With --build-only among them, --gres defaults to none and --no-report is implied.
EOF
}

die() {
    echo "kbv: slurm: $*" >&2
    exit 2
}

shards='' run_dir='' seed='' kbv='' gres='' max_parallel='' redo='' report=1
candidates=() both=() collect_extra=() merge_extra=() collect_args=()
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --shards) shards=${2:?--shards needs a value}; shift 2 ;;
    --run-dir) run_dir=${2:?--run-dir needs a value}; shift 2 ;;
    --candidates) candidates+=("${2:?--candidates needs a value}"); shift 2 ;;
    --seed) seed=${2:?--seed needs a value}; shift 2 ;;
    --kbv) kbv=${2:?--kbv needs a value}; shift 2 ;;
    --gres) gres=${2:?--gres needs a value}; shift 2 ;;
    --max-parallel) max_parallel=${2:?--max-parallel needs a value}; shift 2 ;;
    --redo) redo=${2:?--redo needs a value}; shift 2 ;;
    --no-report) report=0; shift ;;
    --sbatch) both+=("${2:?--sbatch needs a value}"); shift 2 ;;
    --collect-sbatch) collect_extra+=("${2:?--collect-sbatch needs a value}"); shift 2 ;;
    --merge-sbatch) merge_extra+=("${2:?--merge-sbatch needs a value}"); shift 2 ;;
    --) shift; collect_args=("$@"); break ;;
    *) usage >&2; die "unknown option '$1'" ;;
    esac
done

[ -n "$run_dir" ] || die "--run-dir DIR is required"
if [ -n "$redo" ]; then
    # A re-run must be the same run: same shards, seed, sets and options.
    saved=$run_dir/submit.env
    [ -f "$saved" ] || die "--redo: $saved not found (was the run submitted with submit.sh?)"
    [ -z "$shards$seed" ] && [ ${#candidates[@]} -eq 0 ] && [ ${#collect_args[@]} -eq 0 ] ||
        die "--redo takes --shards, --seed, --candidates and collect options from $saved; leave them out"
    run_dir=$(cd "$run_dir" && pwd)
    # shellcheck source=/dev/null
    . "$saved"
    shards=$KBV_SHARDS seed=$KBV_SEED
    IFS=: read -r -a candidates <<<"$KBV_CANDIDATES"
    read -r -a collect_args <<<"$KBV_COLLECT_ARGS"
    [ -n "$kbv" ] || kbv=$KBV_BIN
    [ -n "$gres" ] || gres=${KBV_GRES:-}
    [ "$report" = 0 ] || report=$KBV_REPORT
    # Relative candidate folders are relative to where the run was submitted,
    # and the jobs run there.
    cd "$KBV_SUBMIT_DIR" || die "--redo: cannot enter $KBV_SUBMIT_DIR, where the run was submitted"
fi
[[ $shards =~ ^[1-9][0-9]*$ ]] || die "--shards N is required (a positive whole number)"
[ -z "$seed" ] || [[ $seed =~ ^[0-9]+$ ]] || die "--seed must be a non-negative whole number"
[ -z "$max_parallel" ] || [[ $max_parallel =~ ^[1-9][0-9]*$ ]] || die "--max-parallel must be a positive whole number"
command -v sbatch >/dev/null || die "sbatch not found: run this on a Slurm login node"

build_only=0
for a in "${collect_args[@]}"; do
    case $a in
    --build-only) build_only=1 ;;
    --shard | --shard=* | --out | --out=* | --seed | --seed=* | --candidates | --candidates=*)
        die "$a is set by submit.sh; use its own options" ;;
    esac
done
if [ "$build_only" = 1 ]; then
    report=0
    [ -n "$gres" ] || gres=none
fi

if [ -z "$kbv" ]; then
    if [ -x "$repo/build/kbv" ]; then kbv=$repo/build/kbv
    else kbv=$(command -v kbv) || die "no kbv program: build it (make) or pass --kbv PATH"; fi
fi
[ -x "$kbv" ] || die "$kbv is not an executable"
kbv=$(cd "$(dirname "$kbv")" && pwd)/$(basename "$kbv")
[ -x "$(dirname "$kbv")/kbv-collect" ] || command -v kbv-collect >/dev/null ||
    die "kbv-collect is not beside $kbv nor on PATH (collect is built only where nvcc is found)"

if [ ${#candidates[@]} -eq 0 ]; then
    for d in "$repo"/data/candidates/*/; do
        [ -f "$d/set.json" ] && candidates+=("${d%/}")
    done
    [ ${#candidates[@]} -gt 0 ] || die "no candidate sets found; pass --candidates DIR"
fi
for d in "${candidates[@]}"; do
    [ -d "$d" ] || die "candidate folder $d does not exist"
    case $d in *:*) die "candidate folder $d: a ':' in the path is not supported" ;; esac
done

mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd)
if [ -n "$redo" ]; then
    [[ $redo =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--redo takes shard numbers like 2,5"
    array=''
    IFS=, read -r -a redo_list <<<"$redo"
    for s in "${redo_list[@]}"; do
        [ "$s" -ge 1 ] && [ "$s" -le "$shards" ] || die "--redo: shard $s is not in 1..$shards"
        array+="${array:+,}$((s - 1))"
    done
    [ ! -e "$run_dir/merged" ] || die "$run_dir/merged exists; remove it before merging again"
else
    for s in "$run_dir"/shard-*; do
        [ -e "$s" ] && die "$run_dir already holds shards (use --redo to re-run some, or a new --run-dir)"
    done
    array="0-$((shards - 1))"
fi
[ -z "$max_parallel" ] || array+="%$max_parallel"
if [ -z "$seed" ]; then
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    echo "kbv: slurm: seed $seed (pass --seed $seed to reproduce the run)" >&2
fi
mkdir -p "$run_dir/logs"

export KBV_BIN=$kbv KBV_RUN_DIR=$run_dir KBV_SHARDS=$shards KBV_SEED=$seed KBV_REPORT=$report
KBV_CANDIDATES=$(IFS=:; echo "${candidates[*]}")
KBV_COLLECT_ARGS="${collect_args[*]}"
export KBV_CANDIDATES KBV_COLLECT_ARGS
if [ -z "$redo" ]; then
    KBV_GRES=$gres KBV_SUBMIT_DIR=$PWD
    for v in KBV_BIN KBV_SHARDS KBV_SEED KBV_REPORT KBV_CANDIDATES KBV_COLLECT_ARGS KBV_GRES KBV_SUBMIT_DIR; do
        printf '%s=%q\n' "$v" "${!v}"
    done >"$run_dir/submit.env"
fi

# The template asks for gpu:1; a --gres on the command line overrides it,
# and "none" removes the line (Slurm has no way to un-ask on the command line).
collect_script=$here/collect-array.sbatch
collect_opts=(--parsable --export=ALL --array="$array" --output="$run_dir/logs/collect-%a.out")
if [ "$gres" = none ]; then
    collect_script=$(mktemp)
    trap 'rm -f "$collect_script"' EXIT
    grep -v '^#SBATCH --gres=' "$here/collect-array.sbatch" >"$collect_script"
elif [ -n "$gres" ]; then
    collect_opts+=(--gres="$gres")
fi

collect_job=$(sbatch "${collect_opts[@]}" "${both[@]}" "${collect_extra[@]}" "$collect_script") ||
    die "sbatch refused the collect array (its message is above)"
collect_job=${collect_job%%;*}
[[ $collect_job =~ ^[0-9]+$ ]] || die "sbatch did not return a job id for the array: $collect_job"
merge_job=$(sbatch --parsable --export=ALL --dependency="afterok:$collect_job" --kill-on-invalid-dep=yes \
    --output="$run_dir/logs/merge.out" "${both[@]}" "${merge_extra[@]}" "$here/merge-report.sbatch") || {
    echo "kbv: slurm: the merge job was not submitted; cancel the array with: scancel $collect_job" >&2
    exit 1
}
merge_job=${merge_job%%;*}

echo "kbv: slurm: collect array job $collect_job (shards ${redo:-1..$shards} of $shards) -> $run_dir/shard-<i>" >&2
echo "kbv: slurm: merge$([ "$report" = 1 ] && echo ' + report') job $merge_job, after $collect_job succeeds -> $run_dir/merged" >&2
echo "kbv: slurm: logs in $run_dir/logs/; watch with: squeue -j $collect_job,$merge_job" >&2
echo "collect_job=$collect_job"
echo "merge_job=$merge_job"
