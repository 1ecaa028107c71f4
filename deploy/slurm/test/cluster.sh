#!/usr/bin/env bash
# A Slurm cluster on one machine, for testing pregen.sbatch end to end: a
# controller and N compute nodes, each in its own network namespace with its
# own address on a bridge, sharing the machine's filesystem (as a cluster
# shares its home folders). Needs root, iproute2, and Debian's slurm-wlm and
# munge packages (`up` installs them with apt when they are missing).
#
#   cluster.sh up STATE_DIR [NODES]   # NODES compute nodes, default 3
#   cluster.sh down STATE_DIR
#   cluster.sh lose STATE_DIR NODE    # the node dies: every process on it killed, its link down
#   cluster.sh revive STATE_DIR NODE  # the node comes back: link up, slurmd restarted
#
# After `up`, client commands need `export SLURM_CONF=STATE_DIR/slurm.conf`.
# Nodes are named n1..nN at 10.77.0.11.., the controller ctl at 10.77.0.10,
# and the machine itself is 10.77.0.1 on the bridge. `down` stops every
# daemon, removes the namespaces, the bridge and the /etc/hosts lines, and
# leaves STATE_DIR (its logs) in place.
set -euo pipefail

BRIDGE=pgbr0
NET=10.77.0
HOSTS_TAG="# pregen-slurm-test"

usage() {
    echo "usage: $0 up|down STATE_DIR [NODES] | lose|revive STATE_DIR NODE" >&2
    exit 2
}

[ $# -ge 2 ] || usage
action=$1
state=$(realpath -m "$2")
nodes=${3:-3}
[ "$action" != up ] || [[ $nodes =~ ^[1-9][0-9]?$ ]] || usage

# Runs a command inside namespace $1 for its network only (not `ip netns
# exec`, which remounts /sys and hides the cgroup filesystem from slurmd).
in_ns() {
    local ns=$1
    shift
    nsenter --net="/run/netns/$ns" "$@"
}

# Starts daemon "$@" as host $1: in its network namespace, with its own
# hostname (slurmctld refuses to run on a host not named in SlurmctldHost, and
# a job's `hostname` then names its node).
start_as() {
    local name=$1
    shift
    in_ns "$name" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
}

install_packages() {
    command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v ip >/dev/null && return
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge iproute2 >/dev/null
}

add_host() {
    local name=$1 addr=$2
    ip netns add "$name"
    ip link add "veth-$name" type veth peer name eth0 netns "$name"
    ip link set "veth-$name" master "$BRIDGE" up
    in_ns "$name" ip addr add "$addr/24" dev eth0
    in_ns "$name" ip link set eth0 up
    in_ns "$name" ip link set lo up
    echo "$addr $name $HOSTS_TAG" >>/etc/hosts
}

write_config() {
    local cpus
    cpus=$(nproc)
    mkdir -p "$state/spool" "$state/log"
    cat >"$state/slurm.conf" <<EOF
ClusterName=pregen-test
SlurmctldHost=ctl($NET.10)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$state/spool/ctld
SlurmdSpoolDir=$state/spool/%n
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd-%n.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=300
MinJobAge=600
KillWait=20
MpiDefault=none
MailProg=/bin/true
EOF
    local i
    for i in $(seq 1 "$nodes"); do
        echo "NodeName=n$i NodeAddr=$NET.$((10 + i)) CPUs=$cpus State=UNKNOWN"
    done >>"$state/slurm.conf"
    echo "PartitionName=main Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4" \
        >>"$state/slurm.conf"
}

start_munge() {
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    runuser -u munge -- munged
    touch "$state/started-munge"
    local start=$SECONDS
    until munge -n 2>/dev/null | unmunge >/dev/null 2>&1; do
        [ $((SECONDS - start)) -lt 10 ] || { echo "$0: munged does not answer" >&2; exit 1; }
        sleep 0.2
    done
}

up() {
    install_packages
    if ip link show "$BRIDGE" >/dev/null 2>&1; then
        echo "$0: $BRIDGE exists: a test cluster is up already (run down first)" >&2
        exit 1
    fi
    mkdir -p "$state"
    write_config
    ip link add "$BRIDGE" type bridge
    ip addr add "$NET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    add_host ctl "$NET.10"
    local i
    for i in $(seq 1 "$nodes"); do
        add_host "n$i" "$NET.$((10 + i))"
    done
    start_munge
    export SLURM_CONF=$state/slurm.conf
    start_as ctl slurmctld -c
    for i in $(seq 1 "$nodes"); do
        start_as "n$i" slurmd -N "n$i"
    done
    # Up when every node is idle.
    local start=$SECONDS
    until [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq "$nodes" ]; do
        if [ $((SECONDS - start)) -gt 60 ]; then
            echo "$0: nodes not idle after 60 s:" >&2
            sinfo -N >&2 || true
            tail -n 20 "$state"/log/*.log >&2 || true
            exit 1
        fi
        sleep 1
    done
    echo "cluster up: ctl and $nodes nodes ($(sinfo -h -o %D) idle), SLURM_CONF=$state/slurm.conf"
}

stop_pidfile() {
    local file=$1
    [ -s "$file" ] || return 0
    local pid
    pid=$(cat "$file")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

down() {
    local f
    for f in "$state"/slurmd-*.pid "$state/slurmctld.pid"; do
        [ -e "$f" ] && stop_pidfile "$f"
    done
    # Whatever a job left behind (slurmstepd, pregen) dies with its namespace's users.
    local ns pid
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^(ctl|n[0-9]+)$' || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -9 "$pid" 2>/dev/null || true
        done
        ip netns del "$ns" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    sed -i "/$HOSTS_TAG\$/d" /etc/hosts
    if [ -e "$state/started-munge" ]; then
        pkill -x munged || true
        for _ in $(seq 1 50); do
            pgrep -x munged >/dev/null || break
            sleep 0.1
        done
        rm -f "$state/started-munge"
    fi
}

# Node $1 dies at once: slurmd, the job steps and their processes killed, its
# link cut. Slurm is told it is down (as it would find out after
# SlurmdTimeout), so its job ends now.
lose() {
    local node=$1 pid
    ip link set "veth-$node" down
    for pid in $(ip netns pids "$node"); do
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -f "$state/slurmd-$node.pid"
    SLURM_CONF=$state/slurm.conf scontrol update NodeName="$node" State=DOWN Reason="lost (test)"
}

revive() {
    local node=$1
    ip link set "veth-$node" up
    export SLURM_CONF=$state/slurm.conf
    start_as "$node" slurmd -N "$node"
    # ReturnToService=2: the node is back once its slurmd registers.
    for _ in $(seq 1 30); do
        sinfo -h -n "$node" -o %t | grep -q '^idle' && return
        sleep 1
    done
    echo "$0: $node not idle 30 s after its slurmd restarted" >&2
    exit 1
}

case $action in
    up) up ;;
    down) down ;;
    lose) lose "${3:?usage: $0 lose STATE_DIR NODE}" ;;
    revive) revive "${3:?usage: $0 revive STATE_DIR NODE}" ;;
    *) usage ;;
esac
