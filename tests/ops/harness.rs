//! What every op check shares: the per-thread event log, inputs from a seeded RNG, snapshots of
//! op results, and the `check!` macro that runs one op on `NdArray` and on `Profiled<NdArray>`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, ThreadId};

use burn::backend::NdArray;
use burn::backend::ndarray::{NdArrayDevice, NdArrayQTensor, NdArrayTensor};
use burn_backend::ops::{
    BoolTensorOps, DeformConv2dBackward, FloatTensorOps, IntTensorOps, MaxPool1dBackward,
    MaxPool1dWithIndices, MaxPool2dBackward, MaxPool2dWithIndices, QTensorOps,
    TransactionPrimitiveData,
};
use burn_backend::tensor::IndexingUpdateOp;
use burn_backend::{Backend, ExecutionError, Shape, TensorData, TensorMetadata, TensorPrimitive};
use burn_profiled::Profiled;
use burn_profiled::probe::{self, Observing, Op, OpObserver};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The reference backend.
pub type Nd = NdArray;
/// The backend under test.
pub type Prof = Profiled<NdArray>;
/// NdArray's only device.
pub const DEV: NdArrayDevice = NdArrayDevice::Cpu;
/// Every update of the `*_scatter_nd` ops.
pub const UPDATE_OPS: [IndexingUpdateOp; 5] = [
    IndexingUpdateOp::Assign,
    IndexingUpdateOp::Add,
    IndexingUpdateOp::Mul,
    IndexingUpdateOp::Min,
    IndexingUpdateOp::Max,
];

// ---------------------------------------------------------------------------------------------
// Events

/// Whether an event is an op's start or its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Started,
    Finished,
}

/// One observer for the whole test binary; tests run on parallel threads, so it keeps the
/// thread of every event and each check looks at its own thread's events only.
#[derive(Default)]
struct Log(Mutex<Vec<(ThreadId, &'static str, Phase)>>);

impl Log {
    fn push(&self, op: &'static Op, phase: Phase) {
        let mut events = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        events.push((thread::current().id(), op.name(), phase));
    }
}

impl OpObserver for Log {
    fn op_started(&self, op: &'static Op) {
        self.push(op, Phase::Started);
    }

    fn op_finished(&self, op: &'static Op) {
        self.push(op, Phase::Finished);
    }
}

fn log() -> &'static Log {
    static LOG: OnceLock<(Arc<Log>, Observing)> = OnceLock::new();
    &LOG.get_or_init(|| {
        let log = Arc::new(Log::default());
        let observing = probe::observe(log.clone());
        (log, observing)
    })
    .0
}

/// Removes the current thread's events from the log and returns them.
fn take_events() -> Vec<(&'static str, Phase)> {
    let me = thread::current().id();
    let mut events = log().0.lock().unwrap_or_else(PoisonError::into_inner);
    let mut mine = Vec::new();
    events.retain(|&(thread, name, phase)| {
        let is_mine = thread == me;
        if is_mine {
            mine.push((name, phase));
        }
        !is_mine
    });
    mine
}

/// Runs `f` and returns its result with the op events it caused on this thread.
pub fn record<T>(f: impl FnOnce() -> T) -> (T, Vec<(&'static str, Phase)>) {
    take_events();
    let out = f();
    (out, take_events())
}

// ---------------------------------------------------------------------------------------------
// Snapshots of op results

/// One piece of an op's result: a tensor's data, or any other value in words.
#[derive(Debug)]
pub enum Part {
    Tensor(TensorData),
    Value(String),
}

/// An op result taken apart into [`Part`]s, so results of `NdArray` and `Profiled<NdArray>`
/// (whose backend-generic structs are different types) can be compared.
pub trait Snap {
    fn snap(self, parts: &mut Vec<Part>);
}

fn value(parts: &mut Vec<Part>, value: impl std::fmt::Debug) {
    parts.push(Part::Value(format!("{value:?}")));
}

/// Reads a tensor through the reference backend (never through `Profiled`, so no events).
pub fn read(tensor: NdArrayTensor) -> TensorData {
    let dtype = tensor.dtype();
    let data = if dtype.is_float() {
        burn_std::future::block_on(Nd::float_into_data(tensor))
    } else if dtype.is_bool() {
        burn_std::future::block_on(Nd::bool_into_data(tensor))
    } else {
        burn_std::future::block_on(Nd::int_into_data(tensor))
    };
    data.expect("reading an NdArray tensor")
}

impl Snap for NdArrayTensor {
    fn snap(self, parts: &mut Vec<Part>) {
        parts.push(Part::Tensor(read(self)));
    }
}

impl Snap for NdArrayQTensor {
    fn snap(self, parts: &mut Vec<Part>) {
        let data = burn_std::future::block_on(Nd::q_into_data(self));
        parts.push(Part::Tensor(
            data.expect("reading an NdArray quantized tensor"),
        ));
    }
}

impl Snap for TensorData {
    fn snap(self, parts: &mut Vec<Part>) {
        parts.push(Part::Tensor(self));
    }
}

impl Snap for bool {
    fn snap(self, parts: &mut Vec<Part>) {
        value(parts, self);
    }
}

impl Snap for NdArrayDevice {
    fn snap(self, parts: &mut Vec<Part>) {
        value(parts, self);
    }
}

impl<T: Snap> Snap for Option<T> {
    fn snap(self, parts: &mut Vec<Part>) {
        value(parts, self.is_some());
        if let Some(t) = self {
            t.snap(parts);
        }
    }
}

impl<T: Snap> Snap for Vec<T> {
    fn snap(self, parts: &mut Vec<Part>) {
        value(parts, self.len());
        for t in self {
            t.snap(parts);
        }
    }
}

impl<A: Snap, B: Snap> Snap for (A, B) {
    fn snap(self, parts: &mut Vec<Part>) {
        self.0.snap(parts);
        self.1.snap(parts);
    }
}

impl<T: Snap> Snap for Result<T, ExecutionError> {
    fn snap(self, parts: &mut Vec<Part>) {
        match self {
            Ok(t) => t.snap(parts),
            Err(err) => value(parts, err),
        }
    }
}

/// The outcome of an op run under `catch_unwind`: its panic message, or its result.
pub struct Caught<T>(pub thread::Result<T>);

impl<T: Snap> Snap for Caught<T> {
    fn snap(self, parts: &mut Vec<Part>) {
        match self.0 {
            Ok(t) => {
                value(parts, "returned without panicking");
                t.snap(parts);
            }
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "<non-string panic payload>".into());
                parts.push(Part::Value(format!("panicked: {message}")));
            }
        }
    }
}

