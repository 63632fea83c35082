#!/usr/bin/env bash
# Fetches the pinned projects the precision labels (bench/precision/labels.jsonl)
# were drawn from, into DIR (default /tmp/precision-corpus), one folder per
# project named as in the labels' `project` field. Rust crates come from the
# local cargo registry (run `cargo fetch` in a project depending on them if
# absent), Python packages from PyPI as sdists/wheels, JavaScript and
# TypeScript packages from npm.
set -euo pipefail
out=${1:-/tmp/precision-corpus}
mkdir -p "$out"
cd "$out"

crate() { # name version
    local src
    src=$(ls -d "$HOME"/.cargo/registry/src/*/"$1-$2" 2>/dev/null | head -n1)
    [ -n "$src" ] || { echo "crate $1 $2 is not in ~/.cargo/registry/src" >&2; exit 1; }
    rm -rf "$1" && cp -r "$src" "$1"
}

wheel() { # name version folder
    local tmp
    tmp=$(mktemp -d)
    pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$1==$2"
    rm -rf "$3" && mkdir "$3"
    (cd "$3" && python3 -m zipfile -e "$tmp"/*.whl .)
    rm -rf "$tmp"
}

npm_src() { # name version folder subfolder
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$1@$2" >/dev/null && tar xzf ./*.tgz)
    rm -rf "$3" && mv "$tmp/package/$4" "$3"
    rm -rf "$tmp"
}

crate tokio 1.54.1
crate regex-automata 0.4.19
wheel rich 13.9.4 rich
wheel click 8.1.7 click
wheel jinja2 3.1.4 jinja2
wheel pygments 2.18.0 pygments
npm_src rxjs 7.8.1 rxjs src
npm_src luxon 3.5.0 luxon src
npm_src three 0.169.0 three src
npm_src @tanstack/query-core 5.59.0 query-core src
wheel werkzeug 3.0.3 werkzeug
wheel httpx 0.27.0 httpx
wheel marshmallow 3.21.3 marshmallow
crate hyper 1.12.0
npm_src @tanstack/table-core 8.20.5 table-core src
npm_src ajv 8.17.1 ajv lib
npm_src mobx 6.13.5 mobx src
npm_src moment 2.30.1 moment src
npm_src jquery 3.7.1 jquery src
npm_src preact 10.24.3 preact src
echo "projects in $out: tokio regex-automata rich click jinja2 pygments rxjs luxon three query-core werkzeug httpx marshmallow hyper table-core ajv mobx moment jquery preact"
