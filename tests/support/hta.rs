//! Holistic Trace Analysis (HTA), PyTorch's trace analysis tool, on a run's `trace.json`: the
//! Python of the virtual environment `scripts/hta-venv.sh` makes (`target/hta-venv`, or
//! `BURN_PROFILED_HTA_PYTHON`) runs `tests/hta/analyse.py`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The workspace's root, where `tests/hta` and `target/hta-venv` are, from the crate whose
/// test this is (burn-profiled's, or another edition's under `crates/`).
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("tests/hta/analyse.py").is_file())
        .expect("tests/hta/analyse.py in the workspace")
}

/// The Python that has HTA.
pub fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("BURN_PROFILED_HTA_PYTHON") {
        return python.into();
    }
    let venv = workspace().join("target/hta-venv/bin/python");
    assert!(
        venv.is_file(),
        "no HTA: run scripts/hta-venv.sh (a virtual environment with holistictraceanalysis in \
         target/hta-venv), or set BURN_PROFILED_HTA_PYTHON to a Python that has it"
    );
    venv
}

/// What HTA made of `run_dir`'s trace: `tests/hta/analyse.py`'s JSON.
pub fn analyse(run_dir: &Path) -> Value {
    run("analyse.py", &[run_dir])
}

/// HTA's trace diff of two runs: `tests/hta/diff.py`'s JSON.
pub fn diff(before: &Path, after: &Path) -> Value {
    run("diff.py", &[before, after])
}

/// Runs `tests/hta/<script>` on `run_dirs`; its last line of output is JSON.
fn run(script: &str, run_dirs: &[&Path]) -> Value {
    let script = workspace().join("tests/hta").join(script);
    let output = std::process::Command::new(python())
        .arg(script)
        .args(run_dirs)
        .output()
        .expect("HTA's Python runs");
    let run_dir = run_dirs[0];
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
