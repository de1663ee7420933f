#!/usr/bin/env bash
# A Python virtual environment with Holistic Trace Analysis (PyTorch's trace analysis tool) in
# target/hta-venv, for the tests that read burn-profiled's trace.json with it (tests/hta.rs, and
# the stand-in CUPTI's in tests/device_time_standin.rs; both `--ignored`). The versions are
# pinned in tests/hta/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/hta-venv
mkdir -p target
if ! "$venv/bin/python" -c "import hta" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/hta/requirements.txt
fi
"$venv/bin/python" -c "import hta, importlib.metadata as m; print('HTA', m.version('holistictraceanalysis'), 'in $venv')"
