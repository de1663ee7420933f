#!/usr/bin/env bash
# The GPU check of both editions, in two halves: the lent GPU machine has no Rust toolchain.
#
#   scripts/gpu-check.sh build               # here: release binaries (0.21 with `cupti`, 0.22 with
#                                            # `cuda`), stripped and packed into gpu-bin/ (git-ignored;
#                                            # carry it to the GPU machine)
#   scripts/gpu-check.sh run [steps] [021|022]  # there: runs them and checks; exits non-zero on a
#                                            # failure (both editions unless one is named)
#   scripts/gpu-check.sh dry-run [steps] [021|022]  # here, before lending device time: `run`
#                                            # without a GPU; each GPU binary must get as far as
#                                            # its first GPU call and fail there with CUDA's error,
#                                            # the benches must list their benchmarks; the 0.22
#                                            # half, built for wgpu here, runs whole on lavapipe
#
# Burn 0.21: `run` trains the example, fused (`burn_profiled::fused::Cuda`) and `--unfused`,
# under the `profile` preset with the NVTX recorder attached, and checks
# what reached NVTX (op ranges for forward and backward kernels, user ranges, the capture range,
# balanced per thread, op ranges on CubeCL's device thread) and the device time in run.json (at
# least 99% of kernels attributed to an op; the ops' device time within 5% of all kernels'). Then
# it runs the `gpu_step` bench: step times with everything off, op ranges on the calling thread,
# op ranges with steps on the launch thread, and device time on, fused and unfused, per-op
# memory; then, interleaved (median ratios to the same round's baseline), the fused step with
# op ranges and statistics queued against burn's, and per-op memory against statistics; then the
# `numerics` bench: `check_finite` (its sums read in batches, no sync per op) and fingerprints
# against statistics alone, on NdArray, `Profiled<Cuda>` and `fused::Cuda`.
#
# Burn 0.22: the `train_022` example on `BURN_DEVICE=cuda` (on wgpu where CUDA cannot be built:
# see `build`), first without a session, then with
# one (scripts/gpu-check-022.toml: the profile preset with device time from CubeCL's launch
# observer) under the NVTX recorder; checks the losses bit for bit, the block ranges (balanced,
# on the thread that launches the kernels), every kernel measured by the device inside a block
# (none timed on the host, none outside a block); then the `session_step` bench, interleaved:
# everything off, statistics, op ranges and device time against no session.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="gpu-bin"

