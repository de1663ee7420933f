//! Per-op numerics (`[numerics]`): each op's output [`Fingerprint`]s, kept as the run's
//! [`OpRecord`]s for `numerics.jsonl`, and the first op whose output held a NaN or an Inf
//! ([`NonFinite`]).
//!
//! The edition reads each op's outputs (when [`wanted`] says so) and hands their fingerprints
//! to [`record`]; the session tells the step ([`set_step`]) and takes what was recorded at the
//! end ([`stop`]).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap;

use crate::call_sites;
use crate::config::{CheckFinite, NumericsSection};
use crate::context::op::Op;
use crate::context::phase;
use crate::context::switches::{self, NUMERICS};
use crate::dump::blob::Array;
use crate::numerics::{CapturedOp, Fingerprint, NonFinite, OpRecord};

/// [`WANTED`]'s bits.
const FINGERPRINTS: u8 = 1;
const CHECK_FINITE: u8 = 1 << 1;
const CAPTURE: u8 = 1 << 2;

/// What ops of the current step are read for, read once per op.
static WANTED: AtomicU8 = AtomicU8::new(0);

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The thread the recording session started on: the one that ends its steps.
static SESSION_THREAD: Mutex<Option<std::thread::ThreadId>> = Mutex::new(None);

/// The thread the recording session started on (the one whose steps end with [`set_step`]),
/// `None` when nothing records: an edition that reads ops' tensors in batches reads those of
/// other threads (a data loader's) on their own thread, where their work is ordered.
pub fn session_thread() -> Option<std::thread::ThreadId> {
    *SESSION_THREAD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

struct State {
    config: NumericsSection,
    step: u64,
    next_seq: u64,
    records: Vec<Recorded>,
    non_finite: Option<NonFinite>,
    /// The first non-finite op's inputs, as read (a reproduction of the op).
    non_finite_inputs: Vec<Array>,
    /// The op call `[numerics] capture` names, once it ran, and its inputs.
    captured: Option<CapturedOp>,
    captured_inputs: Vec<Array>,
    /// By [`Fingerprint::content_key`], the latest record whose output it was.
    made_by: FxHashMap<u64, u64>,
    /// By the identity the edition gave it, the latest record whose output it was.
    made_by_identity: FxHashMap<u64, u64>,
}

/// One tensor input of a recorded op: its shape, and what tells which op made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// Its shape.
    pub shape: Vec<usize>,
    /// Where it came from.
    pub source: Source,
}

/// What tells which recorded op made an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Its fingerprint: it was made by the latest recorded op whose output had the same one,
    /// or by no recorded op (a parameter, the data) when none had.
    Content(Fingerprint),
    /// Its identity, as the edition knows tensors apart without reading them (NdArray's
    /// buffer, shape and strides): made by the latest recorded op whose output had it, or by
    /// none.
    Identity(u64),
    /// The record (its `seq`) that made it, as the edition knows it (an earlier op of the same
    /// fused block, whose output stayed in registers).
    Record(u64),
    /// Not read: the op's record links none of its inputs.
    Unknown,
}

/// A record as it is kept while the run goes on: names and call sites resolved at the end.
struct Recorded {
    seq: u64,
    step: u64,
    thread: String,
    op: &'static Op,
    phase: u32,
    stack: u32,
    input_shapes: Vec<Vec<usize>>,
    producers: Option<Vec<Option<u64>>>,
    outputs: Vec<Fingerprint>,
}

/// What the ops of the current step are read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted(u8);

impl Wanted {
    /// Their outputs' fingerprints, for `numerics.jsonl`.
    pub fn fingerprints(self) -> bool {
        self.0 & FINGERPRINTS != 0
    }

    /// Whether their outputs are finite (until the first that is not).
    pub fn check_finite(self) -> bool {
        self.0 & CHECK_FINITE != 0
    }

    /// Whether this step holds the op call `[numerics] capture` names (not run yet): its ops
    /// keep their inputs and arguments until they are recorded.
    pub fn capture(self) -> bool {
        self.0 & CAPTURE != 0
    }

