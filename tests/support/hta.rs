//! Holistic Trace Analysis (HTA), PyTorch's trace analysis tool, on a run's `trace.json`: the
//! Python of the virtual environment `scripts/hta-venv.sh` makes (`target/hta-venv`, or
//! `BURN_PROFILED_HTA_PYTHON`) runs `tests/hta/analyse.py`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The Python that has HTA.
pub fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("BURN_PROFILED_HTA_PYTHON") {
        return python.into();
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/hta-venv/bin/python");
    assert!(
        venv.is_file(),
        "no HTA: run scripts/hta-venv.sh (a virtual environment with holistictraceanalysis in \
         target/hta-venv), or set BURN_PROFILED_HTA_PYTHON to a Python that has it"
    );
    venv
}

/// What HTA made of `run_dir`'s trace: `tests/hta/analyse.py`'s JSON.
pub fn analyse(run_dir: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hta/analyse.py");
    let output = std::process::Command::new(python())
        .arg(script)
        .arg(run_dir)
        .output()
        .expect("HTA's Python runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success(),
        "HTA failed on {}:\n{stderr}",
        run_dir.display()
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("HTA's output ({e}):\n{stdout}"))
}