/// Runs `f`, catching a panic.
pub fn catch<T>(f: impl FnOnce() -> T) -> Caught<T> {
    Caught(catch_unwind(AssertUnwindSafe(f)))
}

impl Snap for TransactionPrimitiveData {
    fn snap(self, parts: &mut Vec<Part>) {
        self.read_floats.snap(parts);
        self.read_qfloats.snap(parts);
        self.read_ints.snap(parts);
        self.read_bools.snap(parts);
    }
}

/// A backend whose tensor primitives are NdArray's: `NdArray` itself and `Profiled<NdArray>`.
pub trait OnNdArray:
    Backend<
        FloatTensorPrimitive = NdArrayTensor,
        IntTensorPrimitive = NdArrayTensor,
        BoolTensorPrimitive = NdArrayTensor,
        QuantizedTensorPrimitive = NdArrayQTensor,
    >
{
}

impl<B> OnNdArray for B where
    B: Backend<
            FloatTensorPrimitive = NdArrayTensor,
            IntTensorPrimitive = NdArrayTensor,
            BoolTensorPrimitive = NdArrayTensor,
            QuantizedTensorPrimitive = NdArrayQTensor,
        >
{
}

impl<B: OnNdArray> Snap for TensorPrimitive<B> {
    fn snap(self, parts: &mut Vec<Part>) {
        match self {
            TensorPrimitive::Float(t) => {
                value(parts, "Float");
                t.snap(parts);
            }
            TensorPrimitive::QFloat(t) => {
                value(parts, "QFloat");
                t.snap(parts);
            }
        }
    }
}

impl<B: OnNdArray> Snap for MaxPool1dWithIndices<B> {
    fn snap(self, parts: &mut Vec<Part>) {
        (self.output, self.indices).snap(parts);
    }
}