    /// Any of them.
    pub fn any(self) -> bool {
        self.0 != 0
    }
}

/// What an op under the `NUMERICS` switch is read for now.
#[inline]
pub fn wanted() -> Wanted {
    Wanted(WANTED.load(Ordering::Relaxed))
}

/// Starts recording as `config` says, from step 0: a session started earlier in this process
/// leaves nothing behind.
pub fn start(config: NumericsSection) {
    *SESSION_THREAD
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(std::thread::current().id());
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    *state = Some(State {
        config,
        step: 0,
        next_seq: 0,
        records: Vec::new(),
        non_finite: None,
        non_finite_inputs: Vec::new(),
        captured: None,
        captured_inputs: Vec::new(),
        made_by: FxHashMap::default(),
        made_by_identity: FxHashMap::default(),
    });
    publish(state.as_ref());
    switches::set(NUMERICS, true);
    crate::dump::value_sink::install(crate::dump::value_sink::ValueSink {
        wanted: values_wanted,
        record: record_value,
    });
}

/// The step now running (from 0): the ops recorded from now on are its.
pub fn set_step(step: u64) {
    flush();
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(state) = state.as_mut() {
        state.step = step;
    }
    publish(state.as_ref());
}

fn publish(state: Option<&State>) {
    let wanted = state.map_or(0, |state| {
        let in_steps = state
            .config
            .steps
            .is_none_or(|[first, last]| (first..=last).contains(&state.step));
        let mut wanted = 0;
        if in_steps && state.config.fingerprints {
            wanted |= FINGERPRINTS;
        }
        if in_steps && state.config.check_finite != CheckFinite::Off && state.non_finite.is_none() {
            wanted |= CHECK_FINITE;
        }
        let capture_step = state.config.capture.map(|[step, _]| step);
        if in_steps && capture_step == Some(state.step) && state.captured.is_none() {
            wanted |= CAPTURE;
        }
        wanted
    });
    WANTED.store(wanted, Ordering::Relaxed);
}

/// What the edition gives of the first op whose outputs are not finite, asked for then: its
/// inputs (fingerprints, and their data where it could be kept) and the op re-run on a
/// reference backend, where it could be.
#[derive(Debug, Default)]
pub struct NonFiniteInputs {
    /// Each tensor input's fingerprint and data, in argument order.
    pub inputs: Vec<(Fingerprint, Option<Array>)>,
    /// The op re-run elsewhere.
    pub rerun: Option<crate::numerics::Rerun>,
    /// Its outputs' fingerprints taken on the host from their data, where the record's were
    /// reduced on the device: what the report and the re-run's verdict compare, exactly.
    pub outputs: Option<Vec<Fingerprint>>,
}

/// Where and when an op was called: its phase and its thread, taken when it ran, for a record
/// made later ([`record_at`]).
#[derive(Debug, Clone)]
pub struct CalledAt {
    phase: u32,
    thread: std::thread::Thread,
    /// The call's `seq`, when it was reserved as it ran ([`reserved`](Self::reserved)).
    seq: Option<u64>,
}

impl CalledAt {
    /// The calling thread, in its current phase.
    pub fn here() -> Self {
        CalledAt {
            phase: phase::current(),
            thread: std::thread::current(),
            seq: None,
        }
    }

    /// [`here`](Self::here), with the next `seq` taken now for a record made later (an op whose
    /// tensors are read with a batch): records made so come in the order of their `seq` in
    /// `numerics.jsonl`, whatever order they were made in. `None` when nothing is recording.
    pub fn reserved() -> Option<Self> {
        let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
        let state = guard.as_mut()?;
        let seq = state.next_seq;
        state.next_seq += 1;
        Some(CalledAt {
            seq: Some(seq),
            ..CalledAt::here()
        })
    }

    /// The `seq` [`reserved`](Self::reserved) took.
    pub fn seq(&self) -> Option<u64> {
        self.seq
    }
}

/// What the edition runs before a step's records are closed ([`set_step`], [`stop`]): the
/// checks it deferred (`check_finite` on a backend whose ops return before they ran, read in
/// batches).
static FLUSH: Mutex<Option<fn()>> = Mutex::new(None);

