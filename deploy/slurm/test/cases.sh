#!/usr/bin/env bash
# pregen.sbatch end to end on a Slurm test cluster (cluster.sh: a controller
# and three nodes in network namespaces), every pack compared with the
# embedded run (`pregen run`) of the same job by same_pack.py:
#
#   pack             examples/demo.toml (10,000 tilt levels) on 3 nodes
#   worker-killed    a node's worker killed (SIGKILL) mid-run
#   link-cut         a node's network link down for 10 s mid-run
#   time-limit       --time=1: TERM near the limit drains the job; the same
#                    command resubmitted resumes from the commit log, until
#                    the pack is complete
#   node-lost        the coordinator's node dies mid-run (every process on it
#                    killed, its link cut); Slurm requeues the job (--requeue),
#                    which resumes on the node come back
#   already-complete the first case's command again: exits 0 at once
#
# Needs root (network namespaces); installs slurm-wlm and munge with apt when
# missing. Takes about 5 minutes; every wait is bounded. Prints each case's
# wall time. PREGEN_SLURM_CASES="link-cut node-lost" runs only those.
#
#   deploy/slurm/test/cases.sh PREGEN_BINARY [WORK_DIR]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 PREGEN_BINARY [WORK_DIR]" >&2; exit 2; }
PREGEN=$(realpath "$1")
export PREGEN
work=$(realpath -m "${2:-$(mktemp -d /tmp/pregen-slurm.XXXXXX)}")
mkdir -p "$work"
state=$work/cluster
sbatch_script=$repo/deploy/slurm/pregen.sbatch

bash "$here/cluster.sh" down "$state" 2>/dev/null || true
trap 'bash "$here/cluster.sh" down "$state"' EXIT
bash "$here/cluster.sh" up "$state" 3
export SLURM_CONF=$state/slurm.conf
cd "$work"

# A synthetic job whose seeds sleep 20 ms: about 25 s on three 2-thread
# workers, whatever the machine, so faults land mid-run.
synthetic_job() {
    cat <<EOF
pack = "sleepy"
game = "synthetic"
first_seed = 0
count = $1
seeds_per_lease = 64

[params]
cost_us = 20000
busy = false
accept_rate = 0.5
EOF
}
synthetic_job 3000 >sleepy.toml
synthetic_job 9000 >sleepy-long.toml
cp "$repo/examples/demo.toml" demo.toml