impl<B: OnNdArray> Snap for MaxPool2dWithIndices<B> {
    fn snap(self, parts: &mut Vec<Part>) {
        (self.output, self.indices).snap(parts);
    }
}

impl<B: OnNdArray> Snap for MaxPool1dBackward<B> {
    fn snap(self, parts: &mut Vec<Part>) {
        self.x_grad.snap(parts);
    }
}

impl<B: OnNdArray> Snap for MaxPool2dBackward<B> {
    fn snap(self, parts: &mut Vec<Part>) {
        self.x_grad.snap(parts);
    }
}

impl<B: OnNdArray> Snap for DeformConv2dBackward<B> {
    fn snap(self, parts: &mut Vec<Part>) {
        (self.x_grad, self.offset_grad).snap(parts);
        (self.weight_grad, self.mask_grad).snap(parts);
        self.bias_grad.snap(parts);
    }
}

fn parts(result: impl Snap) -> Vec<Part> {
    let mut parts = Vec::new();
    result.snap(&mut parts);
    parts
}

// ---------------------------------------------------------------------------------------------
// Comparing

/// How an op's result through `Profiled` must match NdArray's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// Same dtype, same shape, same bytes (so floats match bit for bit, NaN payloads and
    /// signed zeros included), and the same non-tensor values.
    Exact,
    /// Same dtype and shape only: for ops whose values are not reproducible across two calls
    /// (`*_empty`, random sampling from NdArray's global RNG).
    Layout,
    /// Both runs must panic, with the same message.
    Panic,
}

/// Why `actual` does not match `expected`, if it does not.
fn mismatch(expected: &[Part], actual: &[Part], compare: Compare) -> Option<String> {
    if expected.len() != actual.len() {
        return Some(format!(
            "{} result parts expected, {} returned",
            expected.len(),
            actual.len()
        ));
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        let why = match (e, a) {
            (Part::Tensor(e), Part::Tensor(a)) => tensor_mismatch(e, a, compare),
            (Part::Value(e), Part::Value(a)) if e == a => None,
            (e, a) => Some(format!("expected {e:?}, got {a:?}")),
        };
        if let Some(why) = why {
            return Some(format!("result part {i}: {why}"));
        }
    }
    None
}

fn tensor_mismatch(expected: &TensorData, actual: &TensorData, compare: Compare) -> Option<String> {
    if expected.dtype != actual.dtype || expected.shape != actual.shape {
        return Some(format!(
            "expected {:?} {:?}, got {:?} {:?}",
            expected.dtype, expected.shape, actual.dtype, actual.shape
        ));
    }
    if compare == Compare::Layout {
        return None;
    }
    let (e, a) = (expected.as_bytes(), actual.as_bytes());
    if e.len() != a.len() {
        return Some(format!("{} bytes expected, got {}", e.len(), a.len()));
    }
    let byte = e.iter().zip(a).position(|(e, a)| e != a)?;
    let size = expected.dtype.size().max(1);
    let at = byte / size * size;
    let end = (at + size).min(e.len());
    Some(format!(
        "{:?} {:?}: element {} differs: bytes {:02x?} expected, {:02x?} got",
        expected.dtype,
        expected.shape,
        byte / size,
        &e[at..end],
        &a[at..end]
    ))
}

// ---------------------------------------------------------------------------------------------
// The per-family context

/// The seed all families derive their RNG from: `OPS_SEED` if set, else a fixed default.
pub fn seed() -> u64 {
    match std::env::var("OPS_SEED") {
        Ok(s) => s.trim().parse().expect("OPS_SEED must be a u64"),
        Err(_) => 20_250_101,
    }
}

/// The ops that answer a question about a tensor rather than work on it: they report nothing.
const QUERIES: [&str; 4] = ["float_device", "int_device", "bool_device", "q_device"];

/// Runs one family's checks: inputs, verification, and what the family covered.
pub struct Cx {
    family: &'static str,
    seed: u64,
    pub rng: StdRng,
    checked: BTreeSet<&'static str>,
    calls: usize,
    failures: Vec<String>,
}

