//! What the tests share: for the launch-thread tests, a stand-in for CubeCL's device thread and
//! an observer that records where each op ran; for the device-time tests, a session without
//! CUPTI; for the tests that run what cargo built, where it is. Each test binary uses part of
//! it.
#![allow(dead_code)]

pub mod device_time;
pub mod hta;
pub mod mlp;
pub mod nesting;
pub mod stand_in;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// `target/<profile>/`, where cargo built this test binary, the examples and the workspace's
/// libraries.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary is in target/<profile>/deps")
        .to_path_buf()
}

/// `relative` in [`profile_dir`], which must have been built: `hint` says how.
pub fn built(relative: &str, hint: &str) -> PathBuf {
    let path = profile_dir().join(relative);
    assert!(path.is_file(), "{} is missing: {hint}", path.display());
    path
}

/// burn-profiled-core's command-line tool `name` (`burn-profiled`, `burn-dump-diff`), which
/// `cargo test --workspace` builds.
pub fn cli(name: &str) -> PathBuf {
    built(
        name,
        "run `cargo test --workspace` (it builds burn-profiled-core's command-line tools)",
    )
}

/// Runs the `train` example (built by `cargo test`) with `args`, writing to `out`, outside any
/// `BURN_PROFILED` and NVTX tool of the caller's.
pub fn run_train_example(args: &[&str], out: &std::path::Path) -> std::process::Output {
    std::process::Command::new(built(
        "examples/train",
        "run `cargo test` (it builds the examples)",
    ))
    .args(args)
    .arg("--out")
    .arg(out)
    .env_remove("BURN_PROFILED")
    .env_remove("NVTX_INJECTION64_PATH")
    .output()
    .expect("the example runs")
}

/// [`run_train_example`] that must succeed.
pub fn train_example_succeeds(args: &[&str], out: &std::path::Path) {
    let output = run_train_example(args, out);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

use burn_profiled::probe::{Op, OpObserver};

/// A few ops on the default device (`from_data`, `matmul`, `exp`, `add`, `into_data`).
pub fn small_ops<B: burn::tensor::backend::Backend>() -> burn::tensor::TensorData {
    let device = Default::default();
    let x = burn::tensor::Tensor::<B, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], &device);
    let y = x.clone().matmul(x.clone()).exp() + x;
    y.into_data()
}

/// The ops started, with the OS thread each started on.
#[derive(Default)]
pub struct Started(pub Mutex<Vec<(&'static str, u64)>>);

impl OpObserver for Started {
    fn op_started(&self, op: &'static Op) {
        self.0
            .lock()
            .unwrap()
            .push((op.name(), nvtx_recorder::current_tid()));
    }
    fn op_finished(&self, _op: &'static Op) {}
}

/// Runs `command` with its standard output already closed by the reader, as `| head -1` does
/// once it has its line: the command's first write meets a closed pipe.
pub fn output_into_a_closed_pipe(command: &mut std::process::Command) -> std::process::Output {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command starts");
    drop(child.stdout.take());
    child.wait_with_output().expect("the command ends")
}
