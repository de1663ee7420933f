//! The timeline: op spans, user NVTX ranges and stopwatch measurements as a Chrome trace-event
//! JSON file, which opens in Perfetto (ui.perfetto.dev) and `chrome://tracing`. One track per
//! thread, with process and thread names.
//!
//! It follows the conventions of Kineto's `trace.json` (what `torch.profiler` writes), so
//! PyTorch's trace tools read it (Holistic Trace Analysis, TensorBoard's plugin): ops are
//! `cpu_op` events with an `External id`, user ranges `user_annotation`, each measured step a
//! `ProfilerStep#N` span; with device time, each kernel is a `kernel` event on its device's
//! process (`pid` the device, `tid` the stream) with Kineto's args, its launch call a
//! `cuda_driver` event, linked by their `correlation` and an `ac2g` flow. `docs/guide/hta.md`
//! says what maps to what, and what Burn has no equivalent for.
//!
//! ```no_run
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::trace;
//!
//! trace::start(trace::TraceConfig::default());
//! // ... the steps to look at
//! trace::stop();
//! trace::write("target/trace.json").unwrap();
//! ```
//!
//! Memory stays bounded: after [`TraceConfig::max_events`] events, further events are counted
//! but dropped, and the file says so (an instant event `trace truncated` at the first dropped
//! event, and `dropped_events` in `otherData`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::Serialize;

use crate::shape::Shape;

use crate::context::kernel::{KernelShape, LaunchCall};
use crate::context::op::Op;
use crate::context::switches::{self, TRACE};
use crate::context::{clock, device, thread};

/// The version of `trace.json`'s format (`otherData.format_version`): 2 since it follows
/// Kineto's names (`cpu_op`, `user_annotation`, kernels on their device's process, `ac2g`);
/// 3 since it has Kineto's `fwdbwd` flows, with forward links.
pub const FORMAT_VERSION: u32 = 3;

/// How the timeline records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceConfig {
    /// Events kept at most; later ones are counted and dropped.
    pub max_events: usize,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            max_events: 1_000_000,
        }
    }
}

/// What a thread recorded: finished spans and the user ranges still open.
#[derive(Default)]
struct ThreadTrace {
    tid: u32,
    name: Option<String>,
    spans: Vec<Span>,
    open_ranges: Vec<(String, Duration)>,
    /// The devices (`context::device`) of the ops the thread ran.
    devices: Vec<u32>,
}

struct Span {
    name: Cow<'static, str>,
    category: &'static str,
    start: Duration,
    end: Duration,
    /// An op's input shapes, when statistics are kept by shapes (Kineto's `Input Dims`).
    input_dims: Option<Box<[Box<[usize]>]>>,
    /// With forward links (`context::lineage`): a forward op's call, and a backward op's
    /// forward call, the two ends of a `fwdbwd` flow; 0 for none.
    call: u64,
    forward_call: u64,
}

/// A kernel on a device stream, with the thread and start of the op that launched it.
struct KernelSpan {
    device: u32,
    stream: u32,
    name: String,
    start: Duration,
    end: Duration,
    launched_by: (u32, Duration),
    /// CUPTI's correlation id of its launch call, and that call where its record came.
    correlation: u32,
    launch: Option<LaunchCall>,
    shape: KernelShape,
}

/// The `cbid` of a launch CubeCL's launch observer saw (Burn 0.22's edition): no CUDA call.
#[doc(hidden)]
pub const CUBECL_LAUNCH: u32 = u32::MAX;

/// The name Kineto gives a CUDA driver call: the launch calls CUPTI reports kernels under.
/// Another call is a `CUDA driver call`, its `cbid` in its args.
fn driver_call_name(cbid: u32) -> &'static str {
    match cbid {
        CUBECL_LAUNCH => "CubeCL launch",
        307 => "cuLaunchKernel",
        477 => "cuLaunchCooperativeKernel",
        652 => "cuLaunchKernelEx",
        514 => "cuGraphLaunch",
        _ => "CUDA driver call",
    }
}