impl Cx {
    pub fn new(family: &'static str) -> Self {
        let seed = seed();
        // Each family gets its own stream, so adding checks to one leaves the others' inputs be.
        let stream = family.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        Cx {
            family,
            seed,
            rng: StdRng::seed_from_u64(seed ^ stream),
            checked: BTreeSet::new(),
            calls: 0,
            failures: Vec::new(),
        }
    }

    /// Checks one op call: the events it caused through `Profiled`, and its result against
    /// NdArray's. Use it through `check!`.
    pub fn verify(
        &mut self,
        op: &'static str,
        compare: Compare,
        events: Vec<(&'static str, Phase)>,
        expected: impl Snap,
        actual: impl Snap,
    ) {
        self.checked.insert(op);
        self.calls += 1;
        // Queries about a tensor (its device) are `B`'s answer, inlined, with no report.
        let want = match QUERIES.contains(&op) {
            true => vec![],
            false => vec![(op, Phase::Started), (op, Phase::Finished)],
        };
        if events != want {
            self.failures.push(format!(
                "{op}: recorded events {events:?}, expected exactly {want:?}"
            ));
        }
        let (expected, actual) = (parts(expected), parts(actual));
        if compare == Compare::Panic
            && !matches!(expected.first(), Some(Part::Value(v)) if v.starts_with("panicked"))
        {
            self.failures.push(format!(
                "{op}: listed as unsupported, but NdArray did not panic: {expected:?}"
            ));
        }
        if let Some(why) = mismatch(&expected, &actual, compare) {
            self.failures.push(format!(
                "{op}: Profiled<NdArray> differs from NdArray: {why}"
            ));
        }
    }

    /// Fails the test if any check failed, or if the ops checked are not exactly `declared`.
    pub fn finish(mut self, declared: &[&str]) {
        let declared_set: BTreeSet<&str> = declared.iter().copied().collect();
        if declared_set.len() != declared.len() {
            self.failures
                .push("the family's op list names an op twice".to_string());
        }
        for op in declared_set.difference(&self.checked) {
            self.failures
                .push(format!("{op}: declared by the family but never checked"));
        }
        for op in self.checked.difference(&declared_set) {
            self.failures.push(format!(
                "{op}: checked but missing from the family's op list"
            ));
        }
        if !self.failures.is_empty() {
            let mut report = format!(
                "{} failure(s) in op family `{}` (OPS_SEED={}):\n",
                self.failures.len(),
                self.family,
                self.seed
            );
            for failure in &self.failures {
                let _ = writeln!(report, "  - {failure}");
            }
            // The report says it all; don't print the seed a second time from `drop`.
            self.failures.clear();
            self.checked.clear();
            self.family = "";
            panic!("{report}");
        }
        if self.calls > 0 {
            println!(
                "op family `{}`: {} ops in {} calls (OPS_SEED={})",
                self.family,
                self.checked.len(),
                self.calls,
                self.seed
            );
        }
        self.family = "";
    }

    // Inputs. All are built through NdArray directly, so they cause no events.

    /// f32 values in [-4, 4).
    pub fn floats(&mut self, shape: impl Into<Shape>) -> NdArrayTensor {
        self.floats_in(shape, -4.0..4.0)
    }

    /// f32 values in `range`.
    pub fn floats_in(
        &mut self,
        shape: impl Into<Shape>,
        range: std::ops::Range<f32>,
    ) -> NdArrayTensor {
        let shape = shape.into();
        let values = (0..shape.num_elements())
            .map(|_| self.rng.random_range(range.clone()))
            .collect();
        float_tensor(values, shape)
    }

    /// f32 values in [-4, 4) with NaNs (of varied payloads), infinities and signed zeros mixed in.
    pub fn floats_special(&mut self, shape: impl Into<Shape>) -> NdArrayTensor {
        const SPECIAL: [f32; 6] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.0];
        let shape = shape.into();
        let values = (0..shape.num_elements())
            .map(|_| {
                if self.rng.random_bool(0.25) {
                    let special = SPECIAL[self.rng.random_range(0..SPECIAL.len())];
                    if special.is_nan() {
                        // A quiet NaN with a random sign and payload.
                        let sign = self.rng.random_range(0..2u32) << 31;
                        f32::from_bits(sign | 0x7fc0_0000 | self.rng.random_range(0..0x40_0000))
                    } else {
                        special
                    }
                } else {
                    self.rng.random_range(-4.0f32..4.0)
                }
            })
            .collect();
        float_tensor(values, shape)
    }

