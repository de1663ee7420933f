#!/usr/bin/env bash
# The Burn 0.22 half of the GPU check (`scripts/gpu-check.sh run`, which unpacks the binaries):
#   scripts/gpu-check-022.sh BIN_DIR OUT_DIR STEPS [cuda|wgpu]
# Exits non-zero when a check fails; the bench's figures are written all the same.
set -uo pipefail
bin="$1"
out="$2"
steps="$3"
backend="${4:-cuda}"
mkdir -p "$out"
if [ "$backend" = cuda ]; then export BURN_DEVICE=cuda; else unset BURN_DEVICE; fi
echo "== Burn 0.22 on $backend"
status=0
echo "== Burn 0.22: the example without a session (its first run compiles and tunes: cached after)"
if ! "$bin/train_022" --no-session --loss-bits --steps "$steps" > "$out/alone.txt" 2>&1; then
    tail -30 "$out/alone.txt"
    # On the H200 lent so far: wgpu finds no Vulkan adapter there, and Burn 0.22's CUDA cannot
    # be built without internet (gpu-check.sh build says which backend it built).
    echo "gpu-check: Burn 0.22 cannot train on $backend here (above): its check is not run"
    exit 1
fi
echo "== Burn 0.22: the example with a session (profile + device time), under the NVTX recorder"
NVTX_INJECTION64_PATH="$PWD/$bin/libnvtx_recorder.so" \
NVTX_RECORDER_OUT="$out/nvtx.tsv" \
    "$bin/train_022" --config "$bin/gpu-check-022.toml" --loss-bits --steps "$steps" --out "$out" \
    > "$out/stdout.txt" 2>&1 || { tail -30 "$out/stdout.txt"; status=1; }
grep -E "device time|burn-profiled|^loss" "$out/stdout.txt" | head -20
python3 - "$out/alone.txt" "$out/stdout.txt" "$out/nvtx.tsv" "$out/run.json" "$out/ops.json" <<'PY' || status=1
import collections, json, sys
def losses(path):
    for line in open(path):
        if line.startswith("losses "):
            return line.split()[1:]
    raise AssertionError(f"no losses in {path}")
alone, profiled = losses(sys.argv[1]), losses(sys.argv[2])
same = sum(a == b for a, b in zip(alone, profiled))
print(f"losses: {same} of {len(alone)} steps bit-identical with and without the session")
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[3]) if not l.startswith(("ts_ns", "#"))]
run = json.load(open(sys.argv[4]))
print("backend:", run["backend"], "| device:", run.get("device"))
depth = collections.Counter()
block_threads = collections.Counter()
user = collections.Counter()
names = {}
for ts, tid, kind, domain, d, msg_type, message, *extra in rows:
    if kind == "name_thread":
        names[tid] = message
    if kind == "push":
        depth[(tid, domain)] += 1
        if domain == "burn":
            block_threads[tid] += 1
        else:
            user[message] += 1
    elif kind == "pop":
        depth[(tid, domain)] -= 1
        assert depth[(tid, domain)] >= 0, ("a pop without a push", tid, domain)
assert all(v == 0 for v in depth.values()), ("unbalanced ranges", depth)
training = [tid for tid, name in names.items() if name == "training"]
print(f"NVTX: {sum(block_threads.values())} block ranges on threads "
      f"{[(names.get(t, t), n) for t, n in block_threads.items()]}; user ranges {dict(user)}")
assert block_threads, "no block range reached NVTX"
assert len(block_threads) == 1, "block ranges on more than one thread: not all on the launching one"
assert not set(block_threads) & set(training), "block ranges on the training thread"
for name in ["forward", "backward", "optimizer", "step"]:
    assert user[name] > 0, (name, "missing from the user ranges")
device = run.get("device_time")
assert device, "no device time in run.json (see stdout.txt)"
print("device_time:", json.dumps(device))
kernels = device["kernels"]
outside = device.get("unattributed_kernels", 0)
host_timed = device.get("host_timed_kernels", 0)
ops = json.load(open(sys.argv[5]))["rows"]
top = sorted(ops, key=lambda r: r.get("device_total_ns", 0), reverse=True)[:8]
print("top blocks by device time (op, phase, calls, kernels, host total us, device total us):")
for r in top:
    print(f"  {r['op'][:48]:<48} {r.get('phase', '-'):<10} {r['calls']:>6} {r.get('kernels', 0):>7} "
          f"{r['total_ns'] / 1e3:>11.1f} {r.get('device_total_ns', 0) / 1e3:>11.1f}")
assert kernels > 0, "no kernel measured by the device"
assert host_timed == 0, f"{host_timed} launches timed on the host, not by CUDA events"
assert kernels >= 0.99 * (kernels + outside), "fewer than 99% of kernels inside a block"
assert same == len(alone) == len(profiled), "the session changed the losses"
PY
echo "== Burn 0.22: what a session costs a step, interleaved"
# A dry run (`gpu-check.sh dry-run`) only sees that the bench runs: two rounds.
rounds=40
if [ "${DRY_RUN:-0}" = 1 ]; then rounds=2; fi
BURN_PROFILED_BENCH_ROUNDS="${BURN_PROFILED_BENCH_ROUNDS:-$rounds}" "$bin/session_step" --bench 2>&1 \
    | tail -12 | tee "$out/session_step.txt" || status=1
if [ "$status" -eq 0 ]; then rm -f "$out/nvtx.tsv"; fi
exit "$status"
