//! A dump of a small MLP's tensors and gradients on Burn 0.21 is the golden dump that the Burn
//! 0.22 edition's `tests/dump_wgpu.rs` compares its own dump of the same model and weights
//! with: the two editions write the same files. The values are exact in f32 on any backend
//! (multiples of 1/4 and 1/2, a power-of-two mean), so both dumps agree to the last bit.

use burn::backend::{Autodiff, NdArray};
use burn_profiled::dump::{AddOptions, DumpType, TensorDumper};

mod support;
use support::mlp::mlp;

type B = Autodiff<NdArray>;

/// Where the golden dump is: the core's tests, beside the other dump formats' goldens.
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/core/tests/golden/dump_mlp"
);

#[test]
fn the_mlp_dump_on_burn_021_is_the_golden_one_that_burn_022s_is_compared_with() {
    let device = Default::default();
    let model = mlp::<B>(&device);

    let out = tempfile::tempdir().unwrap();
    let mut dumper = TensorDumper::new(out.path());
    let json = || AddOptions::new(DumpType::Json);
    dumper
        .add_tensor_data("mlp", model.tensors(), json())
        .unwrap();
    dumper
        .add_grad_data("mlp", model.grad_inputs(), json())
        .unwrap();
    dumper.set_gradients::<B>(model.loss).unwrap();
    dumper.dump(true).unwrap();

    for file in ["tensors.json", "grads.json"] {
        let written = std::fs::read_to_string(out.path().join("0").join(file)).unwrap();
        let golden_path = format!("{GOLDEN}/0/{file}");
        if std::env::var_os("BURN_PROFILED_BLESS").is_some() {
            std::fs::create_dir_all(format!("{GOLDEN}/0")).unwrap();
            std::fs::write(&golden_path, &written).unwrap();
        }
        let golden = std::fs::read_to_string(&golden_path)
            .unwrap_or_else(|_| panic!("{golden_path}: run once with BURN_PROFILED_BLESS=1"));
        assert_eq!(written, golden, "{file}");
    }
}