/// Devices as the trace's `deviceProperties` lists them (Kineto's keys), by CUPTI device id.
static DEVICE_PROPERTIES: Mutex<Vec<(u32, serde_json::Map<String, serde_json::Value>)>> =
    Mutex::new(Vec::new());
/// The devices one process drives (several: the trace's `distributedInfo`).
static PROCESS_DEVICES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Kernels, on one track per device stream.
static KERNELS: Mutex<Vec<KernelSpan>> = Mutex::new(Vec::new());

/// A counter's values at one moment: a counter track (memory per device, host RSS).
struct CounterSample {
    name: String,
    at: Duration,
    values: Vec<(&'static str, f64)>,
}

static COUNTERS: Mutex<Vec<CounterSample>> = Mutex::new(Vec::new());
/// Bytes of the names the timeline owns (ranges, measurements, kernels, counters).
static OWNED_BYTES: AtomicU64 = AtomicU64::new(0);

fn owned(name: String) -> String {
    OWNED_BYTES.fetch_add(name.capacity() as u64, Ordering::Relaxed);
    name
}

static RECORDING: AtomicBool = AtomicBool::new(false);
static MAX_EVENTS: AtomicUsize = AtomicUsize::new(0);
static EVENTS: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// When the first event was dropped (ns on the shared clock), 0 if none.
static FIRST_DROP_NS: AtomicU64 = AtomicU64::new(0);
/// Every thread's trace, kept after the thread ends.
static THREADS: Mutex<Vec<Arc<Mutex<ThreadTrace>>>> = Mutex::new(Vec::new());

thread_local! {
    static THREAD: Arc<Mutex<ThreadTrace>> = {
        let thread = Arc::new(Mutex::new(ThreadTrace {
            tid: thread::os_thread_id(),
            name: std::thread::current().name().map(str::to_owned),
            ..ThreadTrace::default()
        }));
        lock(&THREADS).push(thread.clone());
        thread
    };
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn threads() -> Vec<Arc<Mutex<ThreadTrace>>> {
    lock(&THREADS).clone()
}

/// Starts recording the timeline (events recorded before stay until [`clear`]).
pub fn start(config: TraceConfig) {
    MAX_EVENTS.store(config.max_events, Ordering::Relaxed);
    RECORDING.store(true, Ordering::Relaxed);
    switches::set(TRACE, true);
}

/// Stops recording.
pub fn stop() {
    RECORDING.store(false, Ordering::Relaxed);
    switches::set(TRACE, false);
}

/// Whether the timeline is being recorded.
pub fn is_recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Forgets every event recorded so far.
pub fn clear() {
    for thread in threads() {
        let mut thread = lock(&thread);
        thread.spans.clear();
        thread.open_ranges.clear();
        thread.devices.clear();
    }
    lock(&KERNELS).clear();
    lock(&COUNTERS).clear();
    OWNED_BYTES.store(0, Ordering::Relaxed);
    EVENTS.store(0, Ordering::Relaxed);
    DROPPED.store(0, Ordering::Relaxed);
    FIRST_DROP_NS.store(0, Ordering::Relaxed);
}

fn with_thread<T>(f: impl FnOnce(&mut ThreadTrace) -> T) -> T {
    THREAD.with(|thread| f(&mut lock(thread)))
}

/// Takes one event slot; false (and counted as dropped) past the cap.
fn admit(now: Duration) -> bool {
    if EVENTS.fetch_add(1, Ordering::Relaxed) < MAX_EVENTS.load(Ordering::Relaxed) {
        return true;
    }
    if DROPPED.fetch_add(1, Ordering::Relaxed) == 0 {
        FIRST_DROP_NS.store(now.as_nanos() as u64, Ordering::Relaxed);
    }
    false
}

fn record_span(name: Cow<'static, str>, category: &'static str, start: Duration, end: Duration) {
    if admit(end) {
        with_thread(|thread| {
            thread.spans.push(Span {
                name,
                category,
                start,
                end,
                input_dims: None,
                call: 0,
                forward_call: 0,
            })
        });
    }
}

/// An op ran on this thread from `start` to `end`, on `device` (`context::device`, 0 when
/// unknown), with `shapes` as its inputs when they were collected. With forward links,
/// `(call, forward_call)` is a forward op's call, or a backward op's forward call
/// ([`lineage::Link`](crate::context::lineage::Link)); `(0, 0)` otherwise.
#[doc(hidden)]
pub fn record_op(
    op: &'static Op,
    (start, end): (Duration, Duration),
    device: u32,
    shapes: Option<&[Shape]>,
    (call, forward_call): (u64, u64),
) {
    if admit(end) {
        let input_dims = shapes.map(|shapes| {
            let dims: Box<[Box<[usize]>]> = shapes.iter().map(|s| s.as_slice().into()).collect();
            let bytes: usize = dims.iter().map(|d| d.len() * size_of::<usize>()).sum();
            OWNED_BYTES.fetch_add(
                (bytes + dims.len() * size_of::<Box<[usize]>>()) as u64,
                Ordering::Relaxed,
            );
            dims
        });
        with_thread(|thread| {
            thread.spans.push(Span {
                name: Cow::Borrowed(op.name()),
                category: "cpu_op",
                start,
                end,
                input_dims,
                call,
                forward_call,
            });
            if device != 0 && !thread.devices.contains(&device) {
                thread.devices.push(device);
            }
        });
    }
}

/// A kernel as the timeline records it.
#[doc(hidden)]
pub struct KernelRecord<'a> {
    pub device: u32,
    pub stream: u32,
    pub name: &'a str,
    pub start: Duration,
    pub end: Duration,
    /// The OS thread and start of the op that launched it.
    pub launched_by: (u32, Duration),
    pub correlation: u32,
    pub launch: Option<LaunchCall>,
    pub shape: KernelShape,
}

/// A kernel ran: a span on its stream's track, its launch call on the launching thread, and a
/// flow arrow from the call (or, without its record, from the op) to the kernel.
#[doc(hidden)]
pub fn record_kernel(kernel: KernelRecord<'_>) {
    if is_recording() && admit(kernel.end) {
        lock(&KERNELS).push(KernelSpan {
            device: kernel.device,
            stream: kernel.stream,
            name: owned(kernel.name.to_owned()),
            start: kernel.start,
            end: kernel.end,
            launched_by: kernel.launched_by,
            correlation: kernel.correlation,
            launch: kernel.launch,
            shape: kernel.shape,
        });
    }
}

/// The device CUPTI calls `id` has `properties` (Kineto's `deviceProperties` keys); each device
/// is described once (`device_time::describe_device`).
#[doc(hidden)]
pub fn record_device(id: u32, properties: serde_json::Map<String, serde_json::Value>) {
    lock(&DEVICE_PROPERTIES).push((id, properties));
}

/// The process drives `devices` (burn's names): with several, the trace says so in its
/// `distributedInfo`.
#[doc(hidden)]
pub fn set_process_devices(devices: Vec<String>) {
    *lock(&PROCESS_DEVICES) = devices;
}

/// Measured step `step` (counted from 0, warm-up included) ran from `start` to `end` on this
/// thread: Kineto's `ProfilerStep#<step>` span.
#[doc(hidden)]
pub fn record_step(step: usize, start: Duration, end: Duration) {
    if is_recording() {
        record_span(
            Cow::Owned(owned(format!("ProfilerStep#{step}"))),
            "user_annotation",
            start,
            end,
        );
    }
}

/// The counter track `name` has `values` at `at` (for example memory in use and reserved of a
/// device, in bytes).
#[doc(hidden)]
pub fn record_counter(name: &str, at: Duration, values: &[(&'static str, f64)]) {
    if is_recording() && admit(at) {
        lock(&COUNTERS).push(CounterSample {
            name: owned(name.to_owned()),
            at,
            values: values.to_vec(),
        });
    }
}

/// A stopwatch measurement `name` ran from `start` to `end` on this thread.
#[doc(hidden)]
pub fn record_measurement(name: &str, start: Duration, end: Duration) {
    if is_recording() {
        record_span(Cow::Owned(owned(name.to_owned())), "stopwatch", start, end);
    }
}

/// A user range was pushed on this thread.
#[doc(hidden)]
pub fn range_pushed(name: &str) {
    if is_recording() {
        let now = clock::now();
        with_thread(|thread| thread.open_ranges.push((owned(name.to_owned()), now)));
    }
}

/// This thread's innermost user range was popped.
#[doc(hidden)]
pub fn range_popped() {
    if is_recording() {
        let now = clock::now();
        if let Some((name, start)) = with_thread(|thread| thread.open_ranges.pop()) {
            record_span(Cow::Owned(name), "user_annotation", start, now);
        }
    }
}

/// The host memory the timeline holds: its buffers and the names it owns, as allocated (a
/// per-step memory series leaves it out: it is the profiler's, not the program's).
#[doc(hidden)]
pub fn retained_bytes() -> u64 {
    use std::mem::size_of;
    let threads: u64 = threads()
        .iter()
        .map(|thread| {
            let thread = lock(thread);
            (thread.spans.capacity() * size_of::<Span>()
                + thread.open_ranges.capacity() * size_of::<(String, Duration)>())
                as u64
        })
        .sum();
    let kernels = (lock(&KERNELS).capacity() * size_of::<KernelSpan>()) as u64;
    let counters: u64 = {
        let counters = lock(&COUNTERS);
        (counters.capacity() * size_of::<CounterSample>()) as u64
            + counters
                .iter()
                .map(|c| (c.values.capacity() * size_of::<(&str, f64)>()) as u64)
                .sum::<u64>()
    };
    threads + kernels + counters + OWNED_BYTES.load(Ordering::Relaxed)
}

#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    cat: &'a str,
    ph: &'static str,
    /// Microseconds, as the format wants.
    ts: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    pid: u32,
    tid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    /// A flow's id and, at its end, how it binds to the enclosing slice.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    args: serde_json::Map<String, serde_json::Value>,
}

/// Kineto's `fwdbwd` flows: one from each backward op to the forward op call it was linked
/// to, starting at the forward op (Perfetto and HTA draw them). Each flow pairs one forward
/// op with one backward op; a forward op whose span was dropped (past the cap) has none.
fn fwdbwd_flows<'a>(
    threads: &[std::sync::MutexGuard<'_, ThreadTrace>],
    pid: u32,
    events: &mut Vec<Event<'a>>,
) {
    let forward: HashMap<u64, (u32, Duration)> = threads
        .iter()
        .flat_map(|t| t.spans.iter().map(move |s| (t.tid, s)))
        .filter(|(_, s)| s.call != 0)
        .map(|(tid, s)| (s.call, (tid, s.start)))
        .collect();
    let mut id = FWDBWD_IDS;
    let flow = |ph, id, tid, ts, bp| Event {
        name: "fwdbwd",
        cat: "fwdbwd",
        ph,
        ts: micros(ts),
        dur: None,
        pid,
        tid,
        s: None,
        id: Some(id),
        bp,
        args: serde_json::Map::new(),
    };
    for thread in threads {
        for span in thread.spans.iter().filter(|s| s.forward_call != 0) {
            let Some(&(forward_tid, forward_start)) = forward.get(&span.forward_call) else {
                continue;
            };
            events.push(flow("s", id, forward_tid, forward_start, None));
            events.push(flow("f", id, thread.tid, span.start, Some("e")));
            id += 1;
        }
    }
}

/// The first id of the `fwdbwd` flows: ids of their own, apart from the kernels' `ac2g` flows
/// (CUPTI's correlation ids).
const FWDBWD_IDS: u64 = 1 << 40;

fn micros(time: Duration) -> f64 {
    time.as_nanos() as f64 / 1e3
}

/// What [`write()`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceSummary {
    /// Events written (spans, kernels and counter samples; not metadata).
    pub events: usize,
    /// Events dropped at the cap.
    pub dropped: u64,
}

/// The timeline as Chrome trace-event JSON. Ranges still open end at the current time, marked
/// with `"open": true`.
pub fn to_json() -> (String, TraceSummary) {
    let pid = std::process::id();
    let now = clock::now();
    let mut events = Vec::new();
    let process = std::env::args()
        .next()
        .and_then(|p| {
            Path::new(&p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "burn".to_owned());
    let metadata = |name: &'static str, tid: u32, value: String| Event {
        name,
        cat: "",
        ph: "M",
        ts: 0.0,
        dur: None,
        pid,
        tid,
        s: None,
        id: None,
        bp: None,
        args: [("name".to_owned(), serde_json::Value::String(value))]
            .into_iter()
            .collect(),
    };
    events.push(metadata("process_name", 0, process));
    let threads = threads();
    let threads: Vec<_> = threads.iter().map(|t| lock(t)).collect();
    let mut names: HashMap<u32, String> = HashMap::new();
    for thread in &threads {
        let name = thread
            .name
            .clone()
            .unwrap_or_else(|| format!("thread {}", thread.tid));
        names.insert(thread.tid, name);
    }
    // Names given with `nvtx::name_current_thread` win, also for threads that recorded nothing.
    names.extend(thread::names());
    // With several devices, each track says the devices its ops ran on: `training [Cuda(1)]`.
    let mut all_devices: Vec<u32> = threads.iter().flat_map(|t| t.devices.clone()).collect();
    all_devices.sort_unstable();
    all_devices.dedup();
    if all_devices.len() > 1 {
        for thread in threads.iter().filter(|t| !t.devices.is_empty()) {
            let devices: Vec<String> = thread.devices.iter().map(|d| device::name(*d)).collect();
            if let Some(name) = names.get_mut(&thread.tid) {
                *name = format!("{name} [{}]", devices.join(", "));
            }
        }
    }
    for (tid, name) in names {
        events.push(metadata("thread_name", tid, name));
    }
    let mut spans = 0;
    // Kineto's `External id`: one per CPU span, which a kernel's args name for its op.
    let mut external_ids: HashMap<(u32, Duration), u64> = HashMap::new();
    for thread in &threads {
        let open = thread
            .open_ranges
            .iter()
            .map(|(name, start)| (name.as_str(), "user_annotation", *start, now, true, None));
        let finished = thread.spans.iter().map(|s| {
            let dims = s.input_dims.as_deref();
            (s.name.as_ref(), s.category, s.start, s.end, false, dims)
        });
        let mut all: Vec<_> = finished.chain(open).collect();
        // Chrome nests complete events by start time; the outer one first at equal starts.
        all.sort_by(|a, b| a.2.cmp(&b.2).then(b.3.cmp(&a.3)));
        for (name, category, start, end, open, input_dims) in all {
            spans += 1;
            let mut args = serde_json::Map::new();
            if open {
                args.insert("open".to_owned(), serde_json::Value::Bool(true));
            }
            if category != "stopwatch" {
                let external_id = external_ids.len() as u64 + 1;
                if category == "cpu_op" {
                    external_ids.insert((thread.tid, start), external_id);
                }
                args.insert("External id".to_owned(), external_id.into());
            }
            if let Some(dims) = input_dims {
                args.insert("Input Dims".to_owned(), serde_json::json!(dims));
            }
            events.push(Event {
                name,
                cat: category,
                ph: "X",
                ts: micros(start),
                dur: Some(micros(end.saturating_sub(start))),
                pid,
                tid: thread.tid,
                s: None,
                id: None,
                bp: None,
                args,
            });
        }
    }
    fwdbwd_flows(&threads, pid, &mut events);
    let kernels = lock(&KERNELS);
    let mut tracks: Vec<(u32, u32)> = kernels.iter().map(|k| (k.device, k.stream)).collect();
    tracks.sort_unstable();
    tracks.dedup();
    let mut devices: Vec<u32> = tracks.iter().map(|(device, _)| *device).collect();
    devices.dedup();
    // As Kineto: a process per device (`pid` the device id), a thread per stream.
    for &device in &devices {
        events.push(Event {
            pid: device,
            ..metadata("process_name", 0, format!("GPU {device}"))
        });
    }
    for &(device, stream) in &tracks {
        events.push(Event {
            pid: device,
            ..metadata("thread_name", stream, format!("stream {stream}"))
        });
    }
    for kernel in kernels.iter() {
        spans += 1;
        let external_id = external_ids.get(&kernel.launched_by).copied();
        let shape = &kernel.shape;
        let mut args = serde_json::Map::new();
        if let Some(id) = external_id {
            args.insert("External id".to_owned(), id.into());
        }
        for (key, value) in [
            ("device", serde_json::json!(kernel.device)),
            ("context", serde_json::json!(shape.context)),
            ("stream", serde_json::json!(kernel.stream)),
            ("correlation", serde_json::json!(kernel.correlation)),
            (
                "registers per thread",
                serde_json::json!(shape.registers_per_thread),
            ),
            ("shared memory", serde_json::json!(shape.shared_memory)),
            ("grid", serde_json::json!(shape.grid)),
            ("block", serde_json::json!(shape.block)),
        ] {
            args.insert(key.to_owned(), value);
        }
        events.push(Event {
            name: &kernel.name,
            cat: "kernel",
            ph: "X",
            ts: micros(kernel.start),
            dur: Some(micros(kernel.end.saturating_sub(kernel.start))),
            pid: kernel.device,
            tid: kernel.stream,
            s: None,
            id: None,
            bp: None,
            args,
        });
        // The flow starts at the launch call, or at the op without the call's record.
        let (flow_tid, flow_ts) = match kernel.launch {
            Some(call) => {
                let mut args = serde_json::Map::new();
                args.insert("cbid".to_owned(), call.cbid.into());
                args.insert("correlation".to_owned(), kernel.correlation.into());
                if let Some(id) = external_id {
                    args.insert("External id".to_owned(), id.into());
                }
                events.push(Event {
                    name: driver_call_name(call.cbid),
                    cat: "cuda_driver",
                    ph: "X",
                    ts: micros(call.start),
                    dur: Some(micros(call.end.saturating_sub(call.start))),
                    pid,
                    tid: call.tid,
                    s: None,
                    id: None,
                    bp: None,
                    args,
                });
                (call.tid, call.start)
            }
            None => kernel.launched_by,
        };
        let flow = |ph, ts, (pid, tid), bp| Event {
            name: "ac2g",
            cat: "ac2g",
            ph,
            ts: micros(ts),
            dur: None,
            pid,
            tid,
            s: None,
            id: Some(u64::from(kernel.correlation)),
            bp,
            args: serde_json::Map::new(),
        };
        events.push(flow("s", flow_ts, (pid, flow_tid), None));
        events.push(flow(
            "f",
            kernel.start,
            (kernel.device, kernel.stream),
            Some("e"),
        ));
    }
    let counters = lock(&COUNTERS);
    for counter in counters.iter() {
        spans += 1;
        events.push(Event {
            name: &counter.name,
            cat: "memory",
            ph: "C",
            ts: micros(counter.at),
            dur: None,
            pid,
            tid: 0,
            s: None,
            id: None,
            bp: None,
            args: counter
                .values
                .iter()
                .map(|(name, value)| ((*name).to_owned(), serde_json::json!(value)))
                .collect(),
        });
    }
    let dropped = DROPPED.load(Ordering::Relaxed);
    let mut other = serde_json::Map::new();
    other.insert("format_version".to_owned(), FORMAT_VERSION.into());
    other.insert("dropped_events".to_owned(), dropped.into());
    other.insert(
        "max_events".to_owned(),
        MAX_EVENTS.load(Ordering::Relaxed).into(),
    );
    let note = format!(
        "trace truncated: {dropped} events dropped after the cap of {} events",
        MAX_EVENTS.load(Ordering::Relaxed)
    );
    if dropped > 0 {
        events.push(Event {
            name: &note,
            cat: "burn-profiled",
            ph: "i",
            ts: micros(Duration::from_nanos(FIRST_DROP_NS.load(Ordering::Relaxed))),
            dur: None,
            pid,
            tid: 0,
            s: Some("g"),
            id: None,
            bp: None,
            args: serde_json::Map::new(),
        });
    }
    /// The file, serialized straight from the events (no `Value` tree of a million events).
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct TraceFile<'a> {
        schema_version: u32,
        device_properties: Vec<serde_json::Map<String, serde_json::Value>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        distributed_info: Option<serde_json::Value>,
        /// The Unix time of `ts` 0, in ns.
        base_time_nanoseconds: u64,
        trace_events: &'a [Event<'a>],
        display_time_unit: &'static str,
        other_data: serde_json::Map<String, serde_json::Value>,
    }
    let mut device_properties = lock(&DEVICE_PROPERTIES).clone();
    for &device in &devices {
        if !device_properties.iter().any(|(id, _)| *id == device) {
            device_properties.push((device, serde_json::Map::new()));
        }
    }
    device_properties.sort_by_key(|(id, _)| *id);
    let process_devices = lock(&PROCESS_DEVICES).clone();
    let unix_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let file = TraceFile {
        schema_version: 1,
        device_properties: device_properties
            .into_iter()
            .map(|(id, mut properties)| {
                properties.insert("id".to_owned(), id.into());
                properties
            })
            .collect(),
        // Burn drives several devices from one process: one rank, as PyTorch would call it.
        distributed_info: (process_devices.len() > 1).then(|| {
            serde_json::json!({
                "backend": "burn",
                "rank": 0,
                "world_size": 1,
                "devices": process_devices,
            })
        }),
        base_time_nanoseconds: unix_now.saturating_sub(now).as_nanos() as u64,
        trace_events: &events,
        display_time_unit: "ns",
        other_data: other,
    };
    (
        serde_json::to_string(&file).unwrap_or_default(),
        TraceSummary {
            events: spans,
            dropped,
        },
    )
}