    /// f32 values drawn from a few small integers, so ties and exact zeros are common.
    pub fn floats_coarse(&mut self, shape: impl Into<Shape>) -> NdArrayTensor {
        self.floats_of(shape, &[-2.0, -1.0, 0.0, 1.0, 2.0])
    }

    /// f32 values drawn from `choices`.
    pub fn floats_of(&mut self, shape: impl Into<Shape>, choices: &[f32]) -> NdArrayTensor {
        let shape = shape.into();
        let values = (0..shape.num_elements())
            .map(|_| choices[self.rng.random_range(0..choices.len())])
            .collect();
        float_tensor(values, shape)
    }

    /// f64 values in [-4, 4).
    pub fn floats_f64(&mut self, shape: impl Into<Shape>) -> NdArrayTensor {
        let shape = shape.into();
        let values: Vec<f64> = (0..shape.num_elements())
            .map(|_| self.rng.random_range(-4.0f64..4.0))
            .collect();
        Nd::float_from_data(TensorData::new(values, shape), &DEV)
    }

    /// i64 values in `range`.
    pub fn ints(&mut self, shape: impl Into<Shape>, range: std::ops::Range<i64>) -> NdArrayTensor {
        let shape = shape.into();
        let values = (0..shape.num_elements())
            .map(|_| self.rng.random_range(range.clone()))
            .collect();
        int_tensor(values, shape)
    }

    /// Random booleans.
    pub fn bools(&mut self, shape: impl Into<Shape>) -> NdArrayTensor {
        let shape = shape.into();
        let values: Vec<bool> = (0..shape.num_elements())
            .map(|_| self.rng.random_bool(0.5))
            .collect();
        Nd::bool_from_data(TensorData::new(values, shape), &DEV)
    }
}

impl Drop for Cx {
    fn drop(&mut self) {
        if thread::panicking() && !self.family.is_empty() {
            eprintln!(
                "op family `{}` panicked; rerun with OPS_SEED={}",
                self.family, self.seed
            );
        }
    }
}

/// An f32 tensor with the given values.
pub fn float_tensor(values: Vec<f32>, shape: impl Into<Shape>) -> NdArrayTensor {
    Nd::float_from_data(TensorData::new(values, shape.into()), &DEV)
}

/// An i64 tensor with the given values.
pub fn int_tensor(values: Vec<i64>, shape: impl Into<Shape>) -> NdArrayTensor {
    Nd::int_from_data(TensorData::new(values, shape.into()), &DEV)
}

/// A tensor's dims.
pub fn dims(tensor: &impl TensorMetadata) -> Vec<usize> {
    tensor.shape().to_vec()
}

/// Checks one op call: `check!(cx; float_add(a.clone(), b.clone()))` runs `NdArray::float_add`
/// and then `Profiled::<NdArray>::float_add` with the same arguments (each argument expression
/// is evaluated once per backend, so pass clones of prepared inputs), and hands the events of
/// the second call and both results to [`Cx::verify`].
///
/// * `check!(cx; read op(..))`: the op returns a future; it is awaited inside the recording.
/// * `check!(cx; layout op(..))`: compare dtype and shape only ([`Compare::Layout`]).
/// * `check!(cx; panics op(..))`: both must panic alike ([`Compare::Panic`]).
///
/// (The `;` keeps rustfmt from stacking every argument on a line of its own.)
macro_rules! check {
    ($cx:expr; read $op:ident($($arg:expr),* $(,)?)) => {
        check!(@run $cx, Exact, $op,
            burn_std::future::block_on($crate::harness::Nd::$op($($arg),*)),
            burn_std::future::block_on($crate::harness::Prof::$op($($arg),*)))
    };
    ($cx:expr; layout $op:ident($($arg:expr),* $(,)?)) => {
        check!(@run $cx, Layout, $op,
            $crate::harness::Nd::$op($($arg),*),
            $crate::harness::Prof::$op($($arg),*))
    };
    ($cx:expr; panics $op:ident($($arg:expr),* $(,)?)) => {
        check!(@run $cx, Panic, $op,
            $crate::harness::catch(|| $crate::harness::Nd::$op($($arg),*)),
            $crate::harness::catch(|| $crate::harness::Prof::$op($($arg),*)))
    };
    ($cx:expr; $op:ident($($arg:expr),* $(,)?)) => {
        check!(@run $cx, Exact, $op,
            $crate::harness::Nd::$op($($arg),*),
            $crate::harness::Prof::$op($($arg),*))
    };
    (@run $cx:expr, $compare:ident, $op:ident, $expected:expr, $actual:expr) => {{
        let expected = $expected;
        let (actual, events) = $crate::harness::record(|| $actual);
        $cx.verify(
            stringify!($op),
            $crate::harness::Compare::$compare,
            events,
            expected,
            actual,
        );
    }};
}

