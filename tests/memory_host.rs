//! Where the host memory goes, with the tracking allocator installed: an op's allocation to the
//! byte and in its phase, and the growth warning of a training loop that keeps a tensor per
//! step (and none for one that does not).

use std::sync::{Mutex, MutexGuard, Once};

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::config::RuntimeConfig;
use burn_profiled::memory::TrackingAllocator;
use burn_profiled::stats::{self, GroupBy, StatsConfig};
use burn_profiled::{Profiled, Session, nvtx};

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator::system();

type B = Profiled<NdArray>;

/// Statistics are process-wide: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    static ENABLE: Once = Once::new();
    ENABLE.call_once(|| nvtx::enable(nvtx::RangeConfig::new()));
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn an_op_whose_allocation_is_known_reports_exactly_its_bytes_in_its_phase() {
    let _serial = serial();
    stats::reset();
    stats::start(StatsConfig {
        memory: true,
        ..StatsConfig::default()
    });
    let device = Default::default();
    let zeros = nvtx::scope("forward", || Tensor::<B, 1>::zeros([1_000_000], &device));
    let kept = nvtx::scope("optimizer", || zeros.clone().add_scalar(1.0));
    stats::stop();

    let rows = stats::snapshot().rows(GroupBy::OpAndPhase);
    let row = |op: &str| {
        rows.iter()
            .find(|r| r.op == op)
            .unwrap_or_else(|| panic!("a row of {op} in {rows:#?}"))
    };
    let zeros_row = row("float_zeros");
    assert_eq!(zeros_row.phase.as_deref(), Some("forward"));
    // The data, and 72 bytes of NdArray's tensor (its shape and strides); a 32-byte temporary
    // comes and goes (burn =0.21.0).
    assert_eq!(zeros_row.alloc_bytes, Some(4_000_072), "{zeros_row:#?}");
    assert_eq!(zeros_row.freed_bytes, Some(32));
    assert!(zeros_row.peak_bytes.unwrap() >= 4_000_000);
    let add_row = row("float_add_scalar");
    assert_eq!(add_row.phase.as_deref(), Some("optimizer"));
    assert_eq!(
        add_row.alloc_bytes.map(|bytes| bytes / 1000),
        Some(4_000),
        "its input is shared: it allocates its output ({add_row:#?})"
    );
    assert!(add_row.peak_bytes.unwrap() >= 8_000_000, "{add_row:#?}");
    let peaks = stats::memory_peaks();
    assert_eq!(peaks.len(), 1, "{peaks:?}");
    assert_eq!(peaks[0].op, "float_add_scalar");
    assert_eq!(peaks[0].phase, "optimizer");

    let table = stats::snapshot().table(GroupBy::OpAndPhase);
    let header = table.lines().nth(1).unwrap();
    assert!(header.ends_with("Alloc          Peak"), "{table}");
    let zeros_line = table
        .lines()
        .find(|line| line.trim_start().starts_with("float_zeros"))
        .unwrap();
    assert!(zeros_line.contains(" 3.81 MiB "), "{zeros_line}");
    let json: serde_json::Value =
        serde_json::from_str(&stats::snapshot().to_json(GroupBy::OpAndPhase)).unwrap();
    let zeros_json = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "float_zeros")
        .unwrap();
    assert_eq!(zeros_json["alloc_bytes"], 4_000_072);
    assert!(zeros_json["peak_bytes"].as_u64().unwrap() >= 4_000_000);
    drop((zeros, kept));
    stats::reset();
}

/// A session with statistics, per-step and per-op memory after `warmup_iters` steps of
/// warm-up, and what `more` sets, writing to the temporary directory returned with it.
fn memory_session(
    warmup_iters: usize,
    more: impl FnOnce(&mut RuntimeConfig),
) -> (Session, tempfile::TempDir) {
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = warmup_iters;
    config.stats.enabled = true;
    config.memory.per_step = true;
    config.memory.per_op = true;
    more(&mut config);
    let out = tempfile::tempdir().unwrap();
    let session = Session::start::<B>(config, &Default::default(), out.path());
    (session, out)
}

