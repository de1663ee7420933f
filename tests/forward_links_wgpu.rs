//! Forward links on CubeCL's real device thread (`Autodiff<Profiled<Wgpu>>` on Mesa's
//! lavapipe): tensors are known by their buffers' memory ids, and the two-module model's
//! backward and optimizer ops are linked as on NdArray (`tests/forward_links.rs`).
#![cfg(feature = "wgpu")]

use burn::backend::{Autodiff, Wgpu};
use burn_profiled::Profiled;

#[path = "forward_links/model.rs"]
mod model;

#[test]
fn the_two_modules_backward_and_optimizer_ops_are_linked_as_on_ndarray() {
    let run = model::trained::<Autodiff<Profiled<Wgpu>>>(&Default::default(), 2);
    model::check_backward(&run.rows);
    model::check_optimizer(&run.rows);
    model::check_modules(&run.rows, &run.modules);
    model::check_flows(&run.rows, &run.trace);
}
