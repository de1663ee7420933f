//! A fused block's numerics (`[numerics]`): each op of the block is recorded under its
//! op-table name (`float_exp`), in the block's order, so that `burn-profiled numerics` aligns
//! it with the same op of an unfused run; with the fingerprints of its outputs that left the
//! block, read from the block's handles after it ran. An op whose outputs stayed in the
//! block's registers is recorded with none: aligned, not compared.

use burn_cubecl::{CubeBackend, CubeRuntime};
use burn_cubecl_fusion::CubeFusionHandle;
use burn_fusion::stream::Context;
use burn_ir::{BackendIr, TensorHandle, TensorId};

use super::block_io::BlockIo;
use crate::op_numerics::{Held, Kind};
use crate::probe::{self, Op};

/// The backend the block's tensors are read through: CubeCL reads a handle by its own dtype.
type ReadBackend<R> = CubeBackend<R, f32, i32, u32>;

/// Records the block's outputs, as `wanted` says, in the phase the block runs in.
pub(super) fn record<R: CubeRuntime>(
    io: &BlockIo,
    context: &Context<CubeFusionHandle<R>>,
    wanted: burn_profiled_core::sinks::numerics::Wanted,
) {
    for op in io.op_tensors() {
        // (A tensor dropped is IR, not a backend op.)
        if op.table_name.is_empty() || op.table_name == "drop" {
            continue;
        }
        let outputs: Vec<_> = op
            .outputs
            .iter()
            .filter_map(|id| held(context, id))
            .collect();
        let inputs: Vec<_> = op
            .inputs
            .iter()
            .filter_map(|id| held(context, id))
            .collect();
        let input_shapes = op
            .inputs
            .iter()
            .filter_map(|id| context.tensors.get(id))
            .map(|tensor| tensor.shape.as_slice().to_vec())
            .collect();
        let name = Op::named(&op.table_name);
        probe::record_numerics((name, 0, true), wanted, (input_shapes, inputs), outputs);
    }
}

/// The tensor of relative id `id`, when the block left it in global memory.
fn held<R: CubeRuntime>(
    context: &Context<CubeFusionHandle<R>>,
    id: &TensorId,
) -> Option<Held<ReadBackend<R>>> {
    let tensor = context.tensors.get(id)?;
    let handle = TensorHandle {
        handle: context.handles.get_handle_ref(&tensor.id)?.clone(),
        shape: tensor.shape.clone(),
    };
    Some(match Kind::of(tensor.dtype) {
        Kind::Float => Held::Float(ReadBackend::<R>::float_tensor(handle)),
        Kind::Int => Held::Int(ReadBackend::<R>::int_tensor(handle)),
        Kind::Bool => Held::Bool(ReadBackend::<R>::bool_tensor(handle)),
        Kind::Quantized => return None,
    })
}
