//! A CubeCL fuser that also keeps what it fused: the ops' names for the block's label, and
//! the tensors the block reads and writes first.

use burn_cubecl::CubeRuntime;
use burn_cubecl_fusion::optim::CubeOptimization;
use burn_fusion::{FuserProperties, FuserStatus, OperationFuser};
use burn_ir::OperationIr;

use super::block::FusedBlock;
use super::block_io::{BlockIo, Fused};
use super::stall;
use burn_profiled_core::op_names as names;

pub(super) struct BlockFuser<R: CubeRuntime> {
    inner: Box<dyn OperationFuser<CubeOptimization<R>>>,
    fused: Vec<Fused>,
    device: R::CubeDevice,
}

impl<R: CubeRuntime> BlockFuser<R> {
    pub(super) fn new(
        inner: Box<dyn OperationFuser<CubeOptimization<R>>>,
        device: R::CubeDevice,
    ) -> Self {
        BlockFuser {
            inner,
            fused: Vec::new(),
            device,
        }
    }
}

impl<R: CubeRuntime> OperationFuser<FusedBlock<R>> for BlockFuser<R> {
    fn fuse(&mut self, operation: &OperationIr) {
        let before = self.inner.len();
        self.inner.fuse(operation);
        // CubeCL's matmul fuser counts its matmul from the start (`len` is its trace's plus
        // one, `burn-cubecl-fusion-0.21.0/src/optim/matmul/fuser.rs` line 146): the matmul it
        // takes leaves `len` as it was.
        let taken_uncounted =
            self.fused.len() < self.inner.len() && self.inner.status() != FuserStatus::Closed;
        if self.inner.len() > before || taken_uncounted {
            self.fused.push(Fused {
                name: names::op_name(operation),
                table_name: names::table_name(operation),
                inputs: operation.inputs().map(|tensor| tensor.id).collect(),
                outputs: operation.outputs().map(|tensor| tensor.id).collect(),
            });
        }
    }

    fn finish(&mut self) -> FusedBlock<R> {
        let inner = {
            let _closing = stall::fusion_thread_busy();
            self.inner.finish()
        };
        let fused = &self.fused[..burn_fusion::NumOperations::len(&inner).min(self.fused.len())];
        FusedBlock::new(inner, BlockIo::of(fused), self.device.clone())
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.fused.clear();
    }

    fn status(&self) -> FuserStatus {
        self.inner.status()
    }

    fn properties(&self) -> FuserProperties {
        self.inner.properties()
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn clone_dyn(&self) -> Box<dyn OperationFuser<FusedBlock<R>>> {
        Box::new(BlockFuser {
            inner: self.inner.clone_dyn(),
            fused: self.fused.clone(),
            device: self.device.clone(),
        })
    }
}
