#!/usr/bin/env bash
# The large corpus of `sens-bench engine scale`: every dependency of this
# workspace as `cargo vendor` writes it, pinned by Cargo.lock, one folder per
# crate. Usage: scripts/vendor-corpus.sh [DIR] (default: target/corpus/vendor).
# Idempotent: an existing corpus of the same Cargo.lock is kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/target/corpus/vendor"}
stamp="$out/.cargo-lock.sha256"
want=$(sha256sum "$root/Cargo.lock" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "corpus: $out (up to date)"
    exit 0
fi
rm -rf "$out"
mkdir -p "$(dirname "$out")"
# The vendored sources only; the configuration cargo prints is not needed.
(cd "$root" && cargo vendor --locked --versioned-dirs "$out" >/dev/null)
echo "$want" >"$stamp"
echo "corpus: $out ($(find "$out" -mindepth 1 -maxdepth 1 -type d | wc -l) crates, $(find "$out" -type f | wc -l) files)"
