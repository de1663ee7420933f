//! Device memory on CubeCL's real device thread: burn's `Wgpu` on Mesa's lavapipe (a Vulkan
//! driver on the CPU; `.ci/run` installs it). The per-step series is what CubeCL's
//! `memory_usage` says at the same points, a tensor kept per step is warned about with its
//! size per step, and an op's allocation is read on the launch thread, to the byte. Run with
//! `cargo test --features wgpu --test memory_wgpu`.
#![cfg(feature = "wgpu")]

use std::sync::Mutex;

use burn::backend::Wgpu;
use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use burn::tensor::Tensor;
use burn_cubecl::cubecl::Runtime;
use burn_profiled::config::RuntimeConfig;
use burn_profiled::memory::{DeviceMemory, MemoryRun};
use burn_profiled::stats::{self, GroupBy, StatsConfig};
use burn_profiled::{LaunchThread, Profiled, Session, fused, trace};

type P = Profiled<Wgpu>;

/// The device's pools and the statistics are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// What CubeCL says of this thread's stream, read directly.
fn memory_usage(device: &WgpuDevice) -> DeviceMemory {
    let usage = <WgpuRuntime as Runtime>::client(device)
        .memory_usage()
        .expect("lavapipe reports its memory");
    DeviceMemory {
        allocations: usage.number_allocs,
        in_use_bytes: usage.bytes_in_use,
        reserved_bytes: usage.bytes_reserved,
    }
}

/// `steps` steps under a session with per-step memory and Wgpu's launch thread, keeping a
/// tensor of `kept_per_step` f32 per step when not 0; also what `memory_usage` said after
/// each measured step.
fn train(steps: usize, kept_per_step: usize) -> (MemoryRun, Vec<String>, Vec<DeviceMemory>) {
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 2;
    config.memory.per_step = true;
    config.trace.enabled = true;
    trace::clear();
    let device = WgpuDevice::default();
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start::<P>(config, &device, out.path());
    session.set_launch_thread(LaunchThread::cubecl::<Wgpu>(&device));
    let weights = Tensor::<P, 2>::ones([64, 64], &device);
    let mut kept = Vec::new();
    let mut direct = Vec::new();
    for step in 0..steps {
        let x = Tensor::<P, 2>::ones([32, 64], &device);
        let _ = x.matmul(weights.clone()).exp().sum().into_scalar();
        if kept_per_step > 0 {
            kept.push(Tensor::<P, 1>::zeros([kept_per_step], &device));
        }
        session.finish_iter().unwrap();
        if step >= 2 {
            direct.push(memory_usage(&device));
        }
    }
    let summary = session.finish().unwrap();
    let memory = summary.memory.expect("per-step memory was on");
    let warnings = memory.growth_warnings(summary.measured_steps);
    drop(kept);
    (memory, warnings, direct)
}

#[test]
fn the_per_step_series_is_what_memory_usage_says_at_the_same_points() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (memory, warnings, direct) = train(12, 0);
    assert_eq!(memory.devices.len(), 1, "{memory:#?}");
    let series = &memory.devices[0];
    assert_eq!(series.device, format!("{:?}", WgpuDevice::default()));
    let in_use: Vec<u64> = direct.iter().map(|m| m.in_use_bytes).collect();
    let reserved: Vec<u64> = direct.iter().map(|m| m.reserved_bytes).collect();
    let allocations: Vec<u64> = direct.iter().map(|m| m.allocations).collect();
    assert_eq!(series.in_use_bytes, in_use);
    assert_eq!(series.reserved_bytes, reserved);
    assert_eq!(series.allocations, allocations);
    assert!(series.in_use_bytes.iter().all(|bytes| *bytes > 0));
    assert_eq!(series.peak_in_use_bytes, *in_use.iter().max().unwrap());
    assert_eq!(warnings, Vec::<String>::new(), "a steady run");
    let device = memory
        .growth
        .iter()
        .find(|g| g.memory == series.device)
        .unwrap();
    assert!(!device.growing, "{device:?}");
    assert_eq!(device.bytes_per_step, 0.0, "{device:?}");

    // The same series as a counter track of the timeline.
    let (trace, _) = trace::to_json();
    let trace: serde_json::Value = serde_json::from_str(&trace).unwrap();
    let counters: Vec<u64> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == format!("memory {}", series.device))
        .map(|e| e["args"]["in_use_bytes"].as_f64().unwrap() as u64)
        .collect();
    assert_eq!(counters, in_use);
}

