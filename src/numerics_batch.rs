//! `[numerics]` without a sync per op, on backends whose ops return before their work ran
//! (CubeCL's, fused or not): what is read of an op is prepared on the device as the op returns,
//! and what up to [`BATCH`] ops prepared is read together, in one transfer, when the
//! batch is full or the step ends ([`numerics::flush_with`]).
//!
//! - `check_finite` alone: each float output's sum. The ops of a batch keep their tensors
//!   until it is read: the outputs of the first op whose sum is not finite are then read
//!   whole, as the op path does it ([`record_read`](crate::op_numerics::record_read)).
//! - Fingerprints: each output, and each input that is linked to its producer by content,
//!   flattened to f32 and read whole ([`DevicePrint`]), fingerprinted on the host; the op's
//!   `seq` is reserved when it runs and its record made when the batch is read. A batch is
//!   also read once it holds [`MAX_NUMBERS`] numbers.
//!
//! On NdArray, whose ops have run when they return, each sum is read as its op returns: that
//! costs less there than holding every tensor of a batch.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use burn_backend::{Backend, DType, TensorMetadata};
use burn_profiled_core::sinks::numerics::{self, CalledAt, Input, Source};
use burn_std::FloatDType;

use crate::device_prints::DevicePrint;
use crate::op_numerics::{Held, Replay};
use crate::probe::Op;

/// The most ops whose sums are read in one transfer.
pub(crate) const BATCH: usize = 64;

/// The most numbers a batch holds before it is read (64 MiB of f32: small tensors read
/// whole are held until then).
const MAX_NUMBERS: usize = 1 << 24;

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

/// An op whose tensors are read with a batch, its record made then.
pub(crate) struct DeferredPrints<B: Backend> {
    /// Where it ran, with its `seq` reserved then.
    pub(crate) at: CalledAt,
    pub(crate) op: &'static Op,
    pub(crate) stack: u32,
    /// Each tensor input's shape and source.
    pub(crate) inputs: Vec<(Vec<usize>, InputPrint<B>)>,
    pub(crate) outputs: Vec<DevicePrint<B>>,
    /// Its inputs and outputs, read whole only when it made the first NaN or Inf or is the
    /// call `capture` names (its outputs then fingerprinted on the host, exactly).
    pub(crate) held: Vec<Held<B>>,
    pub(crate) held_outputs: Vec<Held<B>>,
    pub(crate) replay: Option<Replay>,
}

/// What links an input of a deferred op to its producer.
pub(crate) enum InputPrint<B: Backend> {
    /// Known when the op ran (an identity, an earlier op of the same fused block, or none).
    Known(Source),
    /// Its content: its fingerprint, taken when the batch is read.
    Read(DevicePrint<B>),
}

/// What a batch holds of one op, with how many of the batch's numbers are its.
enum Queued<B: Backend> {
    /// `check_finite`: its float outputs' sums.
    Check(Deferred<B>, usize),
    /// Fingerprints: its inputs' and outputs' statistics.
    Prints(DeferredPrints<B>, usize),
}

struct Batch<B: Backend> {
    ops: Vec<Queued<B>>,
    /// What the ops prepared (sums, flattened tensors), in order, read as one tensor.
    prepared: Vec<B::FloatTensorPrimitive>,
}

impl<B: Backend> Default for Batch<B> {
    fn default() -> Self {
        Batch {
            ops: Vec::new(),
            prepared: Vec::new(),
        }
    }
}

