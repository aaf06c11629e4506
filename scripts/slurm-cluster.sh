#!/usr/bin/env bash
# A private one-node Slurm cluster on this machine, without systemd, for testing the batch
# recipes of docs/batch.md (used by scripts/slurm-batch-test.sh).
#
#   scripts/slurm-cluster.sh start DIR    create DIR and start munged, slurmctld and slurmd
#   scripts/slurm-cluster.sh stop DIR     cancel the cluster's jobs and end those three daemons
#
# Every file of the cluster lives in DIR (made absolute):
#   DIR/slurm.conf                 the configuration; point the client commands at it with
#                                  `export SLURM_CONF=DIR/slurm.conf` (sinfo, sbatch, squeue, scancel)
#   DIR/munge/munge.key            a fresh MUNGE key (mungekey, or 1 KiB from /dev/urandom)
#   DIR/munge/munge.socket.2       munged's socket (slurm.conf's AuthInfo=socket=… points at it)
#   DIR/state, DIR/spool           slurmctld's StateSaveLocation, slurmd's SlurmdSpoolDir
#   DIR/log/{munged,slurmctld,slurmd}.log
#   DIR/run/{munged,slurmctld,slurmd}.pid
#
# The cluster: one node named after this host's short hostname (`hostname -s`) at address
# 127.0.0.1, SlurmctldHost the same, ports 16817 (slurmctld) and 16818 (slurmd) unless
# SLURM_CLUSTER_CTLD_PORT / SLURM_CLUSTER_SLURMD_PORT say otherwise; every message goes over
# loopback, and when the host name resolves to a loopback address the daemons listen only
# there (CommunicationParameters=NoCtldInAddrAny,NoInAddrAny), not on every address. The node declares CPUs=8, more than this machine has (SlurmdParameters=
# config_overrides), and SelectType=select/cons_tres with CR_CPU shares it CPU by CPU, so eight
# one-CPU tasks of a job array run at once. ProctrackType=proctrack/linuxproc and
# TaskPlugin=task/none (no cgroups), MpiDefault=none, no accounting (sacct has nothing),
# ReturnToService=2. Everything runs as root, daemonized, each daemon writing its pid file:
# munged with its own --socket, --key-file, --pid-file, --log-file and --seed-file (and
# --force, so that its ownership and permission checks of the directories above DIR warn
# instead of refusing; under /tmp it starts without), slurmctld and slurmd with -f DIR/slurm.conf.
#
# `start` waits until sinfo reports the node idle (30 s at most; then it prints the logs, stops
# what it started and fails). `stop` first cancels the cluster's jobs (so no slurmstepd or job
# is left behind), then ends exactly the daemons named by the pid files in DIR, after checking
# that each pid is still that daemon started for DIR; it touches no other process. Both are
# safe to run twice. Needs the Debian packages slurmctld, slurmd, slurm-client and munge
# (scripts/bootstrap.sh installs them).
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 64; }
[ $# -eq 2 ] || usage
action=$1
if [ "$action" = stop ] && [ ! -d "$2" ]; then exit 0; fi
mkdir -p "$2"
dir=$(cd "$2" && pwd)

ctld_port=${SLURM_CLUSTER_CTLD_PORT:-16817}
slurmd_port=${SLURM_CLUSTER_SLURMD_PORT:-16818}
host=$(hostname -s)
conf=$dir/slurm.conf
socket=$dir/munge/munge.socket.2
export SLURM_CONF=$conf

log() { echo "slurm-cluster: $*" >&2; }

# The pid in DIR/run/NAME.pid if that process is alive and is NAME started for DIR.
daemon_pid() {
    local name=$1 pidfile=$dir/run/$1.pid pid cmdline
    [ -s "$pidfile" ] || return 1
    pid=$(tr -dc '0-9' < "$pidfile")
    [ -n "$pid" ] && running "$pid" || return 1
    cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || return 1
    case "$cmdline" in
        *"$name"*"$dir/"*) echo "$pid" ;;
        *) return 1 ;;
    esac
}

# Whether a process is running (a zombie, ended but not yet reaped by its parent, is not).
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