case "${1:-}" in
build)
    cargo build --release -p nvtx-recorder
    cargo build --release --features cupti --example train
    bench=$(cargo bench --features cupti --bench gpu_step --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "gpu_step" and m.get("executable"):
        print(m["executable"])')
    numerics=$(cargo bench --features cupti --bench numerics --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "numerics" and m.get("executable"):
        print(m["executable"])')
    # Burn 0.22's CUDA backend (cubecl-cuda 0.11) builds LLVM's NVPTX shims from a bundle its
    # build script downloads (tracel-llvm-bundler): a machine without internet cannot build it.
    # The check then takes the edition on wgpu (Vulkan on the GPU), and says so.
    backend022=cuda
    if ! cargo build --release -p burn-profiled-022 --features cuda --example train_022; then
        echo "gpu-check: Burn 0.22 with CUDA does not build here (see above); checking it on wgpu"
        backend022=wgpu
    fi
    features022=""
    if [ "$backend022" = cuda ]; then features022="--features cuda"; fi
    cargo build --release -p burn-profiled-022 $features022 --example train_022
    bench022=$(cargo bench -p burn-profiled-022 $features022 --bench session_step --no-run \
        --message-format=json 2>/dev/null | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "session_step" and m.get("executable"):
        print(m["executable"])')
    rm -rf "$bin" && mkdir -p "$bin/files"
    cp target/release/libnvtx_recorder.so target/release/examples/train \
        target/release/examples/train_022 scripts/gpu-check-022.toml "$bin/files/"
    cp "$bench" "$bin/files/gpu_step"
    cp "$numerics" "$bin/files/numerics"
    cp "$bench022" "$bin/files/session_step"
    strip "$bin/files/train" "$bin/files/gpu_step" "$bin/files/numerics" "$bin/files/train_022" \
        "$bin/files/session_step"
    echo "$backend022" > "$bin/files/backend-022.txt"
    # The device tool carries 64 MiB at most: packed (xz; `run` unpacks it with Python's lzma).
    tar -C "$bin/files" -cJf "$bin/bins.tar.xz" .
    rm -rf "$bin/files"
    du -sh "$bin"
    ;;
run | dry-run)
    dry=0
    if [ "$1" = dry-run ]; then dry=1; fi
    steps="${2:-$([ "$dry" = 1 ] && echo 8 || echo 20)}"
    editions="${3:-021 022}"
    out="${OUT:-target/burn-profiled}/gpu-check"
    mkdir -p "$out"
    if [ -f "$bin/bins.tar.xz" ]; then
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$bin/bins.tar.xz" "$bin"
    fi
    if [ "$dry" = 1 ]; then
        echo "gpu-check: dry run, without a GPU: the GPU binaries should stop at their first GPU call"
    else
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    fi
    # A failed check does not stop the run: the bench's figures still come back (device time
    # is scarce), and the exit status says whether everything passed.
    status=0
    if [[ " $editions " == *" 021 "* ]]; then
    for mode in fused unfused; do
    run_out="$out/$mode"
    mkdir -p "$run_out"
    flag=""
    if [ "$mode" = unfused ]; then flag="--unfused"; fi
    trained=0
    NVTX_INJECTION64_PATH="$PWD/$bin/libnvtx_recorder.so" \
    NVTX_RECORDER_OUT="$run_out/nvtx.tsv" \
    BURN_PROFILED=profile \
        "$bin/train" $flag --steps "$steps" --out "$run_out" > "$run_out/stdout.txt" 2>&1 || trained=$?
    if [ "$dry" = 1 ]; then
        # Without a GPU the run must stop at CUDA's first call, having got that far.
        first_gpu_call=$(grep -m1 -iE "libcuda|cuda_error|cuInit|nvidia" "$run_out/stdout.txt" \
            | cut -c1-100 || true)
        if [ "$trained" -ne 0 ] && [ -n "$first_gpu_call" ]; then
            echo "== dry run: the example, $mode, stopped at its first GPU call: $first_gpu_call"
        else
            tail -30 "$run_out/stdout.txt"
            echo "== dry run: the example, $mode, did not stop at a GPU call (exit $trained)"
            status=1
        fi
        continue
    fi
    if [ "$trained" -ne 0 ]; then tail -30 "$run_out/stdout.txt"; status=1; fi
    echo "== the example, $mode"
    grep -E "device time|burn-profiled:" "$run_out/stdout.txt" || true
    python3 - "$run_out/nvtx.tsv" "$run_out/run.json" "$run_out/ops.json" "$mode" <<'PY' || status=1
import collections, json, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if not line.startswith(("ts_ns", "#"))]
run = json.load(open(sys.argv[2]))
assert "cuda" in run["backend"].lower() or "cubecl" in run["backend"].lower(), run["backend"]
depth = collections.Counter()
ops = collections.Counter()
user = collections.Counter()
op_threads = collections.Counter()
names = {}
for ts, tid, kind, domain, d, msg_type, message, *extra in rows:
    key = (tid, domain)
    if kind == "name_thread":
        names[tid] = message
    if kind == "push":
        depth[key] += 1
        if domain == "burn":
            assert msg_type == "registered", ("op ranges use registered strings", message)
            ops[message] += 1
            op_threads[tid] += 1
        else:
            user[message] += 1
    elif kind == "pop":
        depth[key] -= 1
        assert depth[key] >= 0, ("a pop without a push", tid, domain)
assert all(v == 0 for v in depth.values()), ("unbalanced ranges", depth)
fused = sys.argv[4] == "fused"
# Fused: blocks are ops, and convolutions run unfused; unfused: every Burn op.
expected = ["conv2d", "conv2d_weight_backward"] + ([] if fused else ["float_matmul", "linear"])
for op in expected:
    assert ops[op] > 0, (op, "missing from the op ranges")
blocks = [op for op in ops if op.startswith("fused ")]
assert bool(blocks) == fused, ("fused blocks", fused, blocks[:5])
for rng in ["forward", "backward", "optimizer", "step", "attention", "load batch"]:
    assert user[rng] > 0, (rng, "missing from the user ranges")
assert any(r[2] == "start" and r[6] == "capture" for r in rows), "the capture range"
device_thread = [tid for tid, name in names.items() if name.startswith("cubecl")]
assert device_thread, ("the device thread is not named", names)
on_device = sum(op_threads[tid] for tid in device_thread)
share = on_device / max(1, sum(op_threads.values()))
print(f"OK: {run['backend']}: {sum(ops.values())} op ranges ({len(ops)} ops), "
      f"{sum(user.values())} user ranges, balanced on every thread; "
      f"{100 * share:.1f}% of op ranges on {names[device_thread[0]]}; top ops: {ops.most_common(5)}")
# Unfused, steps run there; fused blocks, unfused ops and ops outside steps queue their ranges
# there (the launch thread is attached).
assert share >= 0.99, "op ranges outside the device thread: steps or queued ranges went astray"
device = run.get("device_time")
assert device, "no device time in run.json (CUPTI missing or refused: see stdout.txt)"
kernels, lost = device["kernels"], device["unattributed_kernels"]
attributed = kernels / max(1, kernels + lost)
time_share = device["device_ns"] / max(1, device["device_ns"] + device["unattributed_ns"])
print(f"device time: {kernels} of {kernels + lost} kernels attributed ({100 * attributed:.2f}%), "
      f"{100 * time_share:.2f}% of kernel time; {device['seconds_per_step']} s per step; "
      f"{device['tagged_api_calls']} API calls tagged, {device['incomplete_kernels']} kernels "
      f"without an end, {device['dropped_records']} records dropped, {device['tag_errors']} tag errors")
ops_rows = json.load(open(sys.argv[3]))["rows"]
top = sorted(ops_rows, key=lambda r: r.get("device_total_ns", 0), reverse=True)[:8]
print("top ops by device time (op, phase, calls, kernels, host total us, device total us):")
for r in top:
    print(f"  {r['op']:<28} {r.get('phase', '-'):<12} {r['calls']:>7} {r.get('kernels', 0):>8} "
          f"{r['total_ns'] / 1e3:>12.1f} {r.get('device_total_ns', 0) / 1e3:>12.1f}")
assert kernels + lost > 0, "CUPTI handed over no kernel record"
assert device["tagged_api_calls"] > 0, "CUPTI tagged no API call with an op id"
assert device["dropped_records"] == 0, "CUPTI dropped records: the figures miss them"
assert device["tag_errors"] == 0, "CUPTI refused or mismatched tags"
assert device["incomplete_kernels"] <= 0.01 * kernels, "kernels without an end: collected before a sync?"
assert attributed >= 0.99, "fewer than 99% of kernels attributed to an op"
assert time_share >= 0.95, "the ops' device time is not within 5% of the kernels' total"
PY
    # trace.json in Kineto's terms (docs/guide/hta.md): the device's properties from the
    # driver, each kernel's launch call by correlation, on a thread of the trace, inside its op.
    python3 - "$run_out/trace.json" <<'PY' || status=1
import json, sys
trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
print("deviceProperties:", trace["deviceProperties"])
assert trace["deviceProperties"] and "name" in trace["deviceProperties"][0], "no device name from the driver"
kernels = [e for e in events if e.get("cat") == "kernel"]
calls = {e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_driver"}
ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op"}
thread_names = {e["tid"]: e["args"]["name"] for e in events
                if e.get("name") == "thread_name" and e["pid"] not in {k["pid"] for k in kernels}}
with_call = [k for k in kernels if k["args"]["correlation"] in calls]
inside = 0
by_thread = {}
for k in with_call:
    call, op = calls[k["args"]["correlation"]], ops.get(k["args"].get("External id"))
    name = thread_names.get(call["tid"], f"unnamed {call['tid']}")
    by_thread[name] = by_thread.get(name, 0) + 1
    if op and op["tid"] == call["tid"] and op["ts"] <= call["ts"] and call["ts"] + call["dur"] <= op["ts"] + op["dur"]:
        inside += 1
names = sorted({calls[k["args"]["correlation"]]["name"] for k in with_call})
print(f"trace: {len(kernels)} kernels, {len(with_call)} with their launch call ({names}); "
      f"calls by thread {by_thread}; {inside} calls inside their op's span on the same thread "
      f"(queued ops' spans are on the calling thread, their calls on the device thread)")
assert len(with_call) >= 0.99 * len(kernels), "kernels without their launch call"
PY
    done
    if [ "$dry" = 1 ]; then
        # `--list` runs criterion's part up to the benchmarks' names (the interleaved part
        # runs only when benchmarking): a bench whose criterion part sets up a CUDA device
        # stops there, the others list their benchmarks (`numerics` has none: 0).
        for bench in gpu_step numerics; do
            listed_ok=0
            listing=$("$bin/$bench" --bench --list 2>&1) || listed_ok=$?
            listed=$(grep -c ": benchmark" <<< "$listing" || true)
            first_gpu_call=$(grep -m1 -iE "libcuda|cuda_error|cuInit|nvidia" <<< "$listing" \
                | cut -c1-100 || true)
            if [ "$listed_ok" -eq 0 ]; then
                echo "== dry run: $bench starts and lists $listed criterion benchmarks"
            elif [ -n "$first_gpu_call" ]; then
                echo "== dry run: $bench stopped at its first GPU call: $first_gpu_call"
            else
                echo "$listing" | tail -20
                echo "== dry run: $bench failed before any GPU call (exit $listed_ok)"
                status=1
            fi
        done
    else
    "$bin/gpu_step" --bench --warm-up-time 1 --measurement-time 4 2>&1 \
        | grep -E "^gpu_step|time:|no device-time|^variant |x \[" | tee "$out/gpu_step.txt" || status=1
    BURN_PROFILED_BENCH_ROUNDS=10 "$bin/numerics" --bench 2>&1 \
        | grep -E "^the vision|^variant |^statistics|per op" | tee "$out/numerics.txt" || status=1
    fi
    fi
    if [[ " $editions " == *" 022 "* ]]; then
        DRY_RUN="$dry" \
        bash scripts/gpu-check-022.sh "$bin" "$out/022" "$steps" "$(cat "$bin/backend-022.txt")" \
            || status=1
    fi
    # The recorder's TSV is large: kept only when a check failed.
    if [ "$status" -eq 0 ]; then rm -f "$out"/*/nvtx.tsv; fi
    exit "$status"
    ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d'
    exit 2
    ;;
esac
