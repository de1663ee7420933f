//! A session with `[dump] compare` compares the run's dumps with those already in `[dump]
//! dir` and writes none: the reference's directory is not among the files the run lists.
//!
//! Its own process: the dumper is enabled once per process.

use burn::tensor::{Device, DeviceKind};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;
use burn_profiled_022::dump::{AddOptions, DumpType, global};

mod support;
use support::mlp::{assert_is_the_golden_dump, mlp};

#[test]
fn a_comparing_session_does_not_list_the_reference_among_its_files() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let root = tempfile::tempdir().unwrap();
    let reference = root.path().join("reference");
    std::fs::create_dir_all(reference.join("0")).unwrap();
    let golden = support::mlp::GOLDEN;
    for entry in std::fs::read_dir(golden).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), reference.join("0").join(entry.file_name())).unwrap();
    }
    let out = root.path().join("run");
    let mut config = RuntimeConfig::default();
    config.dump.enabled = true;
    config.dump.compare = true;
    config.dump.dir = Some(reference.clone());
    let session = Session::start(config, &device, &out);

    let model = mlp(&device);
    let json = || AddOptions::new(DumpType::Json);
    global::add_tensor_data("mlp", model.tensors(), json()).unwrap();
    global::add_grad_data("mlp", model.grad_inputs(), json()).unwrap();
    let _grads = global::set_gradients(model.loss.clone()).unwrap();
    global::dump(true).expect("the same data as the reference");
    let summary = session.finish().unwrap();

    assert!(
        !summary
            .files
            .iter()
            .any(|file| file.starts_with(&reference)),
        "the reference is not the run's: {:?}",
        summary.files
    );
    assert!(summary.files.contains(&out.join("run.json")));
    assert_is_the_golden_dump(&reference.join("0"));
}
