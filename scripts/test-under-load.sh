#!/usr/bin/env bash
# Runs the README's test command N times (default 3) while every core spins, as on a busy
# machine: tests must not depend on what else runs there.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for _ in $(seq "$(nproc)"); do
    sh -c 'while :; do :; done' &
    pids+=($!)
done
for run in $(seq "$runs"); do
    echo "== run $run of $runs, under load on $(nproc) cores"
    cargo test --workspace --quiet
done
