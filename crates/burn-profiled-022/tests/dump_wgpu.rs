//! Dumps on Burn 0.22: the same files as Burn 0.21's edition. A small MLP's tensors and
//! gradients, dumped on wgpu (lavapipe without a GPU), are byte for byte the golden dump that
//! Burn 0.21's edition writes for the same model and weights on NdArray
//! (`tests/dump_across_burns.rs` of burn-profiled holds that golden to 0.21's output): a 0.21
//! run's dump and a 0.22 run's compare, with `burn-dump-diff` or the dumper's compare mode.

use burn::tensor::{Device, DeviceKind, Gradients};
use burn_profiled_022::dump::{AddOptions, CompareSettings, DumpType, TensorDumper};

mod support;
use support::mlp::{GOLDEN, assert_is_the_golden_dump, mlp};

#[test]
fn a_dumpers_tensors_and_gradients_are_burn_021s_files_and_compare_with_its_dump() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let json = || AddOptions::new(DumpType::Json);
    let out = tempfile::tempdir().unwrap();

    let model = mlp(&device);
    let mut dumper = TensorDumper::new(out.path());
    dumper
        .add_tensor_data("mlp", model.tensors(), json())
        .unwrap();
    dumper
        .add_grad_data("mlp", model.grad_inputs(), json())
        .unwrap();
    let _grads: Gradients = dumper.set_gradients(model.loss.clone()).unwrap();
    dumper.dump(true).unwrap();
    assert_is_the_golden_dump(&out.path().join("0"));

    // The dumper's compare mode against Burn 0.21's dump, copied in as dump 1.
    std::fs::create_dir_all(out.path().join("1")).unwrap();
    for file in ["tensors.json", "grads.json"] {
        std::fs::copy(format!("{GOLDEN}/{file}"), out.path().join("1").join(file)).unwrap();
    }
    let model = mlp(&device);
    dumper.set_dump_is_compare(CompareSettings::default());
    dumper
        .add_tensor_data("mlp", model.tensors(), json())
        .unwrap();
    dumper
        .add_grad_data("mlp", model.grad_inputs(), json())
        .unwrap();
    let grads = model.loss.backward();
    dumper.set_gradients_from(&grads).unwrap();
    let consistent = dumper.dump(true).expect("consistent with Burn 0.21's dump");
    assert!(consistent);
}
