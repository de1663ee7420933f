//! Which tensors a fused block reads and makes, by the same identities as the ops fusion runs
//! unfused (`tensor_identity`): the buffer of each tensor's handle, with its shape, strides and
//! dtype, so that forward links and the graph of a step join blocks and unfused ops.

use burn_cubecl::CubeRuntime;
use burn_cubecl_fusion::CubeFusionHandle;
use burn_fusion::stream::Context;
use burn_ir::TensorId;

use crate::tensor_identity::{Identities, cube_buffer_identity};

/// The tensors of relative ids `ids` that hold a buffer in `context` into `identities`; with
/// `all`, one that holds none makes them incomplete (a block's input: each has one; a block's
/// output may be an intermediate value that never does).
pub(super) fn collect<R: CubeRuntime>(
    context: &Context<CubeFusionHandle<R>>,
    ids: Option<&[TensorId]>,
    all: bool,
    identities: &mut Identities,
) {
    let Some(ids) = ids else {
        identities.unknown();
        return;
    };
    for id in ids {
        let known = context.tensors.get(id).and_then(|tensor| {
            let handle = context.handles.get_handle_ref(&tensor.id)?;
            let identity =
                cube_buffer_identity(&handle.handle, &tensor.shape, &handle.strides, handle.dtype)?;
            Some((identity, tensor))
        });
        match known {
            Some((identity, tensor)) => identities.add_known(identity, &tensor.shape, tensor.dtype),
            None if all => identities.unknown(),
            None => {}
        }
    }
}