log() { echo "[slurm cases] $*"; }
fail() {
    echo "[slurm cases] FAILED: $*" >&2
    tail -n 30 "$work"/*.out >&2 2>/dev/null || true
    exit 1
}

# The embedded runs the cluster's packs must equal.
for job in demo sleepy sleepy-long; do
    "$PREGEN" run "$job.toml" --out "ref-$job" --threads 16 --no-progress >/dev/null 2>"ref-$job.log" ||
        fail "pregen run $job.toml: $(tail -n 3 "ref-$job.log")"
done

# submit CASE [SBATCH_FLAGS...] -- JOB.toml OUT: prints the job id.
submit() {
    local case=$1
    shift
    local flags=()
    while [ "$1" != -- ]; do
        flags+=("$1")
        shift
    done
    shift
    sbatch --parsable --nodes=3 --cpus-per-task=2 --output="$work/$case-%j.out" \
        "${flags[@]}" "$sbatch_script" "$@"
}

field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# Waits (at most $2 s) until job $1 has ended; prints its final state.
wait_end() {
    local id=$1 limit=$2 s
    for _ in $(seq 1 "$limit"); do
        s=$(field "$id" JobState)
        case $s in
            PENDING | CONFIGURING | RUNNING | COMPLETING | REQUEUED) sleep 1 ;;
            *) echo "$s"; return ;;
        esac
    done
    scancel "$id" || true
    fail "job $id still $(field "$id" JobState) after $limit s"
}

# Waits (at most 60 s) until job $1 has $2 worker sessions open.
wait_sessions() {
    local id=$1 want=$2
    for _ in $(seq 1 60); do
        [ "$(cat "$work"/*-"$id".out 2>/dev/null | grep -c 'session open')" -ge "$want" ] && return
        sleep 1
    done
    fail "job $id: fewer than $want worker sessions after 60 s"
}

# The pid of `pregen ROLE` running on node $1.
pregen_pid() {
    local node=$1 role=$2 pid
    for pid in $(ip netns pids "$node"); do
        if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "^$PREGEN $role "; then
            echo "$pid"
            return
        fi
    done
    fail "no pregen $role on $node"
}

same() { python3 "$here/same_pack.py" "ref-$1/$2" "$3/$2" || fail "$3/$2 is not the embedded run's pack"; }

results=()
timed() {
    local case=$1 start=$SECONDS
    shift
    log "$case"
    "$@"
    results+=("$(printf '%-17s %4d s' "$case" $((SECONDS - start)))")
}

case_pack() {
    local id
    id=$(submit pack -- demo.toml out-pack)
    [ "$(wait_end "$id" 300)" = COMPLETED ] || fail "pack: job $id did not complete"
    same demo demo out-pack
}

case_worker_killed() {
    local id
    id=$(submit worker-killed -- sleepy.toml out-killed)
    wait_sessions "$id" 3
    sleep 5
    kill -9 "$(pregen_pid n2 worker)"
    [ "$(wait_end "$id" 300)" = COMPLETED ] || fail "worker-killed: job $id did not complete"
    same sleepy sleepy out-killed
}

case_link_cut() {
    local id
    id=$(submit link-cut -- sleepy.toml out-link)
    wait_sessions "$id" 3
    sleep 5
    ip link set veth-n3 down
    sleep 10
    ip link set veth-n3 up
    [ "$(wait_end "$id" 300)" = COMPLETED ] || fail "link-cut: job $id did not complete"
    same sleepy sleepy out-link
}

# A minute's limit, TERM 40 s before it (Slurm sends it 20 to 50 s into the
# job): the 70 s pack takes two or three submissions of the same command.
case_time_limit() {
    local id run state
    for run in 1 2 3 4 5; do
        id=$(PREGEN_DRAIN_S=10 submit time-limit --time=1 --signal=B:TERM@40 -- sleepy-long.toml out-time)
        state=$(wait_end "$id" 200)
        log "submission $run ended $state"
        [ "$state" = COMPLETED ] && break
        [ ! -e out-time/sleepy/_SUCCESS ] || fail "time-limit: job $id wrote the pack but ended $state"
    done
    [ "$state" = COMPLETED ] || fail "time-limit: not complete after $run submissions"
    [ "$run" -gt 1 ] || fail "time-limit: the first job finished within its time limit"
    grep -q 'seeds resumed from the commit log' "time-limit-$id.out" || fail "time-limit: job $id did not resume"
    same sleepy-long sleepy out-time
}

case_node_lost() {
    local id
    id=$(submit node-lost --requeue -- sleepy.toml out-lost)
    wait_sessions "$id" 3
    sleep 5
    bash "$here/cluster.sh" lose "$state" n1
    local restarts
    for _ in $(seq 1 60); do
        restarts=$(field "$id" Restarts)
        [ "${restarts:-0}" -ge 1 ] && [ "$(field "$id" JobState)" = PENDING ] && break
        sleep 1
    done
    [ "$(field "$id" JobState)" = PENDING ] || fail "node-lost: job $id not requeued ($(field "$id" JobState))"
    bash "$here/cluster.sh" revive "$state" n1
    # Slurm holds a requeued job for a while before it is eligible again.
    scontrol update JobId="$id" StartTime=now
    [ "$(wait_end "$id" 300)" = COMPLETED ] || fail "node-lost: requeued job $id did not complete"
    grep -q 'seeds resumed from the commit log' "node-lost-$id.out" || fail "node-lost: job $id did not resume"
    same sleepy sleepy out-lost
}

case_already_complete() {
    local id
    id=$(submit already-complete -- demo.toml out-pack)
    [ "$(wait_end "$id" 60)" = COMPLETED ] || fail "already-complete: job $id did not exit 0"
    if grep -q 'session open' "already-complete-$id.out"; then
        fail "already-complete: workers were started"
    fi
    same demo demo out-pack
}

for case in ${PREGEN_SLURM_CASES:-pack worker-killed link-cut time-limit node-lost already-complete}; do
    timed "$case" "case_${case//-/_}"
done

log "all cases passed (wall time from submission to the pack checked):"
printf '  %s\n' "${results[@]}"