/// Makes [`set_step`] and [`stop`] call `flush` first, so that what the edition deferred is
/// recorded in the step it ran in.
pub fn flush_with(flush: fn()) {
    *FLUSH.lock().unwrap_or_else(PoisonError::into_inner) = Some(flush);
}

fn flush() {
    let flush = *FLUSH.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(flush) = flush {
        flush();
    }
}

/// One call of `op` returned `outputs` (their fingerprints, in order, and the identities the
/// edition gave them, if any) from `inputs`;
/// `read_inputs` gives the inputs' fingerprints and their data (where it could be kept) and
/// the op's re-run, asked for only when this is the first op whose outputs are not finite. `stack` is the op's
/// call stack ([`call_sites::capture`], 0 without). Returns the record's `seq`, `None` when
/// nothing is recording.
///
/// The record links its inputs to their producers when every input's [`Source`] is known.
pub fn record(
    op: &'static Op,
    stack: u32,
    inputs: Vec<Input>,
    (outputs, identities): (Vec<Fingerprint>, Vec<u64>),
    read_inputs: impl FnOnce() -> NonFiniteInputs,
) -> Option<u64> {
    record_at(
        CalledAt::here(),
        op,
        stack,
        inputs,
        (outputs, identities),
        read_inputs,
    )
}

/// [`record`] for an op called earlier, at `at` (with the `seq` it reserved, if it did).
pub fn record_at(
    at: CalledAt,
    op: &'static Op,
    stack: u32,
    inputs: Vec<Input>,
    (outputs, identities): (Vec<Fingerprint>, Vec<u64>),
    read_inputs: impl FnOnce() -> NonFiniteInputs,
) -> Option<u64> {
    let call = Call {
        op,
        stack,
        value: false,
        at,
    };
    record_call(call, inputs, (outputs, identities), read_inputs)
}

/// Whether values handed over now are recorded ([`record_value`]): numerics are on and the
/// step is inside `[numerics] steps`.
pub fn values_wanted() -> bool {
    let wanted = wanted();
    wanted.fingerprints() || wanted.check_finite()
}

/// A value the program handed over, read to the host: the loss
/// ([`LOSS_RECORD`]), a tensor the dumper read (`dump:<path>`), a gradient it set
/// (`grad:<path>`). Recorded as an op without inputs named so, and checked by
/// `check_finite`, after what the edition deferred (so that an op that made a NaN before it
/// is found first). Nothing unless [`values_wanted`].
///
/// [`LOSS_RECORD`]: crate::numerics::LOSS_RECORD
pub fn record_value(name: &str, value: &Array) {
    if !values_wanted() {
        return;
    }
    flush();
    let print = Fingerprint::of_array(value);
    let call = Call {
        at: CalledAt::here(),
        op: Op::named(name),
        stack: 0,
        value: true,
    };
    record_call(
        call,
        Vec::new(),
        (vec![print], Vec::new()),
        NonFiniteInputs::default,
    );
}

/// The step's loss, as the sessions' `record_loss` hand it over: `read` gives it (a sync),
/// called only while values are recorded, and the record is named [`LOSS_RECORD`]; a loss
/// that cannot be read is said on stderr, and the run goes on.
///
/// [`LOSS_RECORD`]: crate::numerics::LOSS_RECORD
pub fn record_loss(read: impl FnOnce() -> Result<Array, String>) {
    if !values_wanted() {
        return;
    }
    match read() {
        Ok(loss) => record_value(crate::numerics::LOSS_RECORD, &loss),
        Err(error) => eprintln!("burn-profiled: [numerics]: the loss could not be read: {error}"),
    }
}

/// What is known of a call when its record is made.
struct Call {
    at: CalledAt,
    op: &'static Op,
    stack: u32,
    /// Whether it is a value handed over, not an op.
    value: bool,
}

