#!/usr/bin/env bash
# What CubeCL's spinning producers cost the fused step on a small machine: `fused_step`'s
# interleaved runs against cubecl-common 0.10.0 as released, then against a copy whose
# producers (DeviceClient::enqueue on a full channel) spin 256 times and yield 64 times before
# they sleep, instead of 524,288 and 4,096. Nothing is committed: the copy lives in target/,
# the patch is passed with `--config`, and Cargo.lock is put back.
#
#   scripts/cubecl-spin-experiment.sh          # about 8 minutes on the 2-core VM, warm target/
set -euo pipefail
cd "$(dirname "$0")/.."

released=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cubecl-common-0.10.0 2>/dev/null | head -1)
if [ -z "$released" ]; then
    echo "cubecl-common 0.10.0 is not in cargo's registry: build the crate first (cargo build --features wgpu)" >&2
    exit 1
fi
patched="$PWD/target/cubecl-common-yielding"
rm -rf "$patched"
cp -r "$released" "$patched"
channel="$patched/src/device/handle/channel.rs"
sed -i \
    -e 's/const SPIN_BUDGET_CLIENT: u32 = SPIN_BUDGET_SERVER \* CLIENT_BUDGET_FACTOR;/const SPIN_BUDGET_CLIENT: u32 = 256;/' \
    -e 's/const YIELD_BUDGET_CLIENT: u32 = YIELD_BUDGET_SERVER \* CLIENT_BUDGET_FACTOR;/const YIELD_BUDGET_CLIENT: u32 = 64;/' \
    "$channel"
if ! grep -q "SPIN_BUDGET_CLIENT: u32 = 256;" "$channel" || ! grep -q "YIELD_BUDGET_CLIENT: u32 = 64;" "$channel"; then
    echo "the patch did not apply: cubecl-common's channel.rs is not the one this script was written for" >&2
    exit 1
fi

cp Cargo.lock target/Cargo.lock.before-spin-experiment
trap 'cp target/Cargo.lock.before-spin-experiment Cargo.lock' EXIT

# `interleaved` matches no criterion benchmark: only the interleaved runs are made.
echo "== cubecl-common 0.10.0 as released"
cargo bench --features wgpu --bench fused_step -- interleaved
echo "== cubecl-common 0.10.0, producers that yield"
cargo --config "patch.crates-io.cubecl-common.path=\"$patched\"" \
    bench --features wgpu --bench fused_step -- interleaved
