//! Memory per block from the IR (`[memory] per_op`): each block's row allocates the bytes of
//! the tensors its ops output and frees those dropped, exactly from shapes and dtypes; the
//! live bytes follow them, and never exceed what the device's memory pools hold in use.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;
use serde_json::Value;

const MATRIX_BYTES: u64 = 64 * 64 * 4;

fn row<'a>(ops: &'a Value, op: &str) -> &'a Value {
    ops["rows"]
        .as_array()
        .expect("ops.json has rows")
        .iter()
        .find(|row| row["op"] == op)
        .unwrap_or_else(|| panic!("no row {op}: {ops}"))
}

#[test]
fn each_block_allocates_its_outputs_and_frees_its_drops_and_live_bytes_follow() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.stats.enabled = true;
    config.memory.per_op = true;
    config.memory.per_step = true;
    config.trace.enabled = true;
    let mut session = Session::start(config, &device, out.path());

    let in_use = |device: &Device| {
        device
            .memory_pool_usage()
            .expect("wgpu reports its memory pools")
            .bytes_in_use
    };
    let x = Tensor::<2>::from_data(TensorData::new(vec![0.5f32; 64 * 64], [64, 64]), &device);
    let y = x.clone().matmul(x.clone());
    let _ = y.clone().into_data();
    let pools = in_use(&device);
    assert_eq!(
        session.live_bytes(),
        Some(2 * MATRIX_BYTES),
        "x and x·x are alive"
    );
    assert!(
        2 * MATRIX_BYTES <= pools,
        "the pools hold at least those: {pools} B"
    );
    session.finish_iter().expect("no memory limit");

    drop(y);
    // x's last use: exp reads it `ReadWrite` and frees it, with no drop.
    let z = x.exp();
    let _ = z.clone().into_data();
    let pools = in_use(&device);
    assert_eq!(
        session.live_bytes(),
        Some(MATRIX_BYTES),
        "x·x dropped, x freed at its last use, exp(x) made"
    );
    assert!(
        MATRIX_BYTES <= pools,
        "the pools hold at least that: {pools} B"
    );
    session.finish_iter().expect("no memory limit");
    session.finish().expect("the run directory is written");

    let ops: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("ops.json")).unwrap())
            .unwrap();
    let matmul = row(&ops, "matmul");
    assert_eq!(matmul["alloc_bytes"], MATRIX_BYTES, "{matmul}");
    assert_eq!(matmul["peak_bytes"], 2 * MATRIX_BYTES, "{matmul}");
    let exp = row(&ops, "exp");
    assert_eq!(
        (&exp["alloc_bytes"], &exp["freed_bytes"]),
        (&MATRIX_BYTES.into(), &MATRIX_BYTES.into()),
        "{exp}"
    );
    let drop = row(&ops, "drop");
    assert_eq!(drop["freed_bytes"], MATRIX_BYTES, "{drop}");
    assert_eq!(drop["alloc_bytes"], 0, "{drop}");

    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("trace.json")).unwrap())
            .unwrap();
    let live: Vec<f64> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| {
            event["ph"] == "C"
                && event["name"]
                    .as_str()
                    .is_some_and(|name| name.starts_with("logical memory"))
        })
        .map(|event| event["args"]["live_bytes"].as_f64().unwrap())
        .collect();
    assert!(
        live.contains(&(2.0 * MATRIX_BYTES as f64)) && live.contains(&(MATRIX_BYTES as f64)),
        "the timeline's counter follows the live bytes: {live:?}"
    );
}
