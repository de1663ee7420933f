//! A session is one per process: a second one, while the first lives, would observe every
//! block twice. It is refused with what to do instead; the first goes on.

use std::panic::{AssertUnwindSafe, catch_unwind};

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;

#[test]
fn a_second_live_session_is_refused_and_the_first_goes_on() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.stats.enabled = true;
    let mut first = Session::start(config.clone(), &device, out.path());

    let second = catch_unwind(AssertUnwindSafe(|| {
        Session::start(config, &device, out.path().join("second"))
    }));
    let message = second
        .err()
        .and_then(|panic| {
            (panic.downcast_ref::<String>().cloned())
                .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        })
        .expect("the second session panics with a message");
    assert!(
        message.contains("a session is already live in this process")
            && message.contains("Session::finish"),
        "the refusal says why and what to do: {message}"
    );

    let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32; 16], [4, 4]), &device);
    let _ = x.exp().add_scalar(1.0).into_data();
    first.finish_iter().expect("no memory limit");
    first.finish().expect("the first session writes its run");
    let ops = std::fs::read_to_string(out.path().join("ops.json")).expect("ops.json");
    let ops: serde_json::Value = serde_json::from_str(&ops).unwrap();
    let rows = ops["rows"].as_array().expect("rows");
    assert!(
        rows.iter()
            .any(|row| row["op"] == "fused elementwise[exp, add_scalar]"),
        "the first session records the block: {ops}"
    );
    assert!(
        rows.iter().all(|row| row["calls"] == 1),
        "each block is recorded once, not once per session: {ops}"
    );
    assert!(
        !out.path().join("second").exists(),
        "the refused session wrote nothing"
    );
}