stop_daemon() {
    local name=$1 pid i
    if ! pid=$(daemon_pid "$name"); then
        rm -f "$dir/run/$name.pid"
        return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        running "$pid" || break
        sleep 0.1
    done
    if running "$pid"; then
        log "$name (pid $pid) still running after 10 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/run/$name.pid"
    log "stopped $name (pid $pid)"
}

stop_cluster() {
    local i
    # The jobs first, while slurmctld and slurmd can still end them.
    if daemon_pid slurmctld >/dev/null && daemon_pid slurmd >/dev/null; then
        if [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
            scancel --quiet --full --user="$(id -un)" 2>/dev/null || true
            for ((i = 0; i < 100; i++)); do
                [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
                sleep 0.1
            done
        fi
    fi
    stop_daemon slurmd
    stop_daemon slurmctld
    stop_daemon munged
}

print_logs() {
    local f
    for f in "$dir"/log/*.log; do
        [ -e "$f" ] || continue
        echo "----- $f (last 40 lines)" >&2
        tail -n 40 "$f" >&2
    done
}

port_in_use() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

start_cluster() {
    local d i state
    for d in munged slurmctld slurmd; do
        if daemon_pid "$d" >/dev/null; then
            log "$d is already running for $dir: stop it first"
            exit 1
        fi
    done
    for d in munged slurmctld slurmd mungekey sinfo; do
        command -v "$d" >/dev/null || [ -x "/usr/sbin/$d" ] || { log "missing: $d (scripts/bootstrap.sh installs it)"; exit 1; }
    done
    for i in "$ctld_port" "$slurmd_port"; do
        if port_in_use "$i"; then
            log "port $i is in use (another cluster?); set SLURM_CLUSTER_CTLD_PORT/SLURM_CLUSTER_SLURMD_PORT"
            exit 1
        fi
    done

    mkdir -p "$dir"/{munge,state,spool,log,run}
    chmod 0755 "$dir" "$dir/munge" "$dir/log" "$dir/run"

    # MUNGE: a key of our own, munged on our own socket.
    if [ ! -s "$dir/munge/munge.key" ]; then
        if ! mungekey --create --keyfile="$dir/munge/munge.key" 2>/dev/null; then
            dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
        fi
    fi
    chmod 0400 "$dir/munge/munge.key"
    munged --force --socket="$socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/munged.seed" --num-threads=4 2>>"$dir/log/munged.log" || {
        log "munged did not start"; print_logs; exit 1; }
    for ((i = 0; i < 50; i++)); do
        munge --socket="$socket" -n 2>/dev/null | unmunge --socket="$socket" >/dev/null 2>&1 && break
        sleep 0.1
    done

    # The daemons listen on every address unless told to bind to what the host name resolves
    # to; do that when it resolves to loopback (here /etc/hosts says 127.0.0.1).
    local bind=""
    case "$(getent ahostsv4 "$host" 2>/dev/null | awk 'NR == 1 {print $1}')" in
        127.*) bind="CommunicationParameters=NoCtldInAddrAny,NoInAddrAny" ;;
    esac

    cat > "$conf" <<EOF
# A private one-node cluster made by scripts/slurm-cluster.sh; every file lives in $dir.
ClusterName=scenelinear
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
$bind
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmdTimeout=60
NodeName=$host NodeHostname=$host NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

    # -f puts the configuration's path on the command line, which `stop` checks before it kills.
    /usr/sbin/slurmctld -f "$conf" -i || { log "slurmctld did not start"; print_logs; stop_cluster; exit 1; }
    /usr/sbin/slurmd -f "$conf" -N "$host" || { log "slurmd did not start"; print_logs; stop_cluster; exit 1; }

    for ((i = 0; i < 300; i++)); do
        state=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
        if [ "$state" = "idle" ]; then
            log "cluster up in $dir: node $host idle, SLURM_CONF=$conf"
            return 0
        fi
        sleep 0.1
    done
    log "the node is not idle after 30 s (sinfo says '${state:-nothing}')"
    print_logs
    stop_cluster
    exit 1
}

case "$action" in
    start) start_cluster ;;
    stop) stop_cluster ;;
    *) usage ;;
esac
