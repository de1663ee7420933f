//! Without an NVTX tool (no Nsight Systems, no recorder: this binary installs none), op ranges
//! switched on keep the setting and cost nothing more: no op pushes a range, and none queues
//! one on an attached launch thread, where each queued task would be work for the device
//! thread's queue.

use std::sync::atomic::{AtomicUsize, Ordering};

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::{LaunchThread, Profiled, probe};

static QUEUED: AtomicUsize = AtomicUsize::new(0);

#[test]
fn op_ranges_without_an_nvtx_tool_queue_nothing_on_an_attached_launch_thread() {
    assert!(
        std::env::var_os("NVTX_INJECTION64_PATH").is_none(),
        "this test needs a process without an NVTX tool: unset NVTX_INJECTION64_PATH"
    );
    let launch = LaunchThread::new::<NdArray>(Default::default(), "stand-in", |task| {
        task();
        Ok(())
    })
    .with_queue(|task| {
        QUEUED.fetch_add(1, Ordering::Relaxed);
        task.run()
    });
    let attached = launch.attach().expect("the stand-in has a queue");

    probe::set_op_ranges(true);
    assert!(probe::op_ranges(), "the setting is kept");
    let device = Default::default();
    let sum = (Tensor::<Profiled<NdArray>, 1>::ones([4], &device) + 1.0)
        .sum()
        .into_scalar();
    probe::set_op_ranges(false);
    drop(attached);

    assert_eq!(sum, 8.0);
    assert_eq!(
        QUEUED.load(Ordering::Relaxed),
        0,
        "ops queued range tasks that no NVTX tool takes"
    );
}