/// Writes the timeline to `path` (through a temporary file, so a reader never sees half a
/// file).
pub fn write(path: impl AsRef<Path>) -> std::io::Result<TraceSummary> {
    let path = path.as_ref();
    let (json, summary) = to_json();
    crate::files::write_atomically(path, &[json.as_bytes()])?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::context::device::tests::{Gpu, gpu_id};
    use crate::context::op::Op;
    use crate::sinks::TEST_SERIAL;

    fn track_names() -> Vec<String> {
        let (json, _) = super::to_json();
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        json["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn with_several_devices_each_track_names_its_devices() {
        let _serial = TEST_SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        static OP: Op = Op::new("trace_device_op\0");
        super::clear();
        super::start(super::TraceConfig::default());
        let run_on = |name: &str, gpu: u16| {
            let id = gpu_id(&Gpu(gpu));
            std::thread::Builder::new()
                .name(name.to_owned())
                .spawn(move || {
                    let at = crate::context::clock::now();
                    super::record_op(&OP, (at, at + Duration::from_micros(1)), id, None, (0, 0));
                })
                .unwrap()
                .join()
                .unwrap();
        };
        run_on("replica a", 0);
        let names = track_names();
        assert!(
            names.contains(&"replica a".to_owned()),
            "one device: {names:?}"
        );
        run_on("replica b", 1);
        super::stop();
        let names = track_names();
        super::clear();
        assert!(
            names.contains(&"replica a [Gpu(0)]".to_owned()),
            "{names:?}"
        );
        assert!(
            names.contains(&"replica b [Gpu(1)]".to_owned()),
            "{names:?}"
        );
    }
}
