#!/usr/bin/env bash
# On a CUDA machine: build the training example with the `cuda` feature, run it with the NVTX
# recorder attached, and check what reached NVTX: op ranges in the domain `burn` for the CUDA
# backend's forward and backward kernels, user ranges, the capture range, balanced per thread.
#
#   scripts/gpu-check.sh [steps]            # prints a summary; exits non-zero on a failed check
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-20}"
out="target/burn-profiled/gpu-check"
mkdir -p "$out"

cargo build --release -p nvtx-recorder
cargo build --release --features cuda --example train
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

NVTX_INJECTION64_PATH="$PWD/target/release/libnvtx_recorder.so" \
NVTX_RECORDER_OUT="$out/nvtx.tsv" \
BURN_PROFILED=profile \
    ./target/release/examples/train --steps "$steps" --out "$out" | tee "$out/stdout.txt"

python3 - "$out/nvtx.tsv" "$out/run.json" <<'PY'
import collections, json, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if not line.startswith(("ts_ns", "#"))]
run = json.load(open(sys.argv[2]))
assert "cuda" in run["backend"].lower() or "cubecl" in run["backend"].lower(), run["backend"]
depth = collections.Counter()
ops = collections.Counter()
user = collections.Counter()
for ts, tid, kind, domain, d, msg_type, message, *extra in rows:
    key = (tid, domain)
    if kind == "push":
        depth[key] += 1
        if domain == "burn":
            assert msg_type == "registered", ("op ranges use registered strings", message)
            ops[message] += 1
        else:
            user[message] += 1
    elif kind == "pop":
        depth[key] -= 1
        assert depth[key] >= 0, ("a pop without a push", tid, domain)
assert all(v == 0 for v in depth.values()), ("unbalanced ranges", depth)
for op in ["conv2d", "conv2d_weight_backward", "float_matmul", "linear"]:
    assert ops[op] > 0, (op, "missing from the op ranges")
for rng in ["forward", "backward", "optimizer", "step", "attention", "load batch"]:
    assert user[rng] > 0, (rng, "missing from the user ranges")
assert any(r[2] == "start" and r[6] == "capture" for r in rows), "the capture range"
print(f"OK: {run['backend']}: {sum(ops.values())} op ranges ({len(ops)} ops), "
      f"{sum(user.values())} user ranges, balanced on every thread; top ops: {ops.most_common(5)}")
PY
