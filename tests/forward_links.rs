//! Backward and optimizer ops linked to the forward ops they work for (`[stats]
//! forward_links`) on `Autodiff<Profiled<NdArray>>`, on a model of two modules, each in its user
//! range: `conv` with only a convolution, `head` with only linear layers.
//!
//! Statistics are process-wide: the tests take turns.

use std::sync::Mutex;

use burn::backend::{Autodiff, NdArray};
use burn_profiled::Profiled;

#[path = "forward_links/model.rs"]
mod model;

type B = Autodiff<Profiled<NdArray>>;

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn each_convolution_backward_op_works_for_the_conv_module_and_each_linear_one_for_the_head() {
    let _serial = serial();
    let run = model::trained::<B>(&Default::default(), 2);
    model::check_backward(&run.rows);
}

#[test]
fn adam_updates_each_parameter_for_the_module_that_read_it() {
    let _serial = serial();
    let run = model::trained::<B>(&Default::default(), 2);
    model::check_optimizer(&run.rows);
}

#[test]
fn the_time_per_module_adds_up_to_the_time_of_all_ops() {
    let _serial = serial();
    let run = model::trained::<B>(&Default::default(), 2);
    model::check_modules(&run.rows, &run.modules);
}

#[test]
fn the_timeline_has_a_fwdbwd_flow_from_its_forward_op_to_each_backward_op() {
    let _serial = serial();
    let run = model::trained::<B>(&Default::default(), 2);
    model::check_flows(&run.rows, &run.trace);
}
