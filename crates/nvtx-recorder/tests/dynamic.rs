//! Dynamic injection: runs `examples/emit.rs` as a child process with
//! `NVTX_INJECTION64_PATH` pointing at the built `libnvtx_recorder.so`, and
//! checks the TSV it writes at exit. No `install_static!` here on purpose.
//!
//! `cargo test -p nvtx-recorder` builds both the `.so` and the example. If one
//! is missing (for example with `cargo test --test dynamic`), the test fails and
//! says how to build it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The profile directory holding this test executable (`target/<profile>`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/dynamic-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("test executable is in target/<profile>/deps")
        .to_path_buf()
}

fn find(what: &str, candidates: &[PathBuf]) -> PathBuf {
    candidates.iter().find(|p| p.is_file()).cloned().unwrap_or_else(|| {
        panic!(
            "{what} not found (looked at {candidates:?}). Build it first: \
             `cargo build -p nvtx-recorder --lib --examples` (plain `cargo test -p nvtx-recorder` builds both)"
        )
    })
}

fn recorder_so() -> PathBuf {
    let dir = profile_dir();
    let name = format!(
        "{}nvtx_recorder{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    find(
        "the recorder cdylib",
        &[dir.join(&name), dir.join("deps").join(&name)],
    )
}

fn emit_example() -> PathBuf {
    let dir = profile_dir();
    let name = format!("emit{}", std::env::consts::EXE_SUFFIX);
    find("the `emit` example", &[dir.join("examples").join(name)])
}

fn temp_tsv(tag: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("nvtx-recorder-{tag}-{}.tsv", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Runs the example with the given injection path; returns (child pid, TSV if written).
fn run_emit(injection: &Path, out: &Path) -> (u32, Option<String>) {
    let child = Command::new(emit_example())
        .env("NVTX_INJECTION64_PATH", injection)
        .env("NVTX_RECORDER_OUT", out)
        .env_remove("NVTX_RECORDER_LIMIT")
        .spawn()
        .expect("spawn emit");
    let pid = child.id();
    let status = child.wait_with_output().expect("wait emit").status;
    assert!(status.success(), "emit failed: {status}");
    let tsv = std::fs::read_to_string(out).ok();
    let _ = std::fs::remove_file(out);
    (pid, tsv)
}

/// Lines of one thread without the `ts_ns` and `tid` columns, tabs as spaces
/// and empty fields dropped.
fn thread_lines(tsv: &str, tid: &str) -> Vec<String> {
    tsv.lines()
        .skip(1)
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f[1] == tid)
        .map(|f| {
            f[2..]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn emit_example_through_the_cdylib() {
    let so = recorder_so();
    let out = temp_tsv("dynamic");
    let (pid, tsv) = run_emit(&so, &out);
    let tsv = tsv.unwrap_or_else(|| {
        panic!(
            "no TSV written to {}: the .so did not attach",
            out.display()
        )
    });
    let mut lines = tsv.lines();
    assert_eq!(
        lines.next(),
        Some("ts_ns\ttid\tkind\tdomain\tdepth\tmsg_type\tmessage\textra")
    );
    for line in lines {
        assert_eq!(line.split('\t').count(), 8, "bad line {line:?}");
    }
    let main_tid = pid.to_string();
    assert_eq!(
        thread_lines(&tsv, &main_tid),
        [
            format!("name_thread - 0 ascii main os_tid={pid}").as_str(),
            "mark - 0 ascii start",
            "domain_create burn 0 ascii burn handle=1",
            "register_string burn 0 ascii forward handle=1",
            "register_string burn 0 ascii matmul handle=2",
            "start - 0 ascii process-wide id=1",
            "push - 0 ascii outer",
            "push - 1 unicode inner (rust str)",
            "push - 2 ascii attrs color=#ffff0000 payload=u64:42",
            "pop - 2 none",
            "pop - 1 none",
            "pop - 0 none",
            "push burn 0 registered forward",
            "push burn 1 registered matmul",
            "mark burn 2 registered matmul",
            "pop burn 1 none",
            "pop burn 0 none",
            "domain_destroy burn 0 none handle=1",
        ]
    );
    let worker_tid = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(1).unwrap())
        .find(|t| *t != main_tid)
        .expect("worker thread events");
    assert_eq!(
        thread_lines(&tsv, worker_tid),
        [
            format!("name_thread - 0 ascii worker os_tid={worker_tid}").as_str(),
            "push - 0 ascii worker-outer",
            "end - 0 none id=1",
            "pop - 0 none",
        ]
    );
}

#[test]
fn bad_injection_path_fails_silently() {
    let out = temp_tsv("badpath");
    let (_, tsv) = run_emit(Path::new("/nonexistent/libnvtx_recorder.so"), &out);
    assert_eq!(tsv, None, "nothing attaches, so nothing is written");
}
