#!/usr/bin/env bash
# Submits a sens-bench batch to Slurm as N shards and a merge:
#
#   scripts/slurm/submit.sh [--wait] N ROOT COMMAND...
#   e.g. scripts/slurm/submit.sh 8 /shared/results/claude run --tasks bench/tasks \
#            --condition C0,C1,C2 --reps 3 --agent claude --model sonnet
#
# An array job of N tasks (batch.sbatch: shard K into ROOT/shard-K), then a merge
# job that starts only when every shard succeeded (--dependency=afterok) and writes
# ROOT/merged with its report (merge.sbatch). Logs: ROOT/slurm-*.out. --wait
# returns when the merge job ends, with its exit code (a failed shard cancels it).
# SENS_SLURM_CPUS (default 1) CPUs per shard, its --jobs; SENS_SBATCH_ARGS more
# sbatch options for both jobs (e.g. "--partition=gpu --time=12:00:00").
set -euo pipefail
wait=()
if [ "${1:-}" = --wait ]; then
    wait=(--wait)
    shift
fi
if [ $# -lt 3 ]; then
    echo "usage: $0 [--wait] N ROOT COMMAND..." >&2
    exit 2
fi
count=$1
root=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$root"
read -r -a extra <<<"${SENS_SBATCH_ARGS:-}"
array=$(sbatch --parsable --array="1-$count" --cpus-per-task="${SENS_SLURM_CPUS:-1}" \
    --output="$root/slurm-shard-%a.out" "${extra[@]}" \
    "$here/batch.sbatch" "$root" "$count" "$@")
array=${array%%;*}
echo "shards: job $array (array 1-$count), folders $root/shard-K"
sbatch --parsable "${wait[@]}" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$root/slurm-merge.out" "${extra[@]}" \
    "$here/merge.sbatch" "$root" "$count" |
    sed 's/^/merge: job /'
