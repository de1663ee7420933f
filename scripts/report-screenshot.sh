#!/usr/bin/env bash
# Makes docs/report.png, the README's picture: the example's report (profile preset, NdArray)
# in headless chromium. Needs Debian's chromium (`apt-get install -y chromium`).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/burn-profiled/screenshot
cargo run --release --example train -- --steps 20 --batch 8 --preset profile --out "$out" >/dev/null
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --hide-scrollbars --window-size=1100,1500 --screenshot=docs/report.png \
    "file://$PWD/$out/report.html" 2>/dev/null
echo "wrote docs/report.png"
