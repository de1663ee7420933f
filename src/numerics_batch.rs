//! `check_finite` without a sync per op, on backends whose ops return before their work ran
//! (CubeCL's, fused or not): each float output's sum is reduced on the device as the op
//! returns, and the sums of up to [`BATCH`] ops are read together, in one transfer, when the
//! batch is full or the step ends ([`numerics::flush_with`]). The ops of a batch keep their
//! tensors until it is read: the outputs of the first op whose sum is not finite are then read
//! whole, as the op path does it ([`record_read`](crate::op_numerics::record_read)).
//!
//! On NdArray, whose ops have run when they return, each sum is read as its op returns: that
//! costs less there than holding every tensor of a batch.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use burn_backend::{Backend, DType, TensorMetadata};
use burn_profiled_core::sinks::numerics::{self, CalledAt, Input};
use burn_std::FloatDType;

use crate::op_numerics::{Held, Replay};
use crate::probe::Op;

/// The most ops whose sums are read in one transfer.
pub(crate) const BATCH: usize = 64;

/// An op whose outputs' sums are not read yet.
pub(crate) struct Deferred<B: Backend> {
    pub(crate) at: CalledAt,
    pub(crate) op: &'static Op,
    pub(crate) stack: u32,
    pub(crate) inputs: Vec<Input>,
    pub(crate) held: Vec<Held<B>>,
    pub(crate) outputs: Vec<Held<B>>,
    pub(crate) replay: Option<Replay>,
}

struct Batch<B: Backend> {
    /// The ops, each with how many of `sums` are its.
    ops: Vec<(Deferred<B>, usize)>,
    sums: Vec<B::FloatTensorPrimitive>,
}

impl<B: Backend> Default for Batch<B> {
    fn default() -> Self {
        Batch {
            ops: Vec::new(),
            sums: Vec::new(),
        }
    }
}

/// One backend's batch, and how to read it.
struct Entry {
    batch: Box<dyn Any + Send>,
    flush: fn(),
    asynchronous: bool,
}

impl Entry {
    /// `B`'s batch, empty.
    fn new<B: Backend>(asynchronous: bool) -> Self {
        Entry {
            batch: Box::new(Batch::<B>::default()),
            flush: flush::<B>,
            asynchronous,
        }
    }
}

/// The batches, by backend type.
static BATCHES: Mutex<Option<HashMap<TypeId, Entry>>> = Mutex::new(None);

/// Whether `backend`'s ops return before their work is done: CubeCL's backends, fused or not
/// (Burn names them `cubecl<..>`, `fusion<..>`).
pub(crate) fn runs_asynchronously(backend: &str) -> bool {
    backend.contains("cubecl<") || backend.contains("fusion<")
}

/// Whether `B`'s ops are checked in batches: `B` runs asynchronously (Burn names it
/// `cubecl<..>` or `fusion<..>`). Asked once per backend type; `outputs` tell the device.
pub(crate) fn deferred<B: Backend>(outputs: &[Held<B>]) -> bool {
    let mut batches = BATCHES.lock().unwrap_or_else(PoisonError::into_inner);
    let batches = batches.get_or_insert_with(HashMap::new);
    if let Some(entry) = batches.get(&TypeId::of::<B>()) {
        return entry.asynchronous;
    }
    let Some(device) = outputs.first().map(Held::device) else {
        return false;
    };
    // Read at each step's end, and when the numerics stop.
    numerics::flush_with(flush_all);
    let entry = Entry::new::<B>(runs_asynchronously(&B::name(&device)));
    batches
        .entry(TypeId::of::<B>())
        .or_insert(entry)
        .asynchronous
}

/// Queues `op`'s check: its float outputs' sums are reduced now, on the device, and read with
/// the batch's.
pub(crate) fn push<B: Backend>(op: Deferred<B>) {
    let sums: Vec<B::FloatTensorPrimitive> = op
        .outputs
        .iter()
        .filter_map(|output| match output {
            Held::Float(tensor) => {
                let sum = B::float_sum(tensor.clone());
                Some(match tensor.dtype() {
                    DType::F32 => sum,
                    _ => B::float_cast(sum, FloatDType::F32),
                })
            }
            _ => None,
        })
        .collect();
    if sums.is_empty() {
        return;
    }
    let full = {
        let mut batches = BATCHES.lock().unwrap_or_else(PoisonError::into_inner);
        let batches = batches.get_or_insert_with(HashMap::new);
        let entry = (batches.entry(TypeId::of::<B>())).or_insert_with(|| Entry::new::<B>(true));
        let Some(batch) = entry.batch.downcast_mut::<Batch<B>>() else {
            return;
        };
        batch.ops.push((op, sums.len()));
        batch.sums.extend(sums);
        (batch.ops.len() >= BATCH).then(|| std::mem::take(batch))
    };
    if let Some(batch) = full {
        check(batch);
    }
}

/// Reads every backend's batch (the session's step ends).
pub(crate) fn flush_all() {
    let flushes: Vec<fn()> = {
        let batches = BATCHES.lock().unwrap_or_else(PoisonError::into_inner);
        let entries = batches.iter().flat_map(HashMap::values);
        entries.map(|entry| entry.flush).collect()
    };
    for flush in flushes {
        flush();
    }
}

fn flush<B: Backend>() {
    let batch = {
        let mut batches = BATCHES.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = batches
            .as_mut()
            .and_then(|batches| batches.get_mut(&TypeId::of::<B>()));
        let batch = entry.and_then(|entry| entry.batch.downcast_mut::<Batch<B>>());
        batch.map(std::mem::take)
    };
    if let Some(batch) = batch {
        check(batch);
    }
}

/// Reads a batch's sums in one transfer; the first op with one that is not finite is read
/// whole and recorded when its outputs hold a NaN or an Inf.
fn check<B: Backend>(batch: Batch<B>) {
    if batch.sums.is_empty() {
        return;
    }
    let sums = B::float_cat(batch.sums, 0);
    let read = burn_backend::try_read_sync(B::float_into_data(sums));
    // A failed read resurfaces where the user reads.
    let Some(Ok(data)) = read else {
        return;
    };
    let sums: Vec<f32> = data.iter::<f32>().collect();
    let mut at = 0;
    for (op, count) in batch.ops {
        let finite = sums.get(at..at + count).is_some_and(|sums| {
            // (A sum past f32's range is read whole below, and not reported.)
            sums.iter().all(|sum| sum.is_finite())
        });
        at += count;
        if finite {
            continue;
        }
        if !numerics::wanted().check_finite() {
            return;
        }
        let Deferred {
            at: called,
            op,
            stack,
            inputs,
            held,
            outputs,
            replay,
        } = op;
        let outputs: Vec<_> = outputs.into_iter().filter_map(Held::read).collect();
        if outputs.iter().all(crate::op_numerics::finite) {
            continue;
        }
        crate::op_numerics::record_read(
            called,
            (op, stack),
            (inputs, held, replay),
            &outputs,
            Vec::new(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeros<B: Backend>() -> Vec<Held<B>> {
        let device = Default::default();
        let tensor = B::float_zeros([2].into(), &device, FloatDType::F32);
        vec![Held::Float(tensor)]
    }

    /// NdArray's sums are read as its ops return; CubeCL's wait for a batch.
    #[test]
    fn only_asynchronous_backends_defer_their_checks() {
        #[cfg(feature = "ndarray")]
        assert!(!deferred(&zeros::<burn::backend::NdArray>()));
        #[cfg(feature = "wgpu")]
        assert!(deferred(&zeros::<burn::backend::Wgpu>()));
    }
}