/// `check_each!(cx; [op_a, op_b, ..](args))`: one `check!` per op, all with the same arguments.
macro_rules! check_each {
    ($cx:expr; [$($op:ident),* $(,)?] $args:tt) => {
        $( check!($cx; $op $args); )*
    };
}

/// The checks must be able to fail: an op that ran a trait default body on `Profiled` (and so
/// reported other ops), a sign-of-zero or NaN-payload difference, a dtype or shape difference,
/// and an "unsupported" op that returned are all reported.
#[test]
fn harness_reports_fallbacks_and_bit_differences() {
    use burn_backend::ops::attention::attention_fallback;
    use burn_backend::ops::{AttentionModuleOptions, ModuleOps};

    let mut cx = Cx::new("harness self-test");
    let expect_failure = |cx: &mut Cx, what: &str, needle: &str| {
        let failure = cx
            .failures
            .pop()
            .unwrap_or_else(|| panic!("{what}: not reported"));
        assert!(failure.contains(needle), "{what}: reported as {failure:?}");
        assert!(cx.failures.is_empty(), "{what}: reported more than once");
    };

    // The default body of `attention`, run on `Profiled`: right values, wrong events.
    let (q, k, v) = (
        cx.floats([1, 1, 2, 3]),
        cx.floats([1, 1, 4, 3]),
        cx.floats([1, 1, 4, 2]),
    );
    let options = AttentionModuleOptions::default();
    let expected = Nd::attention(q.clone(), k.clone(), v.clone(), None, None, options);
    let (actual, events) = record(|| attention_fallback::<Prof>(q, k, v, None, None, options));
    assert!(
        events.len() > 2,
        "the fallback reports the ops it calls: {events:?}"
    );
    cx.verify("attention", Compare::Exact, events, expected, actual);
    expect_failure(&mut cx, "fallback", "recorded events");

    let events = |op: &'static str| vec![(op, Phase::Started), (op, Phase::Finished)];
    let f32s = |v: f32| float_tensor(vec![1.0, v], [2]);
    let cases = [
        ("-0.0 for 0.0", f32s(0.0), f32s(-0.0), "element 1 differs"),
        (
            "NaN payload",
            f32s(f32::NAN),
            f32s(f32::from_bits(0x7fc0_0001)),
            "element 1",
        ),
        (
            "shape",
            f32s(1.0),
            float_tensor(vec![1.0, 1.0], [1, 2]),
            "expected F32",
        ),
        (
            "dtype",
            f32s(1.0),
            Nd::float_cast(f32s(1.0), burn_std::FloatDType::F64),
            "expected F32",
        ),
    ];
    for (what, expected, actual, needle) in cases {
        cx.verify(
            "float_neg",
            Compare::Exact,
            events("float_neg"),
            expected,
            actual,
        );
        expect_failure(&mut cx, what, needle);
    }
    cx.verify(
        "float_empty",
        Compare::Layout,
        events("float_empty"),
        f32s(1.0),
        f32s(2.0),
    );
    assert!(cx.failures.is_empty(), "layout comparison looked at values");

    let returned = catch(|| f32s(1.0));
    let panicked = catch(|| -> NdArrayTensor { panic!("not here") });
    cx.verify("rfft", Compare::Panic, events("rfft"), returned, panicked);
    let failures = std::mem::take(&mut cx.failures);
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(
        failures[0].contains("NdArray did not panic"),
        "{failures:?}"
    );

    cx.finish(&["attention", "float_neg", "float_empty", "rfft"]);
}
