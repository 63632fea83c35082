#!/usr/bin/env bash
# How long headless Chromium takes to load the viewer's index (scripts run, DOM
# dumped) for a 500-run batch, against the 20-run fixture batch: prints both and
# the ratio. The 500 runs are the fixture's 20 records repeated 25 times (rep 100 k + its rep).
# Needs chromium (`apt-get install -y chromium`) and a built target/debug/sens-bench.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/target/debug/sens-bench"
small="$root/sens-bench/tests/fixtures/batch-small"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/large"
python3 - "$small/runs.jsonl" "$work/large/runs.jsonl" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
with open(sys.argv[2], "w") as out:
    for rep in range(1, 26):
        for record in records:
            out.write(json.dumps(dict(record, rep=rep * 100 + record["rep"])) + "\n")
PY
load() {
    local profile
    profile=$(mktemp -d -p "$work")
    local start=$EPOCHREALTIME
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run \
        --user-data-dir="$profile" --dump-dom "file://$1/report.html" >"$work/dom.html" 2>/dev/null
    grep -q 'data-ready="1"' "$work/dom.html"
    echo "$EPOCHREALTIME - $start" | bc
}
"$bench" report "$small" --out "$work/small-out" >/dev/null
"$bench" report "$work/large" --out "$work/large-out" >/dev/null
small_s=$(load "$work/small-out")
large_s=$(load "$work/large-out")
echo "index load, 20 runs:  ${small_s} s"
echo "index load, 500 runs: ${large_s} s"
echo "ratio: $(echo "scale=2; $large_s / $small_s" | bc)"
