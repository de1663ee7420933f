//! Op ranges nest inside user ranges, and sync on push/pop syncs the registered device.

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::nvtx::{self, RangeConfig};
use burn_profiled::{DeviceSync, Profiled, probe};
use nvtx_recorder::Message;

nvtx_recorder::install_static!();

#[test]
fn op_ranges_nest_inside_user_ranges_and_syncs_happen_before_push_and_pop() {
    type B = Profiled<NdArray>;
    let device = Default::default();
    // `Profiled`'s own `sync` is an op, so the syncs of the user ranges show as `sync` op ranges.
    let sync = DeviceSync::new::<B>(device);
    nvtx::enable(
        RangeConfig::new()
            .sync_on_push(sync.clone())
            .sync_on_pop(sync),
    );
    let x = Tensor::<B, 1>::from_floats([1.0, 2.0], &device);

    let tid = nvtx_recorder::current_tid();
    probe::set_op_ranges(true);
    nvtx::scope("forward", || {
        let _y = x.clone().exp();
    });
    probe::set_op_ranges(false);

    let events: Vec<String> = nvtx_recorder::events_of_thread(tid)
        .iter()
        .filter(|e| {
            !matches!(
                e.kind,
                nvtx_recorder::Kind::DomainCreate | nvtx_recorder::Kind::RegisterString
            )
        })
        .map(|e| {
            let text = match &e.message {
                Message::None => String::new(),
                m => m.text().unwrap_or_default().to_owned(),
            };
            format!(
                "{} {} {} {text}",
                e.kind,
                e.domain.as_deref().unwrap_or("-"),
                e.depth
            )
            .trim_end()
            .to_owned()
        })
        .collect();
    #[rustfmt::skip]
    assert_eq!(
        events,
        [
            "push burn 0 sync", "pop burn 0",   // sync on push
            "push - 0 forward",
            "push burn 0 float_exp", "pop burn 0",
            "push burn 0 sync", "pop burn 0",   // sync on pop
            "pop - 0",
        ]
    );
}
