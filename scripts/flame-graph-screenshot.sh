#!/usr/bin/env bash
# Makes docs/flame-graph.png, the README's picture of call sites: the flame graph of the
# example's report (examples/call_sites.toml, NdArray, a release build with debug info) in
# headless chromium. Needs Debian's chromium (`apt-get install -y chromium`).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/burn-profiled/flame-graph
cargo run --profile profiling --example train -- --steps 20 --batch 8 \
    --config examples/call_sites.toml --out "$out" >/dev/null
# The report's flame graph is its own document (the iframe's srcdoc): shown alone.
python3 - "$out/report.html" "$out/flame-graph.svg" <<'PY'
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
graph = re.search(r'<iframe id="flamegraph"[^>]* srcdoc="([^"]*)"', page)
if graph is None:
    sys.exit(f"{sys.argv[1]}: no flame graph (was [stats] call_sites on?)")
open(sys.argv[2], "w", encoding="utf-8").write(html.unescape(graph.group(1)))
PY
height=$(grep -o -m1 'height="[0-9]*"' "$out/flame-graph.svg" | tr -dc 0-9)
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --hide-scrollbars --window-size=1200,"$height" --screenshot=docs/flame-graph.png \
    "file://$PWD/$out/flame-graph.svg" 2>/dev/null
echo "wrote docs/flame-graph.png"