impl<B: Backend> Queued<B> {
    /// How many of its batch's numbers are its.
    fn count(&self) -> usize {
        match self {
            Queued::Check(_, count) | Queued::Prints(_, count) => *count,
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
    /// `B`'s batch, empty, read at each step's end and when the numerics stop.
    fn new<B: Backend>(asynchronous: bool) -> Self {
        numerics::flush_with(flush_all);
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
    let count = sums.len();
    queue(Queued::Check(op, count), sums);
}

/// Queues `op`'s record: its tensors, prepared already, are read with the
/// batch's.
pub(crate) fn push_prints<B: Backend>(mut op: DeferredPrints<B>) {
    let inputs = op.inputs.iter_mut().filter_map(|(_, input)| match input {
        InputPrint::Read(print) => Some(print),
        InputPrint::Known(_) => None,
    });
    let (mut count, mut prepared) = (0, Vec::new());
    for print in inputs.chain(op.outputs.iter_mut()) {
        count += print.len();
        prepared.extend(print.take());
    }
    queue(Queued::Prints(op, count), prepared);
}

thread_local! {
    /// Whether this thread's tensors may be read with the session thread's batch: set on
    /// burn's fusion threads, which run the work of every thread they serve in order, and on
    /// CubeCL's device threads.
    static READ_WITH_THE_SESSION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Lets this thread's ops be read with the session thread's batch (a fusion thread, CubeCL's
/// device thread).
#[cfg_attr(
    not(any(feature = "fusion", feature = "wgpu", feature = "cuda")),
    allow(dead_code)
)]
pub(crate) fn read_with_the_session() {
    READ_WITH_THE_SESSION.set(true);
}

fn queue<B: Backend>(op: Queued<B>, prepared: Vec<B::FloatTensorPrimitive>) {
    let session = numerics::session_thread();
    let elsewhere = session.is_some_and(|thread| thread != std::thread::current().id());
    if elsewhere && !READ_WITH_THE_SESSION.get() {
        // Another thread's tensors (a data loader's, on CubeCL's unfused backends) are read on
        // it, after its own work: read at the session's step end, on the session's thread,
        // two of the train example's batches once came back zeros on lavapipe.
        let ops = vec![op];
        return check(Batch { ops, prepared });
    }
    let full = {
        let mut batches = BATCHES.lock().unwrap_or_else(PoisonError::into_inner);
        let batches = batches.get_or_insert_with(HashMap::new);
        let entry = (batches.entry(TypeId::of::<B>())).or_insert_with(|| Entry::new::<B>(true));
        let Some(batch) = entry.batch.downcast_mut::<Batch<B>>() else {
            return;
        };
        batch.ops.push(op);
        batch.prepared.extend(prepared);
        let numbers: usize = batch.ops.iter().map(Queued::count).sum();
        let full = batch.ops.len() >= BATCH || numbers >= MAX_NUMBERS;
        full.then(|| std::mem::take(batch))
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

/// Reads what a batch's ops prepared in one transfer, then, op by op in order: records the deferred
/// fingerprints, and reads whole, and records, the first op whose sum is not finite when its
/// outputs hold a NaN or an Inf.
fn check<B: Backend>(batch: Batch<B>) {
    let numbers: Vec<f32> = match batch.prepared.is_empty() {
        true => Vec::new(),
        false => {
            let prepared = B::float_cat(batch.prepared, 0);
            let read = burn_backend::try_read_sync(B::float_into_data(prepared));
            // A failed read resurfaces where the user reads.
            let Some(Ok(data)) = read else {
                return;
            };
            data.iter::<f32>().collect()
        }
    };
    let mut at = 0;
    for queued in batch.ops {
        let count = queued.count();
        let Some(numbers) = numbers.get(at..at + count) else {
            return;
        };
        at += count;
        match queued {
            Queued::Check(op, _) => check_sums(op, numbers),
            Queued::Prints(op, _) => record_prints(op, numbers),
        }
    }
}

/// `check_finite` of one op from its outputs' sums.
fn check_sums<B: Backend>(op: Deferred<B>, sums: &[f32]) {
    // (A sum past f32's range is read whole below, and not reported.)
    if sums.iter().all(|sum| sum.is_finite()) || !numerics::wanted().check_finite() {
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
        return;
    }
    crate::op_numerics::record_read(
        called,
        (op, stack),
        (inputs, held, replay),
        &outputs,
        Vec::new(),
    );
}

/// The record of one op whose fingerprints were prepared on the device, from their numbers.
fn record_prints<B: Backend>(op: DeferredPrints<B>, numbers: &[f32]) {
    let DeferredPrints {
        at: called,
        op,
        stack,
        inputs,
        outputs,
        held,
        held_outputs,
        replay,
    } = op;
    let mut numbers = numbers;
    let mut next = |print: &DevicePrint<B>| {
        let (mine, rest) = numbers.split_at(print.len().min(numbers.len()));
        numbers = rest;
        print.fingerprint(mine)
    };
    let inputs = inputs
        .into_iter()
        .map(|(shape, input)| Input {
            shape,
            source: match input {
                InputPrint::Known(source) => source,
                InputPrint::Read(print) => Source::Content(next(&print)),
            },
        })
        .collect();
    let prints = outputs.iter().map(next).collect();
    numerics::record_at(called, op, stack, inputs, (prints, Vec::new()), || {
        let mut read = crate::op_numerics::read_inputs(held, replay);
        let outputs = held_outputs.into_iter().filter_map(Held::read);
        let outputs = outputs.filter_map(|data| crate::op_numerics::fingerprint(&data));
        read.outputs = Some(outputs.collect());
        read
    });
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
