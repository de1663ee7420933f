//! Device time per op end to end, through cudarc's CUPTI loader, against a stand-in
//! `libcupti.so` (`crates/cupti-standin`): CUPTI's activity API over synthetic kernels, one per
//! op, each running `KERNEL_NS`. It checks the whole path that a GPU run takes apart from the
//! GPU: subscribing, the activity kinds CUPTI needs to write external-correlation records,
//! tags pushed and popped per op and thread, buffers handed over with kernels before their
//! correlation, stopping and restarting, and what the session writes and prints.
//!
//! Each test runs in a child process of this binary, with the stand-in first on
//! `LD_LIBRARY_PATH` (CUPTI is process-wide, and the library path is read at start-up).
#![cfg(feature = "cupti")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::{Profiled, Session, device_time, nvtx, probe, stats};
use serde_json::Value;

mod support;

type B = Profiled<NdArray>;

/// The stand-in's kernel duration, in ns.
const KERNEL_NS: u64 = 1_000;
const SCENARIO: &str = "BURN_PROFILED_CUPTI_STANDIN";

/// The stand-in, built next to this test binary.
fn standin_library() -> PathBuf {
    support::built(
        "libcupti_standin.so",
        "build the stand-in CUPTI first (cargo build -p cupti-standin)",
    )
}

/// Runs `test` of this binary in a child process, with the stand-in as `libcupti.so`, and
/// `env` set; returns its stdout and stderr once it passed.
fn in_child(test: &str, env: &[(&str, &str)]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(standin_library(), dir.path().join("libcupti.so")).unwrap();
    let library_path = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(inherited) => {
            let mut paths = vec![dir.path().to_path_buf()];
            paths.extend(std::env::split_paths(&inherited));
            std::env::join_paths(paths).unwrap()
        }
        None => dir.path().as_os_str().to_owned(),
    };
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(std::env::current_exe().unwrap())
        .args([
            test,
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "--include-ignored",
        ])
        .env(SCENARIO, test)
        .env("LD_LIBRARY_PATH", library_path)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    );
    assert!(
        status.success(),
        "the child running {test} failed:\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the child did not run {test}:\n{stdout}"
    );
    (stdout, stderr)
}

/// Whether this process is the child that runs `test`.
fn is_child(test: &str) -> bool {
    std::env::var(SCENARIO).is_ok_and(|scenario| scenario == test)
}

/// A function the stand-in exports besides CUPTI's, from the `libcupti.so` cudarc loaded.
fn standin<F: Copy>(name: &str) -> F {
    // SAFETY: the stand-in's exports have the signatures the callers below give them.
    unsafe {
        *cudarc::cupti::sys::culib()
            .get::<F>(name.as_bytes())
            .unwrap_or_else(|_| panic!("the loaded libcupti.so is not the stand-in (no {name})"))
    }
}

fn standin_count(name: &str) -> i64 {
    let count: extern "C" fn() -> i64 = standin(name);
    count()
}

/// Kernels the stand-in launched so far.
fn standin_launches() -> u64 {
    let launches: extern "C" fn() -> u64 = standin("cupti_standin_launches");
    launches()
}

/// A kernel launched under no op.
fn launch_outside_ops() {
    let launch: extern "C" fn() = standin("cupti_standin_launch");
    launch();
}

/// What CUPTI is left with once recording stopped: no subscriber, no kind enabled, every
/// buffer handed back, every tag popped.
fn assert_standin_released() {
    let subscribed: extern "C" fn() -> u32 = standin("cupti_standin_subscribed");
    let enabled: extern "C" fn() -> u32 = standin("cupti_standin_enabled_kinds");
    assert_eq!(
        (
            subscribed(),
            enabled(),
            standin_count("cupti_standin_buffers_held"),
            standin_count("cupti_standin_open_tags"),
        ),
        (0, 0, 0, 0),
        "subscribed, kinds enabled, buffers held, tags open"
    );
}

