//! What Burn 0.22 cannot record is turned off at the session's start, with a word on stderr:
//! call sites (its ops run on the fusion thread): `run.json` says they were off, and none of
//! their files is written (no table of call sites all `-`, no flame graph of op names);
//! numerics per block (its hooks hand over the IR, not the data): `numerics.jsonl` holds the
//! values handed over (the loss here), no block, and `capture`, which names an op call, is off.
//! Steps on the launch thread (on in the `profile` and `debug` presets, for Burn 0.21's CubeCL
//! backends) have no meaning on Burn 0.22, where the fusion thread launches every kernel: off,
//! without a word (the presets' table says so), and `run.json` says off.

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;

#[test]
fn call_sites_are_turned_off_and_numerics_records_values_not_blocks() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.stats.enabled = true;
    config.stats.call_sites = true;
    config.numerics.fingerprints = true;
    config.numerics.capture = Some([0, 1]);
    config.nvtx.steps_on_launch_thread = true;
    let mut session = Session::start(config, &device, out.path());
    let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32; 16], [4, 4]), &device);
    let loss = x.exp().add_scalar(1.0).mean();
    session.record_loss(&loss);
    session.finish_iter().expect("no memory limit");
    let summary = session.finish().expect("the run is written");
    let records = burn_profiled_022::numerics::file::read(out.path()).unwrap();
    let names: Vec<&str> = records.iter().map(|r| r.op.as_str()).collect();
    assert_eq!(names, ["loss"], "the blocks are not recorded");
    assert!(summary.captured.is_none());
    for file in ["ops_by_call_site.json", "stacks.folded"] {
        assert!(!out.path().join(file).exists(), "{file} written");
        assert!(
            !summary.files.iter().any(|f| f.ends_with(file)),
            "{file} listed: {:?}",
            summary.files
        );
    }
    assert!(out.path().join("ops.json").exists(), "the op table is");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("run.json")).unwrap())
            .unwrap();
    let config = &run["config"];
    assert_eq!(config["stats"]["call_sites"], false, "{config:#}");
    assert_eq!(
        config["nvtx"]["steps_on_launch_thread"], false,
        "{config:#}"
    );
    assert_eq!(config["numerics"]["fingerprints"], true, "{config:#}");
    assert_eq!(
        config["numerics"]["capture"],
        serde_json::Value::Null,
        "{config:#}"
    );
}
