#!/usr/bin/env bash
# The main job, for now: index tokio's source (a dependency of this workspace,
# about 10,000 units) with a release build of the engine and print what it found
# and the time per phase.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
cargo build --release -p sens-bench
tokio_dir=$(cargo metadata --format-version 1 | python3 -c '
import json, os, sys
packages = json.load(sys.stdin)["packages"]
dirs = [os.path.dirname(p["manifest_path"]) for p in packages
        if p["name"] == "tokio" and p["version"] == "1.54.1"]
if not dirs:
    sys.exit("tokio 1.54.1 is not in this workspace'"'"'s dependencies (cargo metadata)")
print(dirs[0])
')
"$root/target/release/sens-bench" engine index "$tokio_dir"
