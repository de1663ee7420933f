//! A fused block as an op: CubeCL's optimization, run inside the probe under a name that says
//! what it fused, in the phase of the thread that registered its ops.

use burn_cubecl::{CubeBackend, CubeRuntime};
use burn_cubecl_fusion::optim::{CubeOptimization, CubeOptimizationState};
use burn_cubecl_fusion::{CubeFusionHandle, FallbackOperation};
use burn_fusion::stream::{Context, OrderedExecution};
use burn_fusion::{NumOperations, Optimization, UnfusedOp};
use burn_ir::TensorId;
use serde::{Deserialize, Serialize};

use super::ProfiledCubeRuntime;
use super::block_identity;
use super::block_io::BlockIo;
use super::block_numerics;
use super::registration;
use crate::context::fallback::{self, FallbackRun};
use crate::context::phase;
use crate::probe::{self, Op};
use burn_profiled_core::op_names as names;

/// The backend a block syncs under per-op sync: CubeCL's sync does not depend on the element
/// types.
type SyncBackend<R> = CubeBackend<R, f32, i32, u32>;

/// One fused block of [`ProfiledCubeRuntime`]: CubeCL's optimization, reported as an op named
/// `fused <kind>[<ops>]` each time it runs.
pub struct FusedBlock<R: CubeRuntime> {
    inner: CubeOptimization<R>,
    io: BlockIo,
    op: &'static Op,
    device: R::CubeDevice,
}

/// A [`FusedBlock`] stored by burn-fusion's plan cache: CubeCL's state and what the block
/// fused.
#[derive(Serialize, Deserialize, Debug)]
pub struct FusedBlockState {
    inner: CubeOptimizationState,
    io: BlockIo,
}

fn kind<R: CubeRuntime>(inner: &CubeOptimization<R>) -> &'static str {
    match inner {
        CubeOptimization::ElementWise(_) => "elementwise",
        CubeOptimization::Matmul(_) => "matmul",
        CubeOptimization::Reduce(_) => "reduce",
        CubeOptimization::ReduceBroadcasted(_) => "reduce_broadcasted",
    }
}

impl<R: CubeRuntime> FusedBlock<R> {
    pub(super) fn new(inner: CubeOptimization<R>, io: BlockIo, device: R::CubeDevice) -> Self {
        let ops: Vec<&str> = io.ops.iter().map(String::as_str).collect();
        let op = Op::named(&names::block_label(kind(&inner), &ops));
        FusedBlock {
            inner,
            io,
            op,
            device,
        }
    }

    /// The block's name in the op table and in NVTX: `fused elementwise[add, mul, exp]`.
    pub fn name(&self) -> &'static str {
        self.op.name()
    }

    /// The same four arms as CubeCL's own `Optimization` impl (`burn-cubecl/src/fusion.rs`),
    /// with fallbacks taken from this runtime's execution.
    fn run(
        &mut self,
        context: &mut Context<CubeFusionHandle<R>>,
        execution: &OrderedExecution<ProfiledCubeRuntime<R>>,
    ) {
        // Autotune's trials run on forks of the context: another address.
        let block_context = std::ptr::from_ref::<Context<CubeFusionHandle<R>>>(context) as usize;
        let fallback = |index| -> Box<dyn FallbackOperation<R>> {
            Box::new(Fallback {
                op: execution.operation_within_optimization(index),
                block_context,
            })
        };
        match &mut self.inner {
            CubeOptimization::ElementWise(op) => op.execute(context),
            CubeOptimization::Matmul(op) => op.execute(context, fallback),
            CubeOptimization::Reduce(op) => op.execute(context, fallback),
            CubeOptimization::ReduceBroadcasted(op) => op.execute(context, fallback),
        }
    }
}

/// An op of a block that the block runs unfused (a matmul or reduce CubeCL does not fuse),
/// for the block when given the block's context (`block_context`, its address), else as one of
/// autotune's trial runs ([`fallback`](crate::context::fallback)).
struct Fallback<R: CubeRuntime> {
    op: UnfusedOp<ProfiledCubeRuntime<R>>,
    block_context: usize,
}

impl<R: CubeRuntime> FallbackOperation<R> for Fallback<R> {
    fn run(&self, context: &mut Context<CubeFusionHandle<R>>) {
        let run = match std::ptr::from_ref(context) as usize == self.block_context {
            true => FallbackRun::Block,
            false => FallbackRun::Trial,
        };
        fallback::run_as(run, || self.op.execute(&mut context.handles));
    }
}

impl<R: CubeRuntime> core::fmt::Debug for FusedBlock<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("FusedBlock").field(&self.name()).finish()
    }
}

impl<R: CubeRuntime> NumOperations for FusedBlock<R> {
    fn len(&self) -> usize {
        self.inner.len()
    }

    fn name(&self) -> &'static str {
        self.inner.name()
    }
}

impl<R: CubeRuntime> Optimization<ProfiledCubeRuntime<R>> for FusedBlock<R> {
    fn execute(
        &mut self,
        context: &mut Context<CubeFusionHandle<R>>,
        execution: &OrderedExecution<ProfiledCubeRuntime<R>>,
    ) {
        let flags = probe::flags();
        if flags == 0 {
            return self.run(context, execution);
        }
        let phase_of = |write: Option<TensorId>| {
            let tensor = context.tensors.get(&write?)?;
            Some(registration::phase_of(tensor.id))
        };
        let registered_in = phase_of(self.io.first_write).unwrap_or_else(phase::current);
        // The ops after it were registered after its last op.
        registration::block_runs(phase_of(self.io.last_write).unwrap_or(registered_in));
        // The fusion thread has no ranges of its own: the block's phase is its phase while it
        // runs (its fallbacks' too).
        phase::inheriting(registered_in, || {
            let device = self.device.clone();
            let io = &self.io;
            let args = || {
                io.shapes(context)
                    .into_iter()
                    .map(|shape| probe::Arg::Tensor(shape, None))
                    .collect()
            };
            // Read before and after the block's guard: the reads are not the block's time.
            let numerics = crate::numerics_path::numerics_wanted(flags)
                .map(|wanted| (wanted, block_numerics::inputs_before(io, context, wanted)));
            {
                let tensors = io.reads_and_writes();
                let (reads, writes) = match &tensors {
                    Some((reads, writes)) => (Some(reads.as_slice()), Some(writes.as_slice())),
                    None => (None, None),
                };
                let mut op = probe::op::<SyncBackend<R>>(
                    self.op,
                    flags,
                    || Some(device),
                    args,
                    |ids| block_identity::collect(context, reads, true, ids),
                );
                op.counted_work(|| io.work(context));
                let last_write = io.last_write;
                self.run(context, execution);
                super::wrong_block::after_block(context, last_write);
                op.made(|ids| block_identity::collect(context, writes, false, ids));
            }
            if let Some((wanted, before)) = numerics {
                block_numerics::record(&self.io, context, wanted, before);
            }
        });
    }

    fn to_state(&self) -> FusedBlockState {
        FusedBlockState {
            inner: self.inner.to_opt_state(),
            io: self.io.clone(),
        }
    }

    fn from_state(device: &R::CubeDevice, state: FusedBlockState) -> Self {
        let inner = <CubeOptimization<R> as Optimization<
            burn_cubecl::fusion::FusionCubeRuntime<R>,
        >>::from_state(device, state.inner);
        FusedBlock::new(inner, state.io, device.clone())
    }
}
