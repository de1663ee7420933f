//! An op's numerics on the op path (`[numerics]`, Burn 0.21): what the op table's macro and
//! fused blocks call around an op under the `NUMERICS` switch. The inputs are collected before
//! the op takes them ([`numerics_start`]), the outputs after its guard ended
//! ([`numerics_end`]), and both handed to the numerics sink: read at once, or, for
//! `check_finite` on an asynchronous backend, in a batch ([`numerics_batch`](crate::numerics_batch)).

use burn_backend::Backend;
use burn_profiled_core::call_sites;

use crate::context::switches::{Flags, NUMERICS};
use crate::op_numerics::{Held, Replay, Seen};
use crate::probe::Op;
use crate::sinks::numerics;

/// What an op under the `NUMERICS` switch keeps from its start: what it is read for, and its
/// inputs: their identities, and the inputs themselves where they are to be read (for the
/// fingerprints that link the op to the ops that made them, where they have no identity, or
/// when its output is the first that is not finite). Holding an input keeps the op from
/// writing over it in place.
pub(crate) struct NumericsAtStart<B: Backend> {
    wanted: numerics::Wanted,
    inputs: Seen<B>,
}

/// The start of an op's numerics under `flags`: `collect` gathers the op's inputs, and is
/// called only when its outputs are to be read (`[numerics]`, in the steps it names).
#[inline(always)]
pub(crate) fn numerics_start<B: Backend>(
    flags: Flags,
    collect: impl FnOnce(&mut Seen<B>),
) -> Option<NumericsAtStart<B>> {
    if flags & NUMERICS == 0 {
        return None;
    }
    if crate::context::fallback::running() != crate::context::fallback::FallbackRun::None {
        // A fused block's fallback op: a trial is not the program's, and the block records
        // its own ops (`fused::block_numerics`).
        return None;
    }
    let wanted = numerics::wanted();
    if !wanted.any() {
        return None;
    }
    let mut inputs = Seen::new(wanted.fingerprints());
    collect(&mut inputs);
    if !wanted.check_finite() && !wanted.capture() && inputs.all_identified() {
        // Let go before the op runs: it may write over an input it alone holds.
        inputs.held.clear();
    }
    Some(NumericsAtStart { wanted, inputs })
}

/// The end of an op's numerics: its outputs read, fingerprinted or checked, and handed to the
/// numerics sink. An op that returned no tensor is not recorded.
#[inline(never)]
pub(crate) fn numerics_end<B: Backend>(
    op: &'static Op,
    start: Option<NumericsAtStart<B>>,
    outputs: impl FnOnce(&mut Seen<B>),
    replay: Option<Replay>,
) {
    let Some(start) = start else {
        return;
    };
    let NumericsAtStart { wanted, inputs } = start;
    let stack = call_sites::capture();
    let mut made = Seen::new(wanted.fingerprints());
    outputs(&mut made);
    if wanted.fingerprints() && crate::numerics_batch::deferred(&made.held) {
        return defer_prints((op, stack), wanted, inputs, made, replay);
    }
    let sources: Vec<numerics::Source> = match inputs.all_identified() {
        true => inputs
            .identities
            .iter()
            .flatten()
            .copied()
            .map(numerics::Source::Identity)
            .collect(),
        false => inputs
            .held
            .iter()
            .map(|held| {
                let read = || held.clone().read();
                let print = wanted.fingerprints().then(read).flatten();
                match print.as_ref().and_then(crate::op_numerics::fingerprint) {
                    Some(print) => numerics::Source::Content(print),
                    None => numerics::Source::Unknown,
                }
            })
            .collect(),
    };
    let linked = inputs.shapes.into_iter().zip(sources);
    let linked = linked
        .map(|(shape, source)| numerics::Input { shape, source })
        .collect();
    record_numerics(
        (op, stack, false),
        wanted,
        (linked, inputs.held, replay),
        made,
    );
}