/// A run of `steps` steps under a session with per-step and per-op memory; each step keeps a
/// tensor of `kept_per_step` f32 when it is not 0.
fn train(steps: usize, kept_per_step: usize) -> (burn_profiled::memory::MemoryRun, Vec<String>) {
    let (mut session, _out) = memory_session(2, |_| {});
    let device = Default::default();
    let weights = Tensor::<B, 2>::ones([64, 64], &device);
    let mut kept = Vec::with_capacity(steps);
    for _ in 0..steps {
        let x = Tensor::<B, 2>::ones([32, 64], &device);
        let loss = x.matmul(weights.clone()).exp().sum();
        let _ = loss.into_scalar();
        if kept_per_step > 0 {
            kept.push(Tensor::<B, 1>::zeros([kept_per_step], &device));
        }
        session.finish_iter().unwrap();
    }
    let summary = session.finish().unwrap();
    let memory = summary.memory.expect("per-step memory was on");
    let warnings = memory.growth_warnings(summary.measured_steps);
    drop(kept);
    stats::reset();
    (memory, warnings)
}

#[test]
fn a_steady_training_loop_gives_no_warning() {
    let _serial = serial();
    let (memory, warnings) = train(20, 0);
    assert_eq!(memory.steps, (2..20).collect::<Vec<_>>());
    assert_eq!(warnings, Vec::<String>::new());
    let host = memory.growth.iter().find(|g| g.memory == "host").unwrap();
    assert!(!host.growing, "{host:?}");
    assert_eq!(memory.host.in_use_bytes.as_ref().map(Vec::len), Some(18));
}

#[test]
fn a_loop_that_keeps_a_tensor_per_step_is_warned_with_its_growth_per_step() {
    let _serial = serial();
    let (memory, warnings) = train(20, 250_000);
    let host = memory.growth.iter().find(|g| g.memory == "host").unwrap();
    assert!(host.growing, "{host:?}");
    // The kept tensor (1,000,000 bytes of data, 72 of tensor), within 0.4%: the session's own
    // bookkeeping of the step (its sample, rows) and the test harness's threads come and go by
    // a few hundred bytes.
    let kept = 1_000_072.0;
    assert!(
        (kept - 4096.0..kept + 4096.0).contains(&host.bytes_per_step),
        "{host:?}"
    );
    assert_eq!(host.rising_steps, 17);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = &warnings[0];
    assert!(
        warning.starts_with("burn-profiled: memory grew by 976.")
            && warning.contains(" KiB per step on host over 18 measured steps (from "),
        "{warning}"
    );
    assert!(warning.contains(", rising in 17 of 17 steps)"), "{warning}");
    // The kept tensors' data, made by float_zeros in each step looked at (the measured steps
    // but the last, whose outputs any loop may still hold).
    assert!(
        warning.ends_with(
            "; made in one step and still alive at the end: 976.56 KiB/step by float_zeros (in \
             17 of 17 steps)"
        ),
        "{warning}"
    );
    assert_eq!(memory.kept_alive.len(), 1, "{:?}", memory.kept_alive);
}

