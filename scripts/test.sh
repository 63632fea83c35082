#!/usr/bin/env bash
# The test command: set-up, then every test of the workspace. The end-to-end tests
# find the pinned CLI in .tools/ (or SENS_CLAUDE_BIN) and fail when it is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
export PATH="$root/.tools/node_modules/.bin:$PATH"
cargo test --workspace --all-targets "$@"
