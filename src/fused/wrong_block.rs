//! A fusion bug on purpose, for tests of the numerics comparison: the output of one fused
//! block, chosen by its place among the blocks run from now on, is scaled by `1 + 1e-3` after
//! the block ran, as a wrong fused kernel would compute it. Everything else is CubeCL's own.

use std::sync::atomic::{AtomicI64, Ordering};

use burn_backend::ops::FloatTensorOps;
use burn_cubecl::CubeRuntime;
use burn_cubecl_fusion::CubeFusionHandle;
use burn_fusion::stream::Context;
use burn_ir::TensorId;

/// The blocks still to run before the wrong one; negative: none is wrong.
static BLOCKS_BEFORE: AtomicI64 = AtomicI64::new(-1);

/// Makes the `nth` fused block run from now on (0: the next) wrong by `1e-3` relative: its
/// last output (the last tensor its ops wrote) is scaled by `1 + 1e-3` once it ran. A
/// programming aid for tests of `burn-profiled numerics`, not for profiling.
#[doc(hidden)]
pub fn make_block_wrong(nth: u32) {
    BLOCKS_BEFORE.store(i64::from(nth), Ordering::Relaxed);
}

/// Called after each block ran, with the relative id of its last output: scales it when it is
/// the block chosen. Returns whether it did.
pub(super) fn after_block<R: CubeRuntime>(
    context: &mut Context<CubeFusionHandle<R>>,
    last_write: Option<TensorId>,
) -> bool {
    if BLOCKS_BEFORE.load(Ordering::Relaxed) < 0
        || BLOCKS_BEFORE.fetch_sub(1, Ordering::Relaxed) != 0
    {
        return false;
    }
    type Cube<R> = burn_cubecl::CubeBackend<R, f32, i32, u32>;
    let Some(tensor) = last_write.and_then(|id| context.tensors.get(&id)).cloned() else {
        return false;
    };
    if context.handles.get_handle_ref(&tensor.id).is_none() || !tensor.dtype.is_float() {
        return false;
    }
    let read = burn_ir::TensorIr {
        status: burn_ir::TensorStatus::ReadOnly,
        ..tensor.clone()
    };
    let output = context.handles.get_float_tensor::<Cube<R>>(&read);
    let wrong = Cube::<R>::float_mul_scalar(output, (1.0 + 1e-3f32).into());
    context
        .handles
        .register_float_tensor::<Cube<R>>(&tensor.id, wrong);
    true
}
