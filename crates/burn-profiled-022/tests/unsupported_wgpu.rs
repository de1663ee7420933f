//! What Burn 0.22 cannot record (call sites: its ops run on the fusion thread; per-op
//! numerics: its hooks hand over the IR, not the data) is turned off at the session's start,
//! with a word on stderr: `run.json` says it was off, and none of its files is written (no
//! table of call sites all `-`, no flame graph of op names, no empty `numerics.jsonl`).

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;

#[test]
fn call_sites_and_numerics_are_turned_off_and_write_nothing() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.stats.enabled = true;
    config.stats.call_sites = true;
    config.numerics.fingerprints = true;
    let mut session = Session::start(config, &device, out.path());
    let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32; 16], [4, 4]), &device);
    let _ = x.exp().add_scalar(1.0).into_data();
    session.finish_iter().expect("no memory limit");
    let summary = session.finish().expect("the run is written");
    for file in ["ops_by_call_site.json", "stacks.folded", "numerics.jsonl"] {
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
    assert_eq!(config["numerics"]["fingerprints"], false, "{config:#}");
}