fn record_call(
    Call {
        at,
        op,
        stack,
        value,
    }: Call,
    inputs: Vec<Input>,
    (outputs, identities): (Vec<Fingerprint>, Vec<u64>),
    read_inputs: impl FnOnce() -> NonFiniteInputs,
) -> Option<u64> {
    let wanted = wanted();
    let made_non_finite = wanted.check_finite() && !outputs.iter().all(Fingerprint::is_finite);
    let phase = at.phase;
    let thread = thread_name(&at.thread);
    // The call's number, and whether it is the one `[numerics] capture` names.
    let (seq, captured_here) = {
        let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
        let state = guard.as_mut()?;
        let seq = at.seq.unwrap_or_else(|| {
            state.next_seq += 1;
            state.next_seq - 1
        });
        let named = state.config.capture == Some([state.step, seq]) && !value;
        (seq, named && state.captured.is_none())
    };
    let read = (made_non_finite || captured_here).then(read_inputs);
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.as_mut()?;
    if let (true, Some(read)) = (captured_here, &read) {
        let (inputs, arrays): (Vec<Fingerprint>, Vec<Option<Array>>) =
            read.inputs.iter().cloned().unzip();
        let outputs = read.outputs.clone().unwrap_or_else(|| outputs.clone());
        state.captured_inputs = arrays.into_iter().flatten().collect();
        let captured = CapturedOp {
            step: state.step,
            seq,
            op: op.name().to_owned(),
            phase: phase_name(phase, stack),
            call_site: call_sites::call_site(stack).map(|site| site.to_string()),
            inputs,
            outputs,
            rerun: read.rerun.clone(),
        };
        eprintln!("burn-profiled: captured {captured}");
        state.captured = Some(captured);
    }
    if let Some(read) = read.filter(|_| made_non_finite)
        && state.non_finite.is_none()
    {
        let NonFiniteInputs {
            inputs,
            rerun,
            outputs: read_outputs,
        } = read;
        let (inputs, arrays): (Vec<Fingerprint>, Vec<Option<Array>>) = inputs.into_iter().unzip();
        state.non_finite_inputs = arrays.into_iter().flatten().collect();
        let found = NonFinite {
            step: state.step,
            op: op.name().to_owned(),
            phase: phase_name(phase, stack),
            call_site: call_sites::call_site(stack).map(|site| site.to_string()),
            thread: thread.clone(),
            inputs_finite: inputs.iter().all(Fingerprint::is_finite),
            inputs,
            outputs: read_outputs.unwrap_or_else(|| outputs.clone()),
            rerun,
            value,
        };
        let then = match state.config.check_finite {
            CheckFinite::Stop => "the run stops at this step's end",
            _ => "the run goes on (`[numerics] check_finite = \"stop\"` stops it)",
        };
        eprintln!("burn-profiled: first NaN or Inf: {found}; {then}");
        state.non_finite = Some(found);
    }
    if wanted.fingerprints() {
        let producers = state.producers(&inputs);
        for output in &outputs {
            state.made_by.insert(output.content_key(), seq);
        }
        for identity in identities {
            state.made_by_identity.insert(identity, seq);
        }
        state.records.push(Recorded {
            seq,
            step: state.step,
            thread,
            op,
            phase,
            stack,
            input_shapes: inputs.into_iter().map(|input| input.shape).collect(),
            producers,
            outputs,
        });
    }
    publish(guard.as_ref());
    Some(seq)
}

impl State {
    /// The records that made `inputs`, when every input's source is known.
    fn producers(&self, inputs: &[Input]) -> Option<Vec<Option<u64>>> {
        let producer = |input: &Input| match &input.source {
            Source::Content(print) => Some(self.made_by.get(&print.content_key()).copied()),
            Source::Identity(identity) => Some(self.made_by_identity.get(identity).copied()),
            Source::Record(seq) => Some(Some(*seq)),
            Source::Unknown => None,
        };
        inputs.iter().map(producer).collect()
    }
}

/// The first op that made a NaN or an Inf, when `check_finite = "stop"` asks the run to stop
/// for it.
pub fn stop_asked() -> Option<NonFinite> {
    let state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = state.as_ref()?;
    match state.config.check_finite {
        CheckFinite::Stop => state.non_finite.clone(),
        _ => None,
    }
}