/// Fingerprints on an asynchronous backend: the op's `seq` reserved now, its inputs' and
/// outputs flattened to f32 on the device, its record made when their batch is read
/// ([`numerics_batch`](crate::numerics_batch)). Inputs with identities are linked by them,
/// the others by their fingerprints; they are kept for a re-read only where
/// `check_finite` or `capture` may ask for them.
fn defer_prints<B: Backend>(
    (op, stack): (&'static Op, u32),
    wanted: numerics::Wanted,
    inputs: Seen<B>,
    made: Seen<B>,
    replay: Option<Replay>,
) {
    use crate::device_prints::DevicePrint;
    use crate::numerics_batch::InputPrint;
    let Some(at) = numerics::CalledAt::reserved() else {
        return;
    };
    let identified = inputs.all_identified();
    let reduce = |held: Option<&Held<B>>| match held.and_then(DevicePrint::prepare) {
        Some(print) => InputPrint::Read(print),
        None => InputPrint::Known(numerics::Source::Unknown),
    };
    let linked = (inputs.shapes.into_iter().enumerate())
        .map(|(i, shape)| {
            let input = match (identified, inputs.identities[i]) {
                (true, Some(identity)) => InputPrint::Known(numerics::Source::Identity(identity)),
                _ => reduce(inputs.held.get(i)),
            };
            (shape, input)
        })
        .collect();
    let keep = wanted.check_finite() || wanted.capture();
    crate::numerics_batch::push_prints(crate::numerics_batch::DeferredPrints {
        at,
        op,
        stack,
        inputs: linked,
        outputs: made.held.iter().filter_map(DevicePrint::prepare).collect(),
        held: if keep { inputs.held } else { Vec::new() },
        held_outputs: if keep { made.held } else { Vec::new() },
        replay,
    });
}

/// Whether an op that started `numerics` captures its arguments to be re-run on NdArray if it
/// makes the first NaN (`check_finite`) or is the call `[numerics] capture` names (in its
/// step), on another backend than NdArray.
#[cfg(feature = "ndarray")]
#[inline]
pub(crate) fn replay_wanted<B: Backend>(numerics: &Option<NumericsAtStart<B>>) -> bool {
    numerics
        .as_ref()
        .is_some_and(|start| start.wanted.check_finite() || start.wanted.capture())
        && crate::rerun::wanted::<B>()
}

/// What `[numerics]` wants of the ops running now under `flags`, when anything (a fused
/// block's, which reads its outputs itself).
#[cfg(feature = "fusion")]
pub(crate) fn numerics_wanted(flags: Flags) -> Option<numerics::Wanted> {
    Some(numerics::wanted()).filter(|wanted| flags & NUMERICS != 0 && wanted.any())
}

/// Reads `outputs` as `wanted` says (with fingerprints off, one number each: their sums, read
/// at once or, on an asynchronous backend, in a batch: [`numerics_batch`](crate::numerics_batch))
/// and hands `op`'s record to the numerics sink, with its `inputs` (shapes and sources); the
/// `held` inputs are read only when it made the first NaN or Inf. `stack` is its call stack
/// (0 without). An op with no output is recorded only when `unobserved` (an op inside a fused
/// block): others returned no tensor. Returns the record's `seq`, when it was recorded now.
pub(crate) fn record_numerics<B: Backend>(
    (op, stack, unobserved): (&'static Op, u32, bool),
    wanted: numerics::Wanted,
    (inputs, held, replay): (Vec<numerics::Input>, Vec<Held<B>>, Option<Replay>),
    outputs: Seen<B>,
) -> Option<u64> {
    let identities: Vec<u64> = outputs.identities.iter().flatten().copied().collect();
    let outputs = outputs.held;
    // Checked only: one number read per output (its sum), the data only when it is not
    // finite.
    if !wanted.fingerprints() {
        if crate::numerics_batch::deferred(&outputs) {
            crate::numerics_batch::push(crate::numerics_batch::Deferred {
                at: numerics::CalledAt::here(),
                op,
                stack,
                inputs,
                held,
                outputs,
                replay,
            });
            return None;
        }
        if outputs.iter().all(Held::sum_is_finite) {
            return None;
        }
    }
    let outputs: Vec<_> = outputs.into_iter().filter_map(Held::read).collect();
    if outputs.is_empty() && !unobserved
        || !wanted.fingerprints() && outputs.iter().all(crate::op_numerics::finite)
    {
        return None;
    }
    crate::op_numerics::record_read(
        numerics::CalledAt::here(),
        (op, stack),
        (inputs, held, replay),
        &outputs,
        identities,
    )
}