fn steps(session: &mut Session, device: &burn::backend::ndarray::NdArrayDevice) {
    for _ in 0..3 {
        {
            let _forward = nvtx::range("forward");
            let a = Tensor::<B, 2>::ones([4, 4], device);
            let _ = (a.clone().matmul(a) + 1.0).into_data();
        }
        session.finish_iter().unwrap();
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_session_attributes_every_kernel_to_the_op_that_launched_it() {
    const TEST: &str = "a_session_attributes_every_kernel_to_the_op_that_launched_it";
    if !is_child(TEST) {
        let (stdout, _) = in_child(TEST, &[]);
        let line = stdout
            .lines()
            .find(|line| line.starts_with("device time: "))
            .unwrap_or_else(|| panic!("no device time line in:\n{stdout}"));
        let launched: u64 = stdout
            .lines()
            .find_map(|line| line.strip_prefix("kernels under ops: "))
            .and_then(|n| n.parse().ok())
            .expect("the child's count of kernels under ops");
        let all = launched + 1;
        assert_eq!(
            line,
            format!(
                "device time: {launched} of {all} kernels attributed to their op ({:.2}%); \
                 CUPTI: {launched} API calls tagged, 0 kernels without an end, 0 records \
                 dropped, 0 tag errors",
                100.0 * launched as f64 / all as f64
            )
        );
        return;
    }

    // The profile preset: op ranges, statistics, device time (with `cupti`), the trace, and the
    // user ranges that are the ops' phases.
    let mut config = RuntimeConfig::preset(Preset::Profile);
    assert!(config.stats.device_time);
    config.stopwatch.warmup_iters = 1;
    let out = tempfile::tempdir().unwrap();
    let device = Default::default();
    let mut session = Session::start::<B>(config, &device, out.path());
    steps(&mut session, &device);
    assert!(device_time::is_recording());
    launch_outside_ops();
    let launches_before_finish = standin_launches();
    let summary = session.finish().unwrap();
    assert_standin_released();
    // The session's closing sync is an op too: one more kernel.
    let launched = standin_launches();
    assert_eq!(launched, launches_before_finish + 1);
    let under_ops = launched - 1;
    println!("kernels under ops: {under_ops}");

    // Every op of the measured steps launched one kernel; the warm-up step's ops ran before
    // recording started and launched none.
    let run = summary.device_time.expect("device time was recorded");
    assert_eq!(
        (run.kernels, run.device_ns),
        (under_ops, under_ops * KERNEL_NS)
    );
    let unattributed = run.unattributed;
    assert_eq!(
        (
            unattributed.unattributed_kernels,
            unattributed.unattributed_ns,
            unattributed.incomplete_kernels,
            unattributed.tagged_api_calls,
            unattributed.dropped_records,
            unattributed.tag_errors,
        ),
        (1, KERNEL_NS, 0, under_ops, 0, 0)
    );
    assert_eq!(run.seconds_per_step, Some(run.device_ns as f64 / 2.0 / 1e9));

    // ops.json: each row's kernels are its calls, each 1 µs on the device, in its phase.
    let ops = read_json(&out.path().join("ops.json"));
    assert_eq!(ops["total_kernels"], under_ops);
    assert_eq!(ops["device_total_ns"], under_ops * KERNEL_NS);
    let rows = ops["rows"].as_array().unwrap();
    for row in rows {
        let calls = row["calls"].as_u64().unwrap();
        assert_eq!(row["kernels"], calls, "{row}");
        assert_eq!(row["device_total_ns"], calls * KERNEL_NS, "{row}");
        assert_eq!(row["device_mean_ns"], KERNEL_NS, "{row}");
    }
    let matmul = rows
        .iter()
        .find(|row| row["op"] == "float_matmul")
        .expect("a float_matmul row");
    assert_eq!(
        (&matmul["phase"], &matmul["calls"]),
        (&"forward".into(), &2.into())
    );
    let run_json = read_json(&out.path().join("run.json"));
    assert_eq!(run_json["device_time"]["kernels"], under_ops);
    assert_eq!(run_json["device_time"]["unattributed_kernels"], 1);

    // trace.json, in Kineto's terms: a process per device with a thread per stream, a
    // `kernel` event per kernel named as CUPTI names it, its `cuLaunchKernel` call inside the
    // op that made it, both with the kernel's correlation id and the op's External id, and an
    // `ac2g` flow from the call to the kernel.
    let trace = read_json(&out.path().join("trace.json"));
    let events = trace["traceEvents"].as_array().unwrap();
    let metadata = |name: &str, pid: u64| -> Vec<String> {
        let mut names: Vec<String> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == name && e["pid"] == pid)
            .map(|e| e["args"]["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort_unstable();
        names
    };
    assert_eq!(metadata("process_name", 0), ["GPU 0"]);
    assert_eq!(metadata("thread_name", 0), ["stream 13", "stream 14"]);
    assert_eq!(trace["deviceProperties"], serde_json::json!([{"id": 0}]));
    assert_eq!(trace["schemaVersion"], 1);
    let of_cat = |cat: &str| -> Vec<&Value> { events.iter().filter(|e| e["cat"] == cat).collect() };
    let kernels = of_cat("kernel");
    assert_eq!(kernels.len() as u64, under_ops);
    let calls = of_cat("cuda_driver");
    assert_eq!(calls.len() as u64, under_ops);
    let ops_by_id: std::collections::HashMap<u64, &Value> = of_cat("cpu_op")
        .into_iter()
        .map(|op| (op["args"]["External id"].as_u64().unwrap(), op))
        .collect();
    let pid = u64::from(std::process::id());
    for kernel in &kernels {
        assert_eq!(
            (&kernel["name"], &kernel["dur"], &kernel["pid"]),
            (&"standin_kernel".into(), &1.0.into(), &0.into())
        );
        let args = &kernel["args"];
        assert_eq!(args["stream"], kernel["tid"]);
        assert_eq!((&args["device"], &args["context"]), (&0.into(), &1.into()));
        assert_eq!(args["grid"], serde_json::json!([1, 1, 1]));
        let call = calls
            .iter()
            .find(|c| c["args"]["correlation"] == args["correlation"])
            .unwrap_or_else(|| panic!("no launch call for {kernel}"));
        assert_eq!(
            (&call["name"], &call["pid"], &call["args"]["cbid"]),
            (&"cuLaunchKernel".into(), &pid.into(), &307.into())
        );
        let op = ops_by_id[&args["External id"].as_u64().unwrap()];
        assert_eq!(call["args"]["External id"], args["External id"]);
        assert_eq!(
            call["tid"], op["tid"],
            "the call is made on the op's thread"
        );
        let (op_start, call_start) = (op["ts"].as_f64().unwrap(), call["ts"].as_f64().unwrap());
        assert!(
            op_start <= call_start
                && call_start + call["dur"].as_f64().unwrap()
                    <= op_start + op["dur"].as_f64().unwrap(),
            "the call {call} is inside its op {op}"
        );
        let flow = |phase: &str| {
            events
                .iter()
                .find(|e| e["cat"] == "ac2g" && e["ph"] == phase && e["id"] == args["correlation"])
                .unwrap_or_else(|| panic!("no ac2g {phase} for {kernel}"))
        };
        assert_eq!(
            (&flow("s")["tid"], &flow("s")["ts"]),
            (&call["tid"], &call["ts"])
        );
        assert_eq!(
            (&flow("f")["tid"], &flow("f")["ts"]),
            (&kernel["tid"], &kernel["ts"])
        );
    }
    // Each measured step is a ProfilerStep span, numbered from 0 with the warm-up step.
    let steps: Vec<&str> = of_cat("user_annotation")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .filter(|name| name.starts_with("ProfilerStep#"))
        .collect();
    assert_eq!(steps, ["ProfilerStep#1", "ProfilerStep#2"]);
}

/// Kernels that run long: at each periodic collection the device is far behind the host, and
/// CUPTI holds their buffer back unless the flush is forced. Every kernel still reaches its op.
#[test]
fn kernels_still_running_at_a_periodic_collection_reach_their_op() {
    const TEST: &str = "kernels_still_running_at_a_periodic_collection_reach_their_op";
    const LONG_KERNEL_NS: u64 = 500_000;
    if !is_child(TEST) {
        in_child(
            TEST,
            &[("CUPTI_STANDIN_KERNEL_NS", &LONG_KERNEL_NS.to_string())],
        );
        return;
    }

    let mut config = RuntimeConfig::preset(Preset::Profile);
    config.stopwatch.warmup_iters = 1;
    let out = tempfile::tempdir().unwrap();
    let device = Default::default();
    let mut session = Session::start::<B>(config, &device, out.path());
    // Two periodic collections (every 20 steps), the second after the first's ops would have
    // been forgotten.
    for _ in 0..45 {
        let a = Tensor::<B, 2>::ones([4, 4], &device);
        let _ = (a.clone().matmul(a) + 1.0).into_data();
        session.finish_iter().unwrap();
    }
    let summary = session.finish().unwrap();
    assert_standin_released();
    let launched = standin_launches();
    let run = summary.device_time.expect("device time was recorded");
    assert_eq!(
        (
            run.kernels,
            run.device_ns,
            run.unattributed.unattributed_kernels,
            run.unattributed.incomplete_kernels,
        ),
        (launched, launched * LONG_KERNEL_NS, 0, 0)
    );
    // The device was synced before each collection (after steps 20 and 40) and at the end:
    // the session's syncs are ops too.
    let ops = read_json(&out.path().join("ops.json"));
    let syncs: Vec<&Value> = ops["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["op"] == "sync")
        .map(|row| &row["calls"])
        .collect();
    assert_eq!(syncs, [&Value::from(3)]);
}

#[test]
fn when_another_client_holds_cupti_the_session_says_so_once_and_keeps_host_times() {
    const TEST: &str =
        "when_another_client_holds_cupti_the_session_says_so_once_and_keeps_host_times";
    const REFUSED: &str = "CUPTI refused to record activity: \
                           CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another CUPTI client \
                           (Nsight Systems, another profiler) is attached";
    if !is_child(TEST) {
        let (stdout, stderr) = in_child(TEST, &[("CUPTI_STANDIN_BUSY", "1")]);
        let line = format!("burn-profiled: {REFUSED}; the op table has host times only");
        assert_eq!(stderr.matches(&line).count(), 1, "{stderr}");
        assert!(!stdout.contains("device time: "), "{stdout}");
        return;
    }

    let error = device_time::start().expect_err("CUPTI is held by another client");
    assert_eq!(error.to_string(), REFUSED);
    assert!(!device_time::is_recording());

    support::device_time::session_keeps_host_times();
    assert_standin_released();
}

#[test]
fn recording_restarts_and_keeps_the_ops_of_several_threads_apart() {
    const TEST: &str = "recording_restarts_and_keeps_the_ops_of_several_threads_apart";
    if !is_child(TEST) {
        in_child(TEST, &[]);
        return;
    }

    let device = Default::default();
    let matmuls = |count: usize| {
        for _ in 0..count {
            let a = Tensor::<B, 2>::ones([8, 8], &device);
            let _ = a.clone().matmul(a).into_data();
        }
    };
    stats::start(stats::StatsConfig::default());
    for (recording, threads) in [(1, 1), (2, 4)] {
        device_time::start().unwrap_or_else(|e| panic!("recording {recording}: {e}"));
        assert_eq!(
            device_time::start(),
            Err(device_time::DeviceTimeError::AlreadyStarted)
        );
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| matmuls(5));
            }
        });
        launch_outside_ops();
        let summary = device_time::stop();
        probe::flush_device_time();
        assert_standin_released();
        let snapshot = stats::snapshot();
        let rows = snapshot.rows(stats::GroupBy::Op);
        let calls: u64 = rows.iter().map(|row| row.calls).sum();
        assert_eq!(
            (
                summary.unattributed_kernels,
                summary.tagged_api_calls,
                summary.tag_errors
            ),
            (1, calls, 0),
            "recording {recording}: a kernel per op, one under no op"
        );
        let matmul = rows.iter().find(|row| row.op == "float_matmul").unwrap();
        assert_eq!(
            (matmul.calls, matmul.kernels, matmul.device_total_ns),
            (
                threads * 5,
                Some(threads * 5),
                Some(threads * 5 * KERNEL_NS)
            ),
            "recording {recording}"
        );
        stats::reset();
    }
    stats::stop();
}

