#!/usr/bin/env bash
# Between-process spread of an example's step time: RUNS runs of `cargo run --release --example
# EXAMPLE -- ARGS`, idle or with every core busy (LOAD=1), each in its own process, written to
# target/spread/LABEL/<n>; then each run's median step, their spread (slowest median over
# fastest), and `burn-profiled diff` of consecutive pairs (1 vs 2, 3 vs 4, ...) with one run a
# side. The diff's default floor for one run a side (diff::ONE_RUN_NOISE_PERCENT) rests on it.
#
#   scripts/between-run-spread.sh LABEL RUNS EXAMPLE [ARGS...]
#   LOAD=1 scripts/between-run-spread.sh train-load 20 train --steps 30 --preset eval
set -euo pipefail
cd "$(dirname "$0")/.."
label=$1 runs=$2 example=$3
shift 3
cargo build --release --quiet --example "$example" && cargo build --release --quiet -p burn-profiled-core --bin burn-profiled
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
if [ "${LOAD:-0}" = 1 ]; then
    for _ in $(seq "$(nproc)"); do
        sh -c 'while :; do :; done' &
        pids+=($!)
    done
fi
out=target/spread/$label
rm -rf "$out"
for run in $(seq "$runs"); do
    "target/release/examples/$example" "$@" --out "$out/$run" >/dev/null 2>&1
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
medians = [statistics.median(json.load(open(f"{out}/{r}/run.json"))["step_seconds"]) for r in range(1, runs + 1)]
print("run medians (ms):", " ".join(f"{m * 1e3:.1f}" for m in medians))
print(f"spread: slowest over fastest {max(medians) / min(medians):.3f}; "
      f"largest pair difference {max(abs(medians[i + 1] / medians[i] - 1) for i in range(0, runs - 1, 2)) * 100:.1f}%")
PY
for run in $(seq 1 2 $((runs - 1))); do
    target/release/burn-profiled diff "$out/$run" "$out/$((run + 1))" | head -1
done