/// What a run recorded: its records (with fingerprints on) and the first op that made a NaN
/// or an Inf.
#[derive(Debug, Default)]
pub struct NumericsRun {
    /// The records, in the order the ops were called.
    pub records: Vec<OpRecord>,
    /// The first op whose output was not finite, when `check_finite` found one.
    pub non_finite: Option<NonFinite>,
    /// Its inputs' data, in argument order (those that could be read): the op reproduced.
    pub non_finite_inputs: Vec<Array>,
    /// The op call `[numerics] capture` named, if it ran.
    pub captured: Option<CapturedOp>,
    /// Its inputs' data, in argument order.
    pub captured_inputs: Vec<Array>,
}

/// Stops recording and hands over what was recorded (nothing when it was not started).
pub fn stop() -> NumericsRun {
    flush();
    switches::set(NUMERICS, false);
    let state = STATE.lock().unwrap_or_else(PoisonError::into_inner).take();
    WANTED.store(0, Ordering::Relaxed);
    let Some(state) = state else {
        return NumericsRun::default();
    };
    let mut records = state.records;
    // Reserved records were made when their batch was read.
    records.sort_by_key(|recorded| recorded.seq);
    let records = records
        .into_iter()
        .map(|recorded| OpRecord {
            seq: recorded.seq,
            step: recorded.step,
            thread: recorded.thread,
            op: recorded.op.name().to_owned(),
            phase: phase_name(recorded.phase, recorded.stack),
            call_site: call_sites::call_site(recorded.stack).map(|site| site.to_string()),
            input_shapes: recorded.input_shapes,
            producers: recorded.producers,
            outputs: recorded.outputs,
        })
        .collect();
    NumericsRun {
        records,
        non_finite: state.non_finite,
        non_finite_inputs: state.non_finite_inputs,
        captured: state.captured,
        captured_inputs: state.captured_inputs,
    }
}

/// The op's phase: its innermost user range, else what Burn's frames on its stack say.
fn phase_name(phase: u32, stack: u32) -> String {
    match phase {
        0 => call_sites::phase_of(stack).unwrap_or("-").to_owned(),
        id => phase::name(id),
    }
}

