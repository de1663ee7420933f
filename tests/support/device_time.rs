//! What the device-time tests share.

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::{Profiled, Session, stats};

/// A session asked for device time where CUPTI cannot record: it runs a step and finishes
/// with host times only (the op table without device columns, no device time in the summary).
pub fn session_keeps_host_times() {
    type B = Profiled<NdArray>;
    let mut config = RuntimeConfig::preset(Preset::Train);
    config.stats.enabled = true;
    config.stats.device_time = true;
    config.stopwatch.warmup_iters = 0;
    let out = tempfile::tempdir().unwrap();
    let device = Default::default();
    let mut session = Session::start::<B>(config, &device, out.path());
    let a = Tensor::<B, 2>::ones([4, 4], &device);
    let _ = (a.clone().matmul(a) + 1.0).into_data();
    session.finish_iter().unwrap();
    let snapshot = stats::snapshot();
    let summary = session.finish().unwrap();
    assert!(summary.device_time.is_none());
    assert!(!snapshot.has_device_time());
    let rows = snapshot.rows(stats::GroupBy::Op);
    let matmul = rows.iter().find(|row| row.op == "float_matmul");
    assert_eq!(matmul.map(|row| (row.calls, row.kernels)), Some((1, None)));
}
