#!/usr/bin/env bash
# A real Slurm cluster of one node on localhost runs the job templates of
# templates/slurm/: a job array over shards of `kbv collect --build-only`
# (which needs nvcc but no GPU) and the dependent merge job, submitted by
# templates/slurm/submit.sh.  The merged run must hold every (set, problem)
# pair's build record exactly once, each shard exactly the pairs of the
# every-N-th partition, and verify against its SHA256SUMS.
#
# Needs root (slurmd runs jobs as their user) and Debian's slurm-wlm and
# munge (scripts/deps.sh install puts them in).  It starts its own munged,
# slurmctld and slurmd on free ports with every file in a temporary folder,
# and stops them and removes the folder on exit.  Without root or Slurm it
# fails and says why, unless KBV_SKIP_SLURM=1, which skips it.
#
# usage: tests/slurm/run.sh BUILD_DIR      (from the repository root)
set -u
build=${1:-build}
shards=${KBV_SLURM_SHARDS:-4}
limit=${KBV_SLURM_TIMEOUT:-150}   # seconds for the jobs, from submission to merged
say() { echo "slurm-test: $*"; }
fail() {
    echo "FAIL: $*"
    exit 1
}

if [ "${KBV_SKIP_SLURM:-0}" = 1 ]; then
    echo "skipped (KBV_SKIP_SLURM=1)"
    exit 0
