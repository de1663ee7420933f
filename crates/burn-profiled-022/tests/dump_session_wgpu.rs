//! A session with `[dump] enabled` turns the process-wide dumper on, writing to the run
//! directory's `dumps`, which `run.json` lists; its dumps are Burn 0.21's files.
//!
//! Its own process: a session's tools are process-wide, and a session started while another
//! thread has work queued on the device waits for ever (the guide's "What to know").

use burn::tensor::{Device, DeviceKind};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;
use burn_profiled_022::dump::{AddOptions, DumpType, global};

mod support;
use support::mlp::{assert_is_the_golden_dump, mlp};

#[test]
fn a_session_with_dumps_on_writes_them_to_the_run_directory() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.dump.enabled = true;
    let session = Session::start(config, &device, out.path());

    let model = mlp(&device);
    let json = || AddOptions::new(DumpType::Json);
    global::add_tensor_data("mlp", model.tensors(), json()).unwrap();
    global::add_grad_data("mlp", model.grad_inputs(), json()).unwrap();
    let grads = global::set_gradients(model.loss.clone())
        .unwrap()
        .expect("the dumper is on");
    assert!(
        model.w.grad(&grads).is_some(),
        "the gradients are the step's"
    );
    global::dump(true).unwrap();
    let summary = session.finish().unwrap();

    let dumps = out.path().join("dumps");
    assert!(summary.files.contains(&dumps), "{:?}", summary.files);
    assert_is_the_golden_dump(&dumps.join("0"));
}
