//! Two devices in one process, one thread each, as data-parallel training runs them: burn's
//! `Wgpu` backend on Mesa's lavapipe (a Vulkan driver on the CPU), where `DefaultDevice` and
//! `Cpu` are two devices with a device thread each. Run with
//! `cargo test --features wgpu --test devices_wgpu`.
#![cfg(feature = "wgpu")]

use burn::backend::Wgpu;
use burn::backend::wgpu::WgpuDevice;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::{DeviceSync, LaunchThread, Profiled, probe, stats, trace};
use nvtx_recorder::{Event, Kind, Message};

nvtx_recorder::install_static!();

#[path = "../examples/common/transfer.rs"]
mod transfer;

/// The switches and statistics are process-wide: one test at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn small_ops<B: Backend>(device: &B::Device) -> TensorData {
    let x = Tensor::<B, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], device);
    let y = x.clone().matmul(x.clone()).exp() + x;
    y.into_data()
}

/// The OS thread CubeCL launches a device's kernels on, from the NVTX name it was given.
fn named_thread(name: &str) -> u64 {
    nvtx_recorder::events()
        .into_iter()
        .find(|e| e.kind == Kind::NameThread && e.message.text() == Some(name))
        .unwrap_or_else(|| panic!("no thread named {name}"))
        .tid
}

fn op_pushes(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match (&e.kind, &e.message) {
            (Kind::Push, Message::Registered(name)) if e.domain.as_deref() == Some("burn") => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn each_device_has_its_rows_its_track_and_its_op_ranges_on_its_own_thread() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let devices = [WgpuDevice::DefaultDevice, WgpuDevice::Cpu];
    let expected: Vec<TensorData> = devices.iter().map(small_ops::<Wgpu>).collect();
    let launch: Vec<LaunchThread> = devices.iter().map(LaunchThread::cubecl::<Wgpu>).collect();
    let runners: Vec<u64> = launch
        .iter()
        .map(|l| named_thread(l.thread_name()))
        .collect();
    assert_ne!(runners[0], runners[1], "one device thread per device");
    let before: Vec<usize> = runners
        .iter()
        .map(|tid| nvtx_recorder::events_of_thread(*tid).len())
        .collect();
    let attached: Vec<_> = launch.iter().map(|l| l.attach().unwrap()).collect();
    stats::reset();
    stats::start(stats::StatsConfig::default());
    trace::clear();
    trace::start(trace::TraceConfig::default());
    probe::set_op_ranges(true);

    let results: Vec<TensorData> = std::thread::scope(|scope| {
        let replicas: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(i, device)| {
                std::thread::Builder::new()
                    .name(format!("replica {i}"))
                    .spawn_scoped(scope, move || small_ops::<Profiled<Wgpu>>(device))
                    .unwrap()
            })
            .collect();
        replicas.into_iter().map(|r| r.join().unwrap()).collect()
    });
    DeviceSync::all::<Wgpu>(&devices).sync();
    probe::set_op_ranges(false);
    stats::stop();
    trace::stop();
    drop(attached);

    assert_eq!(results, expected, "results change");
    let snapshot = stats::snapshot();
    let mut seen = snapshot.devices();
    seen.sort();
    assert_eq!(seen, ["Cpu", "DefaultDevice"]);
    let matmuls: Vec<(Option<String>, u64)> = snapshot
        .rows(stats::GroupBy::OpAndDevice)
        .into_iter()
        .filter(|row| row.op == "float_matmul")
        .map(|row| (row.device, row.calls))
        .collect();
    assert_eq!(matmuls.len(), 2, "{matmuls:?}");
    for device in ["DefaultDevice", "Cpu"] {
        assert!(
            matmuls.contains(&(Some(device.to_owned()), 1)),
            "{device}: {matmuls:?}"
        );
    }
    // Each device's op ranges on its own device thread, in op order.
    let ranges: Vec<Vec<String>> = runners
        .iter()
        .zip(&before)
        .map(|(tid, before)| op_pushes(&nvtx_recorder::events_of_thread(*tid)[*before..]))
        .collect();
    assert_eq!(ranges[0], ranges[1]);
    for op in ["float_from_data", "float_matmul", "float_exp", "float_add"] {
        assert!(ranges[0].contains(&op.to_owned()), "{op}: {ranges:?}");
    }
    // The replicas' timeline tracks name their device.
    let (json, _) = trace::to_json();
    for track in ["replica 0 [DefaultDevice]", "replica 1 [Cpu]"] {
        assert!(json.contains(&format!("\"{track}\"")), "no track {track}");
    }
}