#[test]
fn a_tensor_kept_per_step_on_the_device_is_warned_with_its_size_per_step() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (memory, warnings, _) = train(12, 1 << 20);
    let name = format!("{:?}", WgpuDevice::default());
    let growth = memory.growth.iter().find(|g| g.memory == name).unwrap();
    assert!(growth.growing, "{growth:?}");
    assert_eq!(growth.bytes_per_step, 4_194_304.0, "{growth:?}");
    assert_eq!(growth.rising_steps, 9);
    let warning = warnings
        .iter()
        .find(|w| w.contains(&name))
        .unwrap_or_else(|| panic!("a warning about the device in {warnings:?}"));
    assert!(
        warning.starts_with(&format!(
            "burn-profiled: memory grew by 4.00 MiB per step on {name} over 10 measured steps"
        )),
        "{warning}"
    );
    assert!(
        warning.ends_with(
            "; set `[memory] per_op = true` (with `[stats] enabled`) to see which ops keep it"
        ),
        "{warning}"
    );
}

#[test]
fn an_op_allocation_is_read_on_the_launch_thread_to_the_byte() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    stats::reset();
    stats::start(StatsConfig {
        memory: true,
        ..StatsConfig::default()
    });
    let zeros = Tensor::<P, 1>::zeros([1 << 20], &device);
    let doubled = zeros.clone() * 2.0;
    let _ = doubled.into_data();
    stats::stop();
    drop(attached);

    let rows = stats::snapshot().rows(GroupBy::Op);
    let row = |op: &str| {
        rows.iter()
            .find(|r| r.op == op)
            .unwrap_or_else(|| panic!("a row of {op} in {rows:#?}"))
            .clone()
    };
    let zeros_row = row("float_zeros");
    assert_eq!(zeros_row.alloc_bytes, Some(4_194_304), "{zeros_row:#?}");
    assert_eq!(zeros_row.freed_bytes, Some(0));
    assert_eq!(row("float_mul_scalar").alloc_bytes, Some(4_194_304));
    let read = row("float_into_data");
    assert_eq!(
        read.freed_bytes,
        Some(4_194_304),
        "the read frees its input: {read:#?}"
    );
    assert_eq!(
        stats::memory_peaks()[0].op,
        "float_mul_scalar",
        "both tensors live at its end"
    );
    drop(zeros);
    stats::reset();
}

#[test]
fn fused_blocks_report_their_allocations_too() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    type F = fused::Wgpu<f32, i32>;
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<F>(&device);
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    stats::reset();
    stats::start(StatsConfig {
        memory: true,
        ..StatsConfig::default()
    });
    let x = Tensor::<F, 1>::ones([1 << 20], &device);
    let y = (x.exp() * 2.0 + 1.0).sum();
    let _ = y.into_data();
    stats::stop();
    drop(attached);
    let rows = stats::snapshot().rows(GroupBy::Op);
    let block = rows
        .iter()
        .find(|r| r.op == "fused elementwise[ones, exp, mul_scalar, add_scalar]")
        .unwrap_or_else(|| panic!("the fused block in {rows:#?}"));
    assert_eq!(block.alloc_bytes, Some(4_194_304), "{block:#?}");
    assert_eq!(block.peak_bytes, Some(4_194_304), "{block:#?}");
    stats::reset();
}

#[test]
fn ops_of_a_step_run_on_the_launch_thread_read_their_memory_there() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    stats::reset();
    stats::start(StatsConfig {
        memory: true,
        ..StatsConfig::default()
    });
    let kept = launch.run(|| {
        let zeros = Tensor::<P, 1>::zeros([1 << 20], &device);
        let ones = Tensor::<P, 1>::ones([1 << 19], &device);
        (zeros, ones)
    });
    stats::stop();
    drop(attached);
    let rows = stats::snapshot().rows(GroupBy::Op);
    let alloc = |op: &str| rows.iter().find(|r| r.op == op).and_then(|r| r.alloc_bytes);
    assert_eq!(alloc("float_zeros"), Some(4_194_304), "{rows:#?}");
    assert_eq!(alloc("float_ones"), Some(2_097_152), "{rows:#?}");
    drop(kept);
    stats::reset();
}

#[test]
fn a_device_memory_limit_stops_the_run_naming_the_device() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut config = RuntimeConfig::default();
    config.memory.device_limit_mib = std::num::NonZeroU64::new(1);
    let device = WgpuDevice::default();
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start::<P>(config, &device, out.path());
    session.set_launch_thread(LaunchThread::cubecl::<Wgpu>(&device));
    let x = Tensor::<P, 1>::ones([1 << 20], &device);
    let stopped = session
        .finish_iter()
        .expect_err("lavapipe reserves more than 1 MiB");
    let burn_profiled::RunStopped::Memory(exceeded) = stopped else {
        panic!("a memory limit stopped it: {stopped:?}");
    };
    assert_eq!(exceeded.memory, format!("{device:?}"));
    assert_eq!(exceeded.limit_mib, 1);
    assert!(exceeded.used_mib >= 4, "{exceeded:?}");
    assert!(
        exceeded
            .to_string()
            .starts_with(&format!("device memory limit reached: {device:?} has ")),
        "{exceeded}"
    );
    let summary = session.finish().unwrap();
    assert_eq!(summary.stopped_by, Some(exceeded.to_string()));
    drop(x);
}