/// CubeCL launches kernels on its device thread: with steps run there and the ops outside steps
/// queued there, every op's tag is pushed and popped on that thread, around its launches.
/// Burn's `Wgpu` backend on lavapipe stands in for CUDA's device thread (`--features wgpu`).
#[cfg(feature = "wgpu")]
#[test]
fn on_cubecls_device_thread_every_op_tags_the_launches_there() {
    use burn::backend::Wgpu;
    use burn::backend::wgpu::WgpuDevice;
    use burn_profiled::LaunchThread;

    type W = Profiled<Wgpu>;
    const TEST: &str = "on_cubecls_device_thread_every_op_tags_the_launches_there";
    if !is_child(TEST) {
        in_child(TEST, &[]);
        return;
    }

    let os_thread = || {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as u64 }
    };
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let device_thread = launch.run(os_thread);
    let mut config = RuntimeConfig::preset(Preset::Profile);
    config.stopwatch.warmup_iters = 1;
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start::<W>(config, &device, out.path());
    session.set_launch_thread(launch);
    for _ in 0..3 {
        session.run_step(|| {
            let _forward = nvtx::range("forward");
            let a = Tensor::<W, 2>::ones([4, 4], &device);
            let _ = (a.clone().matmul(a) + 1.0).into_data();
        });
        // Outside the step: queued on the device thread.
        let _ = Tensor::<W, 1>::ones([4], &device).exp().into_data();
        session.finish_iter().unwrap();
    }
    let summary = session.finish().unwrap();
    assert_standin_released();

    let launched = standin_launches();
    let from: extern "C" fn(u64) -> u64 = standin("cupti_standin_launches_from");
    assert_eq!(
        (from(device_thread), from(os_thread())),
        (launched, 0),
        "launches on the device thread and on the test's"
    );
    let run = summary.device_time.expect("device time was recorded");
    assert_eq!(
        (
            run.kernels,
            run.unattributed.unattributed_kernels,
            run.unattributed.tagged_api_calls,
            run.unattributed.tag_errors,
        ),
        (launched, 0, launched, 0)
    );
    let ops = read_json(&out.path().join("ops.json"));
    for row in ops["rows"].as_array().unwrap() {
        assert_eq!(row["kernels"], row["calls"], "{row}");
    }
    let rows = ops["rows"].as_array().unwrap();
    let phase_of = |op: &str| {
        rows.iter()
            .filter(|row| row["op"] == op)
            .map(|row| row["phase"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(phase_of("float_matmul"), ["forward"]);
    assert_eq!(phase_of("float_exp"), ["-"]);
}

/// A data loader and a training loop on one device: ops of four threads queue their tags on
/// CubeCL's device thread at once. Each op's kernel (the stand-in launches it as the op's tag
/// is popped) must go to that op: no tag popped out of order, none left unattributed, one
/// kernel per call. Reads of two threads may be open there together, and a read's end then
/// pops and pushes again the tags above it (the stand-in launches at each of those pushes too).
#[cfg(feature = "wgpu")]
#[test]
fn ops_of_four_threads_on_one_device_each_get_their_own_kernels() {
    use burn::backend::Wgpu;
    use burn::backend::wgpu::WgpuDevice;
    use burn_profiled::LaunchThread;

    type W = Profiled<Wgpu>;
    const TEST: &str = "ops_of_four_threads_on_one_device_each_get_their_own_kernels";
    if !is_child(TEST) {
        in_child(TEST, &[]);
        return;
    }

    let device = WgpuDevice::default();
    let mut config = RuntimeConfig::preset(Preset::Profile);
    config.stopwatch.warmup_iters = 0;
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start::<W>(config, &device, out.path());
    session.set_launch_thread(LaunchThread::cubecl::<Wgpu>(&device));
    support::nesting::on_four_threads(20, |t| support::nesting::thread_ops::<W>(t, &device));
    session.finish_iter().unwrap();
    let summary = session.finish().unwrap();
    assert_standin_released();

    let run = summary.device_time.expect("device time was recorded");
    assert_eq!(
        (
            run.unattributed.unattributed_kernels,
            run.unattributed.tag_errors
        ),
        (0, 0),
        "every kernel attributed, every tag popped in order"
    );
    let ops = read_json(&out.path().join("ops.json"));
    let rows = ops["rows"].as_array().unwrap();
    for op in ["float_exp", "float_log", "float_sqrt", "float_cos"] {
        let row = rows
            .iter()
            .find(|row| row["op"] == op)
            .unwrap_or_else(|| panic!("no {op} row"));
        assert_eq!(
            (&row["calls"], &row["kernels"]),
            (&20.into(), &20.into()),
            "{row}"
        );
    }
    for row in rows {
        let (calls, kernels) = (
            row["calls"].as_u64().unwrap(),
            row["kernels"].as_u64().unwrap(),
        );
        match row["op"].as_str().unwrap().ends_with("_into_data") {
            true => assert!(kernels >= calls, "{row}"),
            false => assert_eq!(kernels, calls, "{row}"),
        }
    }
}

/// Holistic Trace Analysis, PyTorch's trace analysis tool, reads the stand-in's kernels in
/// `trace.json` as it reads a PyTorch run's: its temporal, kernel and idle-time breakdowns and
/// its queue length run, the kernel time it reports is `run.json`'s device time, and its call
/// graph gives each op the kernels `ops.json` gives it. Needs HTA (`scripts/hta-venv.sh`); `.ci/run` runs it.
#[test]
#[ignore = "needs HTA: scripts/hta-venv.sh, then cargo test ... -- --ignored"]
fn hta_breaks_down_the_kernels_and_maps_each_to_its_op_as_ops_json_does() {
    const TEST: &str = "hta_breaks_down_the_kernels_and_maps_each_to_its_op_as_ops_json_does";
    const OUT: &str = "BURN_PROFILED_TEST_OUT";
    // 1 ms kernels: HTA rounds timestamps to whole microseconds, which changes this run's
    // kernel time by under 0.1%.
    const KERNEL_NS: u64 = 1_000_000;
    if !is_child(TEST) {
        let out = tempfile::tempdir().unwrap();
        in_child(
            TEST,
            &[
                ("CUPTI_STANDIN_KERNEL_NS", &KERNEL_NS.to_string()),
                (OUT, out.path().to_str().unwrap()),
            ],
        );
        let hta = support::hta::analyse(out.path());
        let run = read_json(&out.path().join("run.json"));
        let ops = read_json(&out.path().join("ops.json"));

        // Each measured step is a profiler step (step 0 was the warm-up).
        assert_eq!(hta["profiler_steps"], serde_json::json!([1, 2, 3, 4]));
        // Every kernel. With `include_last_profiler_step`, HTA 0.5.0 keeps what follows the
        // last step up to that step's end on the trace's clock before it moved it to start at
        // 0: the session's closing sync and its kernel (the stand-in launches one per op) too.
        let kernels = run["device_time"]["kernels"].as_u64().unwrap();
        assert_eq!(hta["kernels"], kernels);
        let device_us = run["device_time"]["device_ns"].as_u64().unwrap() as f64 / 1e3;
        let within_1_percent = |what: &str, hta_us: f64, ours_us: f64| {
            assert!(
                (hta_us - ours_us).abs() <= 0.01 * ours_us,
                "{what}: HTA {hta_us} us, burn-profiled {ours_us} us"
            );
        };
        let breakdown: f64 = hta["kernel_breakdown"]
            .as_object()
            .unwrap()
            .values()
            .map(|us| us.as_f64().unwrap())
            .sum();
        within_1_percent("kernel breakdown", breakdown, device_us);
        // Two streams run side by side: the temporal breakdown merges them.
        let temporal = &hta["temporal"];
        let (idle, compute, span) = (
            temporal["idle_time(us)"].as_f64().unwrap(),
            temporal["compute_time(us)"].as_f64().unwrap(),
            temporal["kernel_time(us)"].as_f64().unwrap(),
        );
        assert!(
            compute > 0.0 && idle >= 0.0 && compute + idle <= span + 1.0,
            "{temporal}"
        );
        let idle_streams: std::collections::BTreeSet<&str> = hta["idle_by_stream"]
            .as_object()
            .unwrap()
            .keys()
            .filter_map(|key| key.split(' ').next())
            .collect();
        assert_eq!(idle_streams.into_iter().collect::<Vec<_>>(), ["13", "14"]);
        assert_eq!(hta["queue_length_streams"], serde_json::json!([13, 14]));

        // HTA's kernels per op (by launch call and call stack) are ops.json's, phases summed.
        let mut ours: std::collections::BTreeMap<&str, (u64, f64)> = Default::default();
        for row in ops["rows"].as_array().unwrap() {
            let entry = ours.entry(row["op"].as_str().unwrap()).or_default();
            entry.0 += row["kernels"].as_u64().unwrap();
            entry.1 += row["device_total_ns"].as_u64().unwrap() as f64 / 1e3;
        }
        ours.retain(|_, (kernels, _)| *kernels > 0);
        let by_op = hta["kernels_by_cpu_op"].as_object().unwrap();
        let theirs: std::collections::BTreeMap<&str, u64> = by_op
            .iter()
            .filter(|(_, mapped)| mapped["kernels"].as_u64().unwrap() > 0)
            .map(|(op, mapped)| (op.as_str(), mapped["kernels"].as_u64().unwrap()))
            .collect();
        let ours_kernels: std::collections::BTreeMap<&str, u64> = ours
            .iter()
            .map(|(op, (kernels, _))| (*op, *kernels))
            .collect();
        assert_eq!(theirs, ours_kernels);
        for (op, (_, us)) in &ours {
            within_1_percent(op, by_op[*op]["kernel_us"].as_f64().unwrap(), *us);
        }
        return;
    }

    type A = burn::backend::Autodiff<B>;
    let mut config = RuntimeConfig::preset(Preset::Profile);
    config.stopwatch.warmup_iters = 1;
    let out = PathBuf::from(std::env::var(OUT).unwrap());
    let device = Default::default();
    let mut session = Session::start::<A>(config, &device, &out);
    let w1 = Tensor::<A, 2>::ones([16, 32], &device).require_grad();
    let w2 = Tensor::<A, 2>::ones([32, 4], &device).require_grad();
    for _ in 0..5 {
        let x = Tensor::<A, 2>::ones([8, 16], &device);
        let loss = nvtx::scope("forward", || {
            let hidden = burn::tensor::activation::relu(x.matmul(w1.clone()) + 1.0);
            hidden.matmul(w2.clone()).mean()
        });
        let grads = nvtx::scope("backward", || loss.backward());
        let _ = w1.grad(&grads).map(|g| g.into_data());
        session.finish_iter().unwrap();
    }
    session.finish().unwrap();
    assert_standin_released();
}