fi
# The daemons live in /usr/sbin, which a PATH may lack.
export PATH=$PATH:/usr/sbin:/sbin
missing=()
for c in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
done
if [ ${#missing[@]} -gt 0 ]; then
    fail "Slurm is not installed (missing: ${missing[*]}); install slurm-wlm and munge (scripts/deps.sh install, as root), or set KBV_SKIP_SLURM=1 to skip this test"
fi
[ "$(id -u)" -eq 0 ] || fail "this test starts slurmctld and slurmd and must run as root; set KBV_SKIP_SLURM=1 to skip it"
[ -x "$build/kbv" ] || fail "$build/kbv is not built"
[ -x "$build/kbv-collect" ] ||
    fail "$build/kbv-collect is not built (collect needs nvcc); set KBV_SKIP_SLURM=1 to skip this test"
"$build/kbv-collect" --help 2>&1 | grep -q -- '--build-only' ||
    say "warning: kbv-collect --help does not mention --build-only; trying it anyway"
repo=$(pwd)
[ -x "$repo/templates/slurm/submit.sh" ] || fail "run from the repository root"

t=$(mktemp -d "${TMPDIR:-/tmp}/kbv-slurm.XXXXXX")
chmod 700 "$t"
# Every job runs one copy of the programs (a rebuild of $build while the
# jobs run would give shards of two harness commits, which merge refuses),
# laid out as installed: bin/ and include/kbv.h beside it for collect.
mkdir -p "$t/kbv/bin" "$t/kbv/include"
for p in "$build"/kbv "$build"/kbv-*; do
    [ -f "$p" ] && [ -x "$p" ] && cp "$p" "$t/kbv/bin/"
done
cp include/kbv.h "$t/kbv/include/" || fail "no include/kbv.h"
build=$t/kbv/bin
pids=()
jobs_to_cancel=''
cleanup() {
    # Cancel what is still queued or running while the daemons can act on it,
    # so that no job step outlives the cluster.
    if [ -n "$jobs_to_cancel" ] && [ -n "${SLURM_CONF:-}" ]; then
        scancel $jobs_to_cancel >/dev/null 2>&1
        for _ in $(seq 1 20); do
            [ -z "$(squeue -h -j "$jobs_to_cancel" 2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    # Stop the daemons by their ids, newest first; wait, then insist.
    local k
    for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
        kill "${pids[k]}" 2>/dev/null
    done
    for _ in $(seq 1 20); do
        local alive=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.25
    done
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$t"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

show_logs() {
    for f in "$t"/log/*.log "$t"/log/*.out "$t"/runs/r/logs/*.out; do
        [ -f "$f" ] || continue
        echo "--- $f (last lines)"
        tail -n 15 "$f"
    done
}

# Two free TCP ports on the loopback for slurmctld and slurmd, so that the
# test neither needs nor disturbs the usual 6817/6818.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])') || fail "cannot find free ports"

mkdir -p "$t/munge" "$t/state" "$t/spool" "$t/log" "$t/runs"
chmod 700 "$t/munge"

# munged with a fresh key, on a socket of its own.
mungekey --create --keyfile="$t/munge/munge.key" --bits=1024 2>"$t/log/mungekey.log" ||
    { dd if=/dev/urandom of="$t/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$t/munge/munge.key"; } ||
    fail "cannot create a munge key"
munged --foreground --force --key-file="$t/munge/munge.key" --socket="$t/munge/munge.socket" \
    --pid-file="$t/munge/munged.pid" --seed-file="$t/munge/munged.seed" --log-file="$t/log/munged.log" \
    >>"$t/log/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do
    [ -S "$t/munge/munge.socket" ] && break
    kill -0 "${pids[0]}" 2>/dev/null || break
    sleep 0.1
done
[ -S "$t/munge/munge.socket" ] || { show_logs; fail "munged did not start"; }

host=$(hostname -s 2>/dev/null || hostname)
cpus=$(nproc)
cat >"$t/slurm.conf" <<EOF
# A one-node cluster on the loopback for tests/slurm/run.sh.
ClusterName=kbvtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$t/munge/munge.socket
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/log/slurmctld.log
SlurmdLogFile=$t/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$t/plugstack.conf
# No cgroups in a container: track processes by parentage, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
ReturnToService=2
# Keep finished jobs visible to scontrol for the checks below.
MinJobAge=600
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
: >"$t/plugstack.conf"
export SLURM_CONF=$t/slurm.conf
# Nothing from the caller's environment may steer the jobs elsewhere.
unset SBATCH_PARTITION SBATCH_ACCOUNT SBATCH_EXPORT SBATCH_GRES SLURM_JOB_ID

slurmctld -D -i -f "$SLURM_CONF" >"$t/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" -f "$SLURM_CONF" >"$t/log/slurmd.out" 2>&1 &
pids+=($!)

start=$SECONDS
state=''
while [ $((SECONDS - start)) -lt 60 ]; do
    state=$(sinfo -h -n "$host" -o '%t' 2>/dev/null | head -n 1)
    [ "$state" = idle ] && break
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { show_logs; fail "a daemon exited early (pid $p)"; }; done
    sleep 0.5
done
[ "$state" = idle ] || { show_logs; fail "the node is not idle after 60 s (state '$state')"; }
say "cluster up in $((SECONDS - start)) s (slurmctld :$ctld_port, slurmd :$slurmd_port, $cpus CPUs)"

# The sharded build-only run: every task on the same seed and sets, with a
# build cache of its own so that every candidate is really compiled (the
# jobs inherit this environment through sbatch --export=ALL).
export KBV_CACHE=$t/cache
sets=(data/candidates/naive data/candidates/tuned)
submit_out=$(templates/slurm/submit.sh --shards "$shards" --run-dir "$t/runs/r" --seed 7 \
    --candidates "${sets[0]}" --candidates "${sets[1]}" --kbv "$build/kbv" --gres none \
    --sbatch --cpus-per-task=1 --sbatch --time=10 -- --build-only --suite smoke 2>"$t/log/submit.log") ||
    { cat "$t/log/submit.log"; fail "submit.sh failed"; }
collect_job=$(sed -n 's/^collect_job=//p' <<<"$submit_out")
merge_job=$(sed -n 's/^merge_job=//p' <<<"$submit_out")
[[ $collect_job =~ ^[0-9]+$ && $merge_job =~ ^[0-9]+$ ]] || fail "submit.sh printed no job ids: $submit_out"
jobs_to_cancel="$collect_job,$merge_job"
say "submitted array $collect_job ($shards shards) and merge $merge_job"

# The dependency must be the array, all of it.
scontrol show job "$merge_job" | grep -q "Dependency=afterok:${collect_job}_\*" ||
    scontrol show job "$merge_job" | grep -q "Dependency=afterok:$collect_job" ||
    fail "merge job $merge_job does not depend on array $collect_job: $(scontrol show job "$merge_job" | grep -o 'Dependency=[^ ]*')"

# The states of a job's tasks, counted: "COMPLETED x3, RUNNING x1".
job_state() {
    scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 | sort | uniq -c |
        awk '{ printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1 }'
}
start=$SECONDS
while :; do
    mstate=$(scontrol show job "$merge_job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $mstate in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED) break ;;
    esac
    if [ $((SECONDS - start)) -ge "$limit" ]; then
        show_logs
        fail "jobs not done after $limit s: array [$(job_state "$collect_job")] merge [$mstate]"
    fi
    sleep 1
done
elapsed=$((SECONDS - start))
jobs_to_cancel=''
array_states=$(job_state "$collect_job")
if [ "$mstate" != COMPLETED ] || [ "$array_states" != "COMPLETED x$shards" ]; then
    show_logs
    # The last line of each failed task's log, so that the cause is in the
    # one line a test runner shows.
    why=''
    for id in $(scontrol show job "$collect_job" | awk '
        /ArrayTaskId=/ { match($0, /ArrayTaskId=[0-9]+/); id = substr($0, RSTART + 12, RLENGTH - 12) }
        /JobState=/ { match($0, /JobState=[A-Z_]+/); if (substr($0, RSTART + 9, RLENGTH - 9) != "COMPLETED") print id }'); do
        why+=" task $id: $(tail -n 1 "$t/runs/r/logs/collect-$id.out" 2>/dev/null);"
    done
    [ "$mstate" = COMPLETED ] || [ -n "$why" ] || why=" merge: $(tail -n 1 "$t/runs/r/logs/merge.out" 2>/dev/null)"
    fail "array [$array_states] merge [$mstate]; want $shards COMPLETED tasks and a COMPLETED merge;$why"
fi
say "array and merge completed in $elapsed s"

run=$t/runs/r
[ -f "$run/merged/manifest.json" ] || fail "no merged/manifest.json"
for ((i = 1; i <= shards; i++)); do
    [ -f "$run/shard-$i/manifest.json" ] || fail "no shard-$i/manifest.json"
    [ -f "$run/logs/collect-$((i - 1)).out" ] || fail "no log of array task $((i - 1))"
done
"$build/kbv" verify "$run/merged" >/dev/null 2>"$t/log/verify.log" ||
    fail "kbv verify merged: $(cat "$t/log/verify.log")"

# Every pair once in the merged run; shard i holds exactly the pairs k (in
# set-major order of the manifest) with k mod N = i - 1; the merged journal
# is the shards' records, nothing lost or added.
python3 - "$run" "$shards" "${sets[@]}" <<'PY' || fail "merged run check failed (above)"
import json, os, sys
run, n = sys.argv[1], int(sys.argv[2])
set_dirs = sys.argv[3:]
def journal(d):
    return [json.loads(l) for l in open(os.path.join(d, "samples.jsonl")) if l.strip()]
m = json.load(open(os.path.join(run, "merged", "manifest.json")))
assert m.get("schema") == "kbv-run/1", "merged manifest schema %r" % m.get("schema")
assert m.get("config", {}).get("seed") == 7, "merged seed %r, want 7" % m.get("config", {}).get("seed")
names = [s["name"] for s in m["sets"]]
assert len(names) == len(set_dirs), "manifest sets %r, want one per folder %r" % (names, set_dirs)
# The smoke suite, in suite order; each set has a candidate for each.
smoke = ["L1_001_square_matrix_multiplication", "L1_019_relu", "L1_023_softmax"]
assert m["problems"] == smoke, "manifest problems %r, want the smoke suite %r" % (m["problems"], smoke)
for d in set_dirs:
    for p in smoke:
        assert os.path.isfile(os.path.join(d, p + ".cu")), "no %s/%s.cu" % (d, p)
pairs = [(s, p) for s in names for p in m["problems"]]
assert pairs, "no pairs"
merged = journal(os.path.join(run, "merged"))
builds = {}
for r in merged:
    if r.get("type") == "build":
        key = (r["set"], r["problem"])
        builds[key] = builds.get(key, 0) + 1
for key in pairs:
    assert builds.get(key) == 1, "pair %s/%s has %d build records, want 1" % (key[0], key[1], builds.get(key, 0))
# The bundled candidates compile (scripts/check-candidates.sh checks them too).
for r in merged:
    if r.get("type") == "build":
        assert r.get("ok") is True, "build of %s/%s failed: %s" % (r["set"], r["problem"], r.get("log", "")[-400:])
assert len(builds) == len(pairs), "build records for pairs outside the manifest: %r" % sorted(set(builds) - set(pairs))
total = 0
for i in range(1, n + 1):
    d = os.path.join(run, "shard-%d" % i)
    recs = journal(d)
    total += len(recs)
    got = {(r["set"], r["problem"]) for r in recs if r.get("type") == "build"}
    want = {pairs[k] for k in range(len(pairs)) if k % n == i - 1}
    assert got == want, "shard %d built %r, want %r" % (i, sorted(got), sorted(want))
    sm = json.load(open(os.path.join(d, "manifest.json")))
    label = sm.get("shard", sm.get("config", {}).get("shard"))
    assert label in (None, "%d/%d" % (i, n)), "shard-%d's manifest calls it shard %r" % (i, label)
assert len(m.get("shards", [])) == n, "merged manifest lists shards %r, want %d" % (m.get("shards"), n)
assert total == len(merged), "merged journal has %d records, shards %d" % (len(merged), total)
print("slurm-test: %d pairs over %d shards, %d records merged" % (len(pairs), n, len(merged)))
PY
say "ok: $shards shards, merged run verified; jobs took $elapsed s, whole test $SECONDS s"
exit 0