#[test]
fn with_a_launch_thread_per_device_steps_run_where_they_are_called() {
    use burn_profiled::Session;
    use burn_profiled::config::{Preset, RuntimeConfig};

    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let devices = [WgpuDevice::DefaultDevice, WgpuDevice::Cpu];
    let mut config = RuntimeConfig::preset(Preset::Train);
    config.nvtx.steps_on_launch_thread = true;
    config.trace.enabled = true;
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start_on_devices::<Wgpu>(config, &devices, out.path());
    let caller = nvtx_recorder::current_tid();
    session.set_launch_thread(LaunchThread::cubecl::<Wgpu>(&devices[0]));
    let device_thread = session.run_step(nvtx_recorder::current_tid);
    assert_eq!(
        device_thread,
        named_thread("cubecl wgpu<wgsl> DefaultDevice")
    );
    // A step on one device's thread that reached another device (a copy, a collective) would
    // wait for a device thread that may be waiting for it.
    session.set_launch_thread(LaunchThread::cubecl::<Wgpu>(&devices[1]));
    assert_eq!(session.run_step(nvtx_recorder::current_tid), caller);
    // Replacing the first device's launch thread keeps both.
    session.set_launch_thread(LaunchThread::cubecl::<Wgpu>(&devices[0]));
    assert_eq!(session.run_step(nvtx_recorder::current_tid), caller);
    session.finish().unwrap();
    // One process drives both devices: one rank, as PyTorch's trace tools see it.
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("trace.json")).unwrap())
            .unwrap();
    assert_eq!(
        trace["distributedInfo"],
        serde_json::json!({
            "backend": "burn", "rank": 0, "world_size": 1, "devices": ["DefaultDevice", "Cpu"]
        })
    );
}

mod data_parallel {
    use burn::backend::Autodiff;
    use burn::module::Module;
    use burn::nn::{Linear, LinearConfig};
    use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer, SgdConfig};
    use burn::tensor::backend::AutodiffBackend;

    use super::*;
    use crate::transfer::{fork_via_host as fork, grads_via_host as grads_to};

    #[derive(Module, Debug)]
    struct Mlp<B: Backend> {
        first: Linear<B>,
        second: Linear<B>,
    }

    /// Three data-parallel steps: each device's replica computes the gradients of its share on
    /// a thread of its own, they are summed on the first device, SGD steps there. Returns the
    /// parameters.
    fn train<B: AutodiffBackend>(devices: &[B::Device]) -> Vec<TensorData> {
        let main = &devices[0];
        B::seed(main, 3);
        let mut model = Mlp {
            first: LinearConfig::new(4, 8).init::<B>(main),
            second: LinearConfig::new(8, 2).init::<B>(main),
        };
        let mut optim = SgdConfig::new().init();
        for step in 0..3 {
            let grads: Vec<GradientsParams> = std::thread::scope(|scope| {
                let replicas: Vec<_> = devices
                    .iter()
                    .enumerate()
                    .map(|(index, device)| {
                        let replica = fork(model.clone(), device);
                        let replica = scope.spawn(move || {
                            let offset = (step * devices.len() + index) as f32;
                            let x = Tensor::<B, 2>::from_floats(
                                [[offset, 1.0, -2.0, 0.5], [0.25, offset, 3.0, -1.0]],
                                device,
                            );
                            let loss = replica
                                .second
                                .forward(replica.first.forward(x).tanh())
                                .powi_scalar(2)
                                .mean();
                            GradientsParams::from_grads(loss.backward(), &replica)
                        });
                        // One replica after the other: run concurrently on lavapipe, even
                        // plain `Autodiff<Wgpu>` gives other bits from run to run (3 runs in
                        // 4 here), as CubeCL's autotune picks kernels by timing.
                        replica.join().unwrap()
                    })
                    .collect();
                replicas
            });
            let mut accumulator = GradientsAccumulator::new();
            for replica_grads in grads {
                accumulator.accumulate(&model, grads_to(replica_grads, &model, main));
            }
            model = optim.step(0.1, model, accumulator.grads());
        }
        vec![
            model.first.weight.val().into_data(),
            model.first.bias.unwrap().val().into_data(),
            model.second.weight.val().into_data(),
        ]
    }

    #[test]
    fn a_data_parallel_step_on_two_devices_is_bit_identical_through_profiled() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let devices = [WgpuDevice::DefaultDevice, WgpuDevice::Cpu];
        let plain = train::<Autodiff<Wgpu>>(&devices);
        probe::set_op_ranges(true);
        let profiled = train::<Autodiff<Profiled<Wgpu>>>(&devices);
        probe::set_op_ranges(false);
        for (plain, profiled) in plain.iter().zip(&profiled) {
            assert_eq!(plain.as_bytes(), profiled.as_bytes());
        }
        let moved = plain[0].to_vec::<f32>().unwrap();
        assert!(moved.iter().all(|v| v.is_finite()), "{moved:?}");
    }
}
