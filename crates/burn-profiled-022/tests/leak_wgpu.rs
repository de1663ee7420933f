//! The memory growth warning on Burn 0.22 names the blocks whose outputs stay alive, not the
//! largest outputs: from the IR, frees land on `drop` blocks and on the last readers, so the
//! op table's net allocations (what each block allocated less what it freed) would name every
//! block that made something. A loop that keeps one matmul's output a step, among larger
//! temporaries, is blamed on the matmul.

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;

#[test]
fn the_growth_warning_names_the_block_whose_outputs_stay_alive() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.stats.enabled = true;
    config.memory.per_step = true;
    config.memory.per_op = true;
    let mut session = Session::start(config, &device, out.path());
    let square = |n: usize, value: f32| {
        Tensor::<2>::from_data(TensorData::new(vec![value; n * n], [n, n]), &device)
    };
    let mut leaked = Vec::new();
    for step in 0..12 {
        // A temporary four times the leak's size, made and dropped.
        let temporary = square(512, 0.5).exp();
        let _ = temporary.sum().into_data();
        // The leak: one 256x256 matmul's output a step, kept.
        leaked.push(square(256, step as f32).matmul(square(256, 1.0)));
        let _ = leaked.last().unwrap().clone().sum().into_data();
        session.finish_iter().expect("no memory limit");
    }
    let summary = session.finish().expect("the run is written");
    let memory = summary.memory.expect("memory per step");
    let warnings = memory.growth_warnings(summary.measured_steps);
    let device_warning = warnings
        .iter()
        .find(|warning| warning.contains(" on wgpu:"))
        .unwrap_or_else(|| panic!("the device's memory grows: {warnings:?}"));
    let (_, kept) = device_warning
        .split_once("; made in one step and still alive at the end: ")
        .unwrap_or_else(|| panic!("{device_warning}"));
    // 256x256 f32 a step, by the matmul's block, in each step looked at: the measured steps
    // (11, past one of warm-up) but the last.
    assert!(
        kept.starts_with("256.00 KiB/step by matmul (in 10 of 10 steps)"),
        "{device_warning}"
    );
    assert!(!kept.contains("drop"), "{device_warning}");
    drop(leaked);
}
