//! Ragged batches on Burn 0.22: a user's padded batch type dumped per sample or as a map, as
//! on Burn 0.21 (`tests/dump_add.rs`), by the same core code; sample sizes that do not fit
//! refused with the same message. (Burn 0.22's `TensorData` itself refuses bytes that do not
//! fit its shape.)

use burn::tensor::TensorData;
use burn_profiled_022::dump::json::PyJson;
use burn_profiled_022::dump::{AddOptions, DumpType, RaggedBatch, TensorDumper, Value};

struct Ragged {
    data: TensorData,
    sizes: Vec<usize>,
}

impl RaggedBatch for Ragged {
    fn data(&self) -> TensorData {
        self.data.clone()
    }
    fn sample_sizes(&self) -> Vec<usize> {
        self.sizes.clone()
    }
    fn non_uniform_dim(&self) -> usize {
        1
    }
    fn num_batch_dims(&self) -> usize {
        1
    }
}

fn ragged() -> Value {
    let values: Vec<f32> = (0..15).map(|v| v as f32).collect();
    Value::opaque(Ragged {
        data: TensorData::new(values, [3, 5]),
        sizes: vec![3, 5, 1],
    })
}

fn json() -> AddOptions {
    AddOptions::new(DumpType::Json)
}

#[test]
fn ragged_batches_per_sample_or_as_a_map_switchable_between_adds() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.enable_ragged_batch_dumping::<Ragged>(true);
    d.add_tensor_data("ragged_batches.batch_1", ragged(), json())
        .unwrap();
    d.enable_ragged_batch_dumping::<Ragged>(false);
    d.add_tensor_data("ragged_batches.batch_2", ragged(), json())
        .unwrap();
    d.dump(true).unwrap();
    let text = std::fs::read_to_string(dir.path().join("0/tensors.json")).unwrap();
    let expected = PyJson::parse(
        r#"{"ragged_batches": {
            "batch_1": [[0.0, 1.0, 2.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0]],
            "batch_2": {"data": [[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0]],
                        "sample_sizes": [3, 5, 1], "non_uniform_dim": 1, "num_batch_dims": 1}}}"#,
    )
    .unwrap();
    assert_eq!(PyJson::parse(&text).unwrap(), expected, "{text}");
}

#[test]
fn a_ragged_batch_whose_sizes_do_not_fit_its_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.enable_ragged_batch_dumping::<Ragged>(true);
    let too_long = Value::opaque(Ragged {
        data: TensorData::new(vec![0.0f32; 15], [3, 5]),
        sizes: vec![3, 6, 1],
    });
    assert_eq!(
        d.add_tensor_data("r", too_long, json())
            .unwrap_err()
            .to_string(),
        "Invalid ragged batch: shape [3, 5], num_batch_dims 1, non_uniform_dim 1, 3 sample \
         sizes: one sample size per sample, each at most the padded size"
    );
}
