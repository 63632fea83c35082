#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying the scripts of this folder
# and for CI: `local-cluster.sh up` starts munged, slurmctld and slurmd as plain
# root processes (no systemd) with a slurm.conf for localhost, waits until the
# node takes jobs and prints the line to source (`export SLURM_CONF=...`);
# `local-cluster.sh down` stops exactly those processes (by their pid files) and
# removes the cluster's folder. Needs Debian's slurm-wlm and munge packages.
#
# SENS_SLURM_DIR (default /tmp/sens-slurm) holds the configuration, state, logs
# and pid files.
set -euo pipefail
dir=${SENS_SLURM_DIR:-/tmp/sens-slurm}
conf=$dir/slurm.conf

up() {
    if [ -e "$dir/slurmctld.pid" ]; then
        echo "local-cluster: already up in $dir (run: $0 down)" >&2
        exit 1
    fi
    for daemon in munged mungekey slurmctld slurmd sbatch; do
        command -v "$daemon" >/dev/null || {
            echo "local-cluster: $daemon is missing: apt-get install -y slurm-wlm munge" >&2
            exit 1
        }
    done
    mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
    local node cpus memory
    node=$(hostname -s)
    cpus=$(nproc)
    memory=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)
    cat >"$conf" <<CONF
ClusterName=sens-local
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$node CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
    # munged's own key, socket and pid file: nothing of a system munged is touched.
    mungekey --create --keyfile="$dir/munge/munge.key"
    munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munge.pid" --log-file="$dir/munge.log" --seed-file="$dir/munge/munge.seed"
    SLURM_CONF=$conf slurmctld
    SLURM_CONF=$conf slurmd
    # Ready when the node is idle: that is when it takes jobs.
    local tries=0
    until [ "$(SLURM_CONF=$conf sinfo -h -n "$node" -o %T 2>/dev/null)" = idle ]; do
        tries=$((tries + 1))
        if [ "$tries" -gt 120 ]; then
            echo "local-cluster: the node did not become idle; logs in $dir" >&2
            tail -n 20 "$dir"/*.log >&2 || true
            exit 1
        fi
        sleep 0.5
    done
    echo "export SLURM_CONF=$conf"
}

down() {
    # The reverse order of up: slurmd, slurmctld, then munged.
    local name pid
    for name in slurmd slurmctld munge; do
        [ -s "$dir/$name.pid" ] || continue
        pid=$(cat "$dir/$name.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    *)
        echo "usage: $0 up|down" >&2
        exit 2
        ;;
esac