#[test]
fn the_growth_warning_names_the_op_call_site_phase_and_shapes_whose_outputs_stay() {
    let _serial = serial();
    let (mut session, out) = memory_session(2, |config| {
        config.stats.by_shapes = true;
        config.stats.call_sites = true;
    });
    let device = Default::default();
    let weights = Tensor::<B, 2>::ones([64, 1024], &device);
    let mut kept = Vec::new();
    for _ in 0..12 {
        let x = nvtx::scope("forward", || Tensor::<B, 2>::ones([32, 64], &device));
        // Larger temporaries than the leak, made and dropped each step.
        let _ = nvtx::scope("forward", || {
            x.clone().exp().matmul(weights.clone()).exp().sum()
        })
        .into_scalar();
        // The leak: one matmul's output a step (128 KiB), kept.
        let head = nvtx::scope("head", || x.matmul(weights.clone()));
        kept.push(head);
        session.finish_iter().unwrap();
    }
    let summary = session.finish().unwrap();
    let memory = summary.memory.expect("per-step memory was on");
    let warnings = memory.growth_warnings(summary.measured_steps);
    drop(kept);
    stats::reset();
    let warning = warnings
        .iter()
        .find(|warning| warning.contains(" per step on host "))
        .unwrap_or_else(|| panic!("the host's memory grows: {warnings:?}"));
    let site = format!(
        "the_growth_warning_names_the_op_call_site_phase_and_shapes_whose_outputs_stay::\
         {{{{closure}}}} (tests/memory_host.rs:{})",
        line!() - 16
    );
    assert!(
        warning.ends_with(&format!(
            "; made in one step and still alive at the end: 128.00 KiB/step by float_matmul at \
             {site} in `head` from [[32, 64], [64, 1024]] (in 9 of 9 steps)"
        )),
        "{warning}"
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(
        run["memory"]["kept_alive"],
        serde_json::json!([{
            "memory": "host",
            "op": "float_matmul",
            "phase": "head",
            "call_site": site,
            "input_shapes": "[[32, 64], [64, 1024]]",
            "bytes_per_step": 131072,
            "made_in_steps": 9,
            "of_steps": 9,
        }])
    );
}

/// The op the child process fails, as a backend that runs out of memory would.
struct FailMatmul;

impl burn_profiled::probe::OpObserver for FailMatmul {
    fn op_started(&self, op: &'static burn_profiled::probe::Op) {
        if op.name() == "float_matmul" {
            panic!(
                "An out-of-memory error happened during launch\nCaused by:\n  failed to reserve 17179869184 bytes"
            );
        }
    }
    fn op_finished(&self, _op: &'static burn_profiled::probe::Op) {}
}

/// Run by `out_of_memory_is_told_with_its_op_phase_step_and_memory` in a child process (the
/// panic hook it installs is the process's).
#[test]
#[ignore = "a child process of another test"]
fn child_runs_out_of_memory_in_a_matmul() {
    let _serial = serial();
    // The op's shapes are known when statistics are kept by shapes (as in `debug`).
    let (mut session, _out) = memory_session(1, |config| config.stats.by_shapes = true);
    let device = Default::default();
    let weights = Tensor::<B, 2>::ones([64, 64], &device);
    for _ in 0..3 {
        let _ = Tensor::<B, 2>::ones([32, 64], &device)
            .exp()
            .sum()
            .into_scalar();
        session.finish_iter().unwrap();
    }
    let _failing = burn_profiled::probe::observe(std::sync::Arc::new(FailMatmul));
    let x = nvtx::scope("forward", || {
        let x = Tensor::<B, 2>::zeros([32, 64], &device);
        x.matmul(weights)
    });
    drop(x);
}

#[test]
fn out_of_memory_is_told_with_its_op_phase_step_and_memory() {
    // Its own allocations (the child's output) would count in the others' host series.
    let _serial = serial();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_runs_out_of_memory_in_a_matmul",
        ])
        .args(["--nocapture", "--test-threads", "1"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "the panic reaches the caller: {stderr}"
    );
    let told = stderr
        .find("burn-profiled: out of memory in float_matmul (forward), input shapes [[32, 64], [64, 64]], in step 3; at the end of step 2: host RSS ")
        .unwrap_or_else(|| panic!("the context, in:\n{stderr}"));
    let panicked = stderr.find("panicked at").expect("the panic's own message");
    assert!(told < panicked, "the context comes first:\n{stderr}");
    let context = stderr[told..].lines().next().unwrap();
    assert!(
        context.contains("; ops that allocated most in step 3: float_zeros 8."),
        "{context}"
    );
    assert!(
        stderr.contains("failed to reserve 17179869184 bytes"),
        "the panic's message is unchanged:\n{stderr}"
    );
}
