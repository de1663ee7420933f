//! A fused block's numerics (`[numerics]`): each op of the block is recorded under its
//! op-table name (`float_exp`), in the block's order, so that `burn-profiled numerics` aligns
//! it with the same op of an unfused run; with the fingerprints of its outputs that left the
//! block, read from the block's handles after it ran. An op whose outputs stayed in the
//! block's registers is recorded with none: aligned, not compared.
//!
//! Each op's inputs are linked to the ops that made them: an earlier op of the block by its
//! tensor's id, a tensor from outside the block by its fingerprint, copied before the block
//! ran (a block may write its outputs over its inputs). The tensors are read with a batch
//! ([`numerics_batch`](crate::numerics_batch)): no sync per block.

use std::collections::HashMap;

use burn_cubecl::{CubeBackend, CubeRuntime};
use burn_cubecl_fusion::CubeFusionHandle;
use burn_fusion::stream::Context;
use burn_ir::{BackendIr, TensorHandle, TensorId};
use burn_profiled_core::sinks::numerics::{self, Input, Source, Wanted};

use super::block_io::BlockIo;
use crate::device_prints::DevicePrint;
use crate::numerics_batch::{DeferredPrints, InputPrint};
use crate::op_numerics::{Held, Kind, Seen};
use crate::probe::Op;

/// The backend the block's tensors are read through: CubeCL reads a handle by its own dtype.
type ReadBackend<R> = CubeBackend<R, f32, i32, u32>;

/// The tensors the block reads from outside, by relative id, flattened (a copy where a cast
/// is needed) before it runs; none unless `wanted` asks for fingerprints.
pub(super) fn inputs_before<R: CubeRuntime>(
    io: &BlockIo,
    context: &Context<CubeFusionHandle<R>>,
    wanted: Wanted,
) -> HashMap<TensorId, DevicePrint<ReadBackend<R>>> {
    let mut prints = HashMap::new();
    if !wanted.fingerprints() {
        return prints;
    }
    let mut written: Vec<TensorId> = Vec::new();
    for op in io.op_tensors() {
        for id in &op.inputs {
            if written.contains(id) || prints.contains_key(id) {
                continue;
            }
            if let Some(print) = held(context, id)
                .as_ref()
                .and_then(DevicePrint::prepare_copy)
            {
                prints.insert(*id, print);
            }
        }
        written.extend(&op.outputs);
    }
    prints
}

/// Records the block's outputs, as `wanted` says, in the phase the block runs in; `before`
/// holds what [`inputs_before`] prepared.
pub(super) fn record<R: CubeRuntime>(
    io: &BlockIo,
    context: &Context<CubeFusionHandle<R>>,
    wanted: Wanted,
    mut before: HashMap<TensorId, DevicePrint<ReadBackend<R>>>,
) {
    // The record that made each tensor the block wrote, by relative id.
    let mut made_by: HashMap<TensorId, u64> = HashMap::new();
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
        let held_inputs: Vec<_> = match wanted.check_finite() {
            true => op
                .inputs
                .iter()
                .filter_map(|id| held(context, id))
                .collect(),
            false => Vec::new(),
        };
        let name = Op::named(&op.table_name);
        let shape = |id: &TensorId| Some(context.tensors.get(id)?.shape.as_slice().to_vec());
        let seq = match wanted.fingerprints() {
            // Read with a batch, recorded then.
            true => numerics::CalledAt::reserved().and_then(|at| {
                let seq = at.seq();
                let inputs = op.inputs.iter().filter_map(|id| {
                    let input = match (made_by.get(id), before.get(id)) {
                        (Some(seq), _) => InputPrint::Known(Source::Record(*seq)),
                        (None, Some(print)) => InputPrint::Read(print.clone()),
                        (None, None) => InputPrint::Known(Source::Unknown),
                    };
                    Some((shape(id)?, input))
                });
                crate::numerics_batch::push_prints(DeferredPrints {
                    at,
                    op: name,
                    stack: 0,
                    inputs: inputs.collect(),
                    outputs: outputs.iter().filter_map(DevicePrint::prepare).collect(),
                    held: held_inputs,
                    held_outputs: match wanted.check_finite() {
                        true => outputs,
                        false => Vec::new(),
                    },
                    replay: None,
                });
                seq
            }),
            // `check_finite` alone: the outputs' sums.
            false => {
                let inputs = op.inputs.iter().filter_map(|id| {
                    let source = made_by
                        .get(id)
                        .map_or(Source::Unknown, |s| Source::Record(*s));
                    Some(Input {
                        shape: shape(id)?,
                        source,
                    })
                });
                crate::numerics_path::record_numerics(
                    (name, 0, true),
                    wanted,
                    (inputs.collect(), held_inputs, None),
                    Seen::unidentified(outputs),
                )
            }
        };
        for id in &op.outputs {
            made_by.extend(seq.map(|seq| (*id, seq)));
            // A tensor written again in the block is no longer what was read before it.
            before.remove(id);
        }
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
