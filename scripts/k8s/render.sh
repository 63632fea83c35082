#!/usr/bin/env bash
# Renders batch-job.yaml for one batch to standard output:
#
#   scripts/k8s/render.sh N JOBS IMAGE BATCH COMMAND... > job.yaml
#   e.g. scripts/k8s/render.sh 8 2 registry.example/sens-bench:1 claude-main \
#            run --tasks bench/tasks --condition C0,C1,C2 --reps 3 --agent claude
#
# N shards, JOBS runs at a time in each (its CPU request), IMAGE holding
# sens-bench and the pinned CLI, BATCH the folder name under the volume's
# /results, COMMAND the batch command without --shard, --jobs and --out.
set -euo pipefail
if [ $# -lt 5 ]; then
    echo "usage: $0 N JOBS IMAGE BATCH COMMAND..." >&2
    exit 2
fi
shards=$1 jobs=$2 image=$3 batch=$4
shift 4
command="$*"
for number in "$shards" "$jobs"; do
    [[ $number =~ ^[1-9][0-9]*$ ]] || {
        echo "render.sh: N and JOBS are whole numbers >= 1, not \`$number\`" >&2
        exit 2
    }
done
[[ $batch =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || {
    echo "render.sh: BATCH \`$batch\` must be a Kubernetes name (lower case, digits, -)" >&2
    exit 2
}
# Bash's own replacement: no character of a value is special to it.
text=$(<"$(dirname "$0")/batch-job.yaml")
text=${text//@SHARDS@/$shards}
text=${text//@JOBS@/$jobs}
text=${text//@IMAGE@/$image}
text=${text//@BATCH@/$batch}
text=${text//@COMMAND@/$command}
printf '%s\n' "$text"
