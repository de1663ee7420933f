//! Global recorder state: the bounded event buffer, the domain and string
//! handle tables, and per-thread state (cached OS thread id, push/pop depths).
//!
//! Nothing here may panic: it runs inside `extern "C"` NVTX callbacks.

use crate::event::{Event, Kind, Message, Payload};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

/// Default for `NVTX_RECORDER_LIMIT`.
pub(crate) const DEFAULT_LIMIT: usize = 1_000_000;

/// A message as the hook received it, before a registered handle is resolved.
pub(crate) enum RawMessage {
    None,
    Ascii(String),
    Unicode(String),
    /// 1-based string handle index.
    Registered(usize),
}

/// An event as the hook built it; [`record`] adds time, thread and names.
pub(crate) struct Raw {
    pub kind: Kind,
    /// 1-based domain handle index; 0 is the global API / NULL (default) domain.
    pub domain: usize,
    pub depth: i32,
    pub message: RawMessage,
    pub category: Option<u32>,
    pub color: Option<u32>,
    pub payload: Option<Payload>,
    pub range_id: Option<u64>,
    pub handle: Option<u64>,
}

impl Raw {
    pub(crate) fn new(kind: Kind, domain: usize) -> Self {
        Raw {
            kind,
            domain,
            depth: 0,
            message: RawMessage::None,
            category: None,
            color: None,
            payload: None,
            range_id: None,
            handle: None,
        }
    }
}

struct Store {
    events: Vec<Event>,
    /// Events ever offered to [`record`], including dropped ones.
    total: u64,
    /// Domain names; handle `h` is `domains[h - 1]`.
    domains: Vec<String>,
    /// Registered strings; handle `h` is `strings[h - 1]`.
    strings: Vec<String>,
}

static STORE: Mutex<Store> = Mutex::new(Store {
    events: Vec::new(),
    total: 0,
    domains: Vec::new(),
    strings: Vec::new(),
});
static ATTACHED: AtomicBool = AtomicBool::new(false);
static NEXT_RANGE_ID: AtomicU64 = AtomicU64::new(1);
static START: OnceLock<Instant> = OnceLock::new();
static LIMIT: OnceLock<usize> = OnceLock::new();

thread_local! {
    static TID: Cell<u64> = const { Cell::new(0) };
    /// Open push/pop ranges per domain index on this thread (small linear map).
    static DEPTHS: RefCell<Vec<(usize, i32)>> = const { RefCell::new(Vec::new()) };
}

fn lock() -> MutexGuard<'static, Store> {
    STORE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The clock origin for `ts_ns`; fixed at the first call (tool init).
pub(crate) fn start() -> Instant {
    *START.get_or_init(Instant::now)
}

/// `NVTX_RECORDER_LIMIT`, read once; [`DEFAULT_LIMIT`] when unset or unparsable.
pub(crate) fn limit() -> usize {
    *LIMIT.get_or_init(|| {
        std::env::var("NVTX_RECORDER_LIMIT")
            .ok()
            .and_then(|v| v.trim().replace('_', "").parse().ok())
            .unwrap_or(DEFAULT_LIMIT)
    })
}

pub(crate) fn set_attached() {
    ATTACHED.store(true, Ordering::Release);
}

pub(crate) fn is_attached() -> bool {
    ATTACHED.load(Ordering::Acquire)
}

pub(crate) fn next_range_id() -> u64 {
    NEXT_RANGE_ID.fetch_add(1, Ordering::Relaxed)
}

#[cfg(target_os = "linux")]
fn os_tid() -> u64 {
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    u64::try_from(tid).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
fn os_tid() -> u64 {
    // No gettid: hand out process-unique ids instead.
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The calling thread's OS thread id, cached per thread.
pub(crate) fn current_tid() -> u64 {
    TID.try_with(|cell| {
        if cell.get() == 0 {
            cell.set(os_tid());
        }
        cell.get()
    })
    .unwrap_or_else(|_| os_tid())
}

/// Runs `f` on this thread's open-range count for `domain`. `None` if the
/// thread-local is gone (thread teardown) or busy.
fn with_depth<R>(domain: usize, f: impl FnOnce(&mut i32) -> R) -> Option<R> {
    DEPTHS
        .try_with(|depths| {
            let mut depths = depths.try_borrow_mut().ok()?;
            let pos = match depths.iter().position(|(d, _)| *d == domain) {
                Some(pos) => pos,
                None => {
                    depths.push((domain, 0));
                    depths.len() - 1
                }
            };
            Some(f(&mut depths[pos].1))
        })
        .ok()
        .flatten()
}

/// A push: returns the 0-based level of the new range.
pub(crate) fn push_level(domain: usize) -> i32 {
    with_depth(domain, |open| {
        let level = *open;
        *open = open.saturating_add(1);
        level
    })
    .unwrap_or(0)
}

/// A pop: returns the level of the popped range, or -1 if none was open.
pub(crate) fn pop_level(domain: usize) -> i32 {
    with_depth(domain, |open| {
        if *open > 0 {
            *open -= 1;
            *open
        } else {
            -1
        }
    })
    .unwrap_or(-1)
}

/// The number of push ranges open in `domain` on this thread.
pub(crate) fn open_ranges(domain: usize) -> i32 {
    with_depth(domain, |open| *open).unwrap_or(0)
}

/// Adds a domain name; returns its 1-based handle index.
pub(crate) fn add_domain(name: String) -> usize {
    let mut store = lock();
    store.domains.push(name);
    store.domains.len()
}

/// Adds a registered string; returns its 1-based handle index.
pub(crate) fn add_string(text: String) -> usize {
    let mut store = lock();
    store.strings.push(text);
    store.strings.len()
}

fn lookup(table: &[String], handle: usize, what: &str) -> String {
    handle
        .checked_sub(1)
        .and_then(|i| table.get(i))
        .cloned()
        .unwrap_or_else(|| format!("<unknown {what} {handle}>"))
}

/// Records one event (or counts it as dropped once the buffer is full).
pub(crate) fn record(raw: Raw) {
    let tid = current_tid();
    let limit = limit();
    let start = start();
    let mut store = lock();
    store.total += 1;
    if store.events.len() >= limit {
        return;
    }
    // Taken under the lock, so the buffer is in timestamp order.
    let ts_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let domain = (raw.domain != 0).then(|| lookup(&store.domains, raw.domain, "domain"));
    let message = match raw.message {
        RawMessage::None => Message::None,
        RawMessage::Ascii(s) => Message::Ascii(s),
        RawMessage::Unicode(s) => Message::Unicode(s),
        RawMessage::Registered(h) => Message::Registered(lookup(&store.strings, h, "string")),
    };
    store.events.push(Event {
        ts_ns,
        tid,
        kind: raw.kind,
        domain,
        depth: raw.depth,
        message,
        category: raw.category,
        color: raw.color,
        payload: raw.payload,
        range_id: raw.range_id,
        handle: raw.handle,
    });
}

/// A copy of the recorded events and the total count, taken atomically.
pub(crate) fn snapshot() -> (Vec<Event>, u64) {
    let store = lock();
    (store.events.clone(), store.total)
}

pub(crate) fn events_where(pred: impl Fn(&Event) -> bool) -> Vec<Event> {
    lock().events.iter().filter(|e| pred(e)).cloned().collect()
}

pub(crate) fn counts() -> (u64, usize) {
    let store = lock();
    (store.total, store.events.len())
}
