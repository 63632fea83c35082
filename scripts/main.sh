#!/usr/bin/env bash
# The main job: a real batch end to end, then its report.
#
# Without ANTHROPIC_API_KEY: the `oracle` agent (the pinned Claude Code CLI against
# sens-bench's scripted model server, playing each task's reference solution) on
# the four Python tasks under C0 and C2, one repetition each. No network is needed
# beyond the first download of each task's source.
#
# With ANTHROPIC_API_KEY set: the real model, with the seed study's settings
# (a Sonnet model, medium effort, 3 repetitions, C0/C1/C2). Override with
# SENS_MODEL, SENS_EFFORT, SENS_REPS, SENS_CONDITIONS, SENS_JOBS.
#
# Without a key it also plays two scripted scenarios under C0 and C2, each into a
# batch of its own (results/<batch>-scenario-<script>), so the reports show the
# engine at work:
# - bench/scenarios/copy-then-reuse.json on bench/scenarios/tasks/amount-total: the
#   agent first copies an existing function, and under C2 reuses it after the
#   engine's denial;
# - bench/scenarios/reimplement-then-reuse.json on bench/scenarios/tasks/search-titles:
#   the agent writes the project's `fold` again under other names, and under C2
#   calls it after the engine's reuse note (under C0 its own version stays).
#
# The batch folder is results/<batch>; rerunning the same command resumes it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
cargo build --release -p sens-bench
bench="$root/target/release/sens-bench"
tasks=(py-confirm-words py-envvar-quoted py-hex-colors py-wide-chars)
task_args=()
for task in "${tasks[@]}"; do
    task_args+=(--task "$task")
done

if [[ -n "${ANTHROPIC_API_KEY:-}" ]]; then
    batch="results/${SENS_BATCH:-claude-main}"
    agent_args=(--agent claude --model "${SENS_MODEL:-sonnet}"
        --effort "${SENS_EFFORT:-medium}")
    reps="${SENS_REPS:-3}"
    conditions="${SENS_CONDITIONS:-C0,C1,C2}"
else
    batch="results/${SENS_BATCH:-oracle-main}"
    agent_args=(--agent oracle)
    reps="${SENS_REPS:-1}"
    conditions="${SENS_CONDITIONS:-C0,C2}"
fi

"$bench" run --tasks bench/tasks "${task_args[@]}" --condition "$conditions" \
    --reps "$reps" --jobs "${SENS_JOBS:-2}" "${agent_args[@]}" --out "$batch" --timings
"$bench" report "$batch"

if [[ -z "${ANTHROPIC_API_KEY:-}" ]]; then
    # Each scenario is its own script (the agent of a run), so each is its own batch:
    # a batch holds one agent.
    for pair in amount-total:copy-then-reuse search-titles:reimplement-then-reuse; do
        scenario="$batch-scenario-${pair#*:}"
        "$bench" run --tasks bench/scenarios/tasks --task "${pair%%:*}" --condition C0,C2 \
            --reps 1 --jobs "${SENS_JOBS:-2}" --agent "script:bench/scenarios/${pair#*:}.json" \
            --out "$scenario" --timings
        "$bench" report "$scenario"
    done
fi