fn thread_name(thread: &std::thread::Thread) -> String {
    match thread.name() {
        Some(name) => name.to_owned(),
        None => format!("{:?}", thread.id()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown(shape: Vec<usize>) -> Input {
        Input {
            shape,
            source: Source::Unknown,
        }
    }

    /// An input is linked to the latest op whose output had its fingerprint, to no op when
    /// none had (a parameter), or to the record the edition names; one unread input leaves
    /// the record unlinked.
    #[test]
    fn inputs_are_linked_to_the_latest_op_whose_output_they_were() {
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        start(config(CheckFinite::Off, None));
        let print = |x: f32| Fingerprint::of(&[x, 1.0], &[2]);
        let content = |x: f32| Input {
            shape: vec![2],
            source: Source::Content(print(x)),
        };
        let op = Op::named("float_exp");
        let made = |inputs, output: f32| {
            record(
                op,
                0,
                inputs,
                (vec![print(output)], Vec::new()),
                Default::default,
            )
        };
        let first = made(vec![content(1.0)], 2.0).expect("recording");
        let second = made(vec![content(2.0)], 3.0).expect("recording");
        // A second op made the same tensor: its consumers read the latest.
        let again = made(vec![content(2.0)], 3.0).expect("recording");
        made(vec![content(3.0), content(9.0)], 4.0);
        let linked = Input {
            shape: vec![2],
            source: Source::Record(first),
        };
        made(vec![linked], 5.0);
        made(vec![content(1.0), unknown(vec![2])], 6.0);
        // Identities, where the edition has them, link without reading.
        let identified = record(
            op,
            0,
            Vec::new(),
            (vec![print(7.0)], vec![77]),
            Default::default,
        );
        let by_identity = Input {
            shape: vec![2],
            source: Source::Identity(77),
        };
        let unseen = Input {
            shape: vec![2],
            source: Source::Identity(78),
        };
        made(vec![by_identity, unseen], 8.0);
        let producers: Vec<_> = stop().records.into_iter().map(|r| r.producers).collect();
        assert_eq!(
            producers,
            [
                Some(vec![None]),
                Some(vec![Some(first)]),
                Some(vec![Some(first)]),
                Some(vec![Some(again), None]),
                Some(vec![Some(first)]),
                None,
                Some(Vec::new()),
                Some(vec![identified, None]),
            ]
        );
        assert_ne!(second, again);
    }

    fn config(check_finite: CheckFinite, steps: Option<[u64; 2]>) -> NumericsSection {
        NumericsSection {
            fingerprints: true,
            check_finite,
            steps,
            capture: None,
        }
    }

    /// The call `capture` names has its inputs asked for, once, and its step's ops are told
    /// to keep theirs until then; no other call is asked.
    #[test]
    fn the_call_capture_names_keeps_its_inputs() {
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        start(NumericsSection {
            capture: Some([1, 3]),
            ..config(CheckFinite::Off, None)
        });
        let exp = Op::named("float_exp");
        let print = |x: f32| Fingerprint::of(&[x], &[1]);
        let mut asked = Vec::new();
        for step in 0..2 {
            set_step(step);
            assert_eq!(wanted().capture(), step == 1);
            for x in 0..3 {
                let seq = record(
                    exp,
                    0,
                    vec![unknown(vec![1])],
                    (vec![print(x as f32)], Vec::new()),
                    || {
                        asked.push((step, x));
                        NonFiniteInputs {
                            inputs: vec![(print(-1.0), Array::from_values(&[1], &[-1.0f32]).ok())],
                            rerun: None,
                            outputs: None,
                        }
                    },
                );
                assert!(seq.is_some());
            }
        }
        assert_eq!(asked, [(1, 0)], "seq 3 is step 1's first call");
        assert!(!wanted().capture(), "captured: nothing more kept");
        let run = stop();
        let captured = run.captured.expect("captured");
        assert_eq!(
            (captured.step, captured.seq, captured.op.as_str()),
            (1, 3, "float_exp")
        );
        assert_eq!(run.captured_inputs.len(), 1);
        assert!(run.non_finite.is_none());
    }

    /// `steps` bounds what is recorded; a step outside it reads no op.
    #[test]
    fn only_the_steps_asked_for_are_recorded() {
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        start(config(CheckFinite::Off, Some([1, 2])));
        let exp = Op::named("float_exp");
        for step in 0..4 {
            set_step(step);
            if wanted().any() {
                record(
                    exp,
                    0,
                    vec![unknown(vec![2])],
                    (vec![Fingerprint::of(&[1.0f32, 2.0], &[2])], Vec::new()),
                    Default::default,
                );
            }
        }
        let run = stop();
        let steps: Vec<u64> = run.records.iter().map(|r| r.step).collect();
        assert_eq!(steps, [1, 2]);
        assert_eq!(run.records[1].seq, 1);
        assert_eq!(run.records[0].op, "float_exp");
        assert_eq!(run.records[0].phase, "-");
        assert!(!wanted().any(), "stopped");
    }

    /// The first op whose output is not finite is kept, with its inputs asked for then; later
    /// ones are not checked, and `stop` asks the run to stop.
    #[test]
    fn the_first_non_finite_output_is_kept_and_checking_stops() {
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        start(config(CheckFinite::Stop, None));
        let log = Op::named("float_log");
        let finite = || vec![Fingerprint::of(&[-1.0f32], &[1])];
        record(
            log,
            0,
            vec![unknown(vec![1])],
            (finite(), Vec::new()),
            || -> NonFiniteInputs { panic!("finite outputs: inputs not asked") },
        );
        assert_eq!(stop_asked(), None);
        set_step(1);
        record(
            log,
            0,
            vec![unknown(vec![1])],
            (vec![Fingerprint::of(&[f32::NAN], &[1])], Vec::new()),
            || {
                let input = Array::from_values(&[1], &[-1.0f32]).ok();
                NonFiniteInputs {
                    inputs: vec![(Fingerprint::of(&[-1.0f32], &[1]), input)],
                    rerun: None,
                    outputs: None,
                }
            },
        );
        assert!(
            !wanted().check_finite(),
            "the first is found: no more checks"
        );
        assert!(wanted().fingerprints());
        let found = stop_asked().expect("check_finite = stop asks to stop");
        assert_eq!(
            (found.step, found.op.as_str(), found.inputs_finite),
            (1, "float_log", true)
        );
        let run = stop();
        assert_eq!(run.non_finite, Some(found));
        assert_eq!(run.records.len(), 2);
        assert_eq!(run.non_finite_inputs.len(), 1, "kept to reproduce the op");
        assert_eq!(run.non_finite_inputs[0].values_f64(), [-1.0]);
    }

    /// A value handed over is recorded after what the edition deferred (the flush), so that an
    /// op whose deferred check finds a NaN comes first; a non-finite value is named as a value.
    #[test]
    fn a_value_comes_after_the_deferred_ops_and_is_named_as_a_value() {
        use std::sync::atomic::AtomicBool;
        static DEFERRED: AtomicBool = AtomicBool::new(false);
        fn deferred_op() {
            if DEFERRED.swap(false, Ordering::Relaxed) {
                record(
                    Op::named("float_exp"),
                    0,
                    Vec::new(),
                    (vec![Fingerprint::of(&[1.0f32], &[1])], Vec::new()),
                    Default::default,
                );
            }
        }
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        start(config(CheckFinite::Warn, None));
        flush_with(deferred_op);
        DEFERRED.store(true, Ordering::Relaxed);
        let nan = Array::from_values(&[2], &[f32::NAN, 1.0]).unwrap();
        record_value("loss", &nan);
        let run = stop();
        *FLUSH.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let ops: Vec<(u64, &str)> = run.records.iter().map(|r| (r.seq, r.op.as_str())).collect();
        assert_eq!(ops, [(0, "float_exp"), (1, "loss")]);
        assert_eq!(run.records[1].producers, Some(Vec::new()));
        let found = run.non_finite.expect("the loss held a NaN");
        assert_eq!((found.op.as_str(), found.value), ("loss", true));
        assert!(!values_wanted(), "stopped");
    }

    /// The dumper hands over each tensor it read once the add succeeded, and each gradient
    /// when they are set, named by path; a refused add records nothing.
    #[test]
    fn the_dumpers_tensors_and_gradients_are_recorded_by_path() {
        use crate::dump::{AddOptions, Content, DumpType, Map, Node, Record, TensorDumper};
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        start(config(CheckFinite::Off, None));
        let dir = tempfile::tempdir().unwrap();
        let mut dumper = TensorDumper::new(dir.path());
        let tensor = |x: f32| Array::from_values(&[1], &[x]).unwrap();
        let step = Map::new().with("h", tensor(1.0)).with("n", 3);
        dumper
            .add_tensor_data::<()>("step", step, AddOptions::new(DumpType::Json))
            .unwrap();
        let again = Map::new().with("h", tensor(2.0));
        assert!(
            dumper
                .add_tensor_data::<()>("step", again, AddOptions::new(DumpType::Json))
                .is_err(),
            "`step.h` is taken"
        );
        dumper
            .add_grad_data::<()>("step.w", tensor(0.0), AddOptions::new(DumpType::Json))
            .unwrap();
        // What an edition's resolution does: the pending record becomes its gradient.
        for (_, node) in dumper.grads_mut() {
            node.for_each_record(&mut |node| {
                if let Node::Record(Record { content, .. }) = node {
                    *content = Content::Data(Array::from_values(&[1], &[0.25f32]).unwrap());
                }
            });
        }
        dumper.gradients_set();
        let run = stop();
        let names: Vec<&str> = run.records.iter().map(|r| r.op.as_str()).collect();
        assert_eq!(names, ["dump:step.h", "grad:step.w"]);
        assert_eq!(run.records[1].outputs[0].sum, 0.25);
    }
}
