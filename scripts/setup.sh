#!/usr/bin/env bash
# Installs what the tests and the main job need, idempotently: the pinned Claude
# Code CLI and jscpd into .tools/ (ignored by git), and the Python packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.tools"
claude_version=2.1.197
jscpd_version=5.3.2

mkdir -p "$tools"
if ! "$tools/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$claude_version" \
    || ! "$tools/node_modules/.bin/jscpd" --version 2>/dev/null | grep -q "$jscpd_version"; then
    npm install --prefix "$tools" --save-exact --no-audit --no-fund \
        "@anthropic-ai/claude-code@$claude_version" "jscpd@$jscpd_version"
fi
python3 -m pip install --quiet --disable-pip-version-check -r "$root/scripts/requirements.txt"
echo "setup: claude $("$tools/node_modules/.bin/claude" --version), jscpd $("$tools/node_modules/.bin/jscpd" --version)"
