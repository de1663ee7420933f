//! A stand-in `libcupti.so` for burn-profiled's tests on machines without a GPU: the part of
//! CUPTI's activity API that device time per op uses, over synthetic kernel launches.
//!
//! Copy `libcupti_standin.so` to a directory as `libcupti.so`, and start the program with that
//! directory first on `LD_LIBRARY_PATH` (never put it where a real program would find it).
//!
//! What it does as CUPTI does:
//! - one subscriber at a time; with `CUPTI_STANDIN_BUSY` set, another client holds CUPTI and
//!   `cuptiSubscribe` fails with `CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED`;
//! - a stack of external correlation ids per thread and kind;
//! - at each launch, one `EXTERNAL_CORRELATION` record per kind with an open id, written only
//!   while an API kind (`DRIVER` or `RUNTIME`) is enabled, as CUPTI writes them ahead of an API
//!   record; then the `DRIVER` record (a `cuLaunchKernel` call, with the calling thread's
//!   `pthread_self` cut to 32 bits as its thread id); then the kernel record
//!   (`CONCURRENT_KERNEL`);
//! - kernels run one after another on each stream; host and device records go to separate
//!   buffers, requested from the client, and a flush hands the device buffer over first, so a
//!   kernel arrives before the record that ties it to its op;
//! - `cuptiActivityFlushAll(0)` holds back a buffer while a kernel in it runs.
//!
//! One liberty: a forced flush waits for the kernels launched so far to end before it hands
//! everything over, as if the device had been synced. burn-profiled forces a flush only right
//! after a device sync, and nothing here can make a backend's sync wait for this stand-in's
//! kernels.
//!
//! What stands in for the GPU: a thread "launches" one kernel each time it pushes an external
//! id (the op launches it right after tagging its launches), and at [`cupti_standin_launch`].
//! Each launch call takes [`CALL_NS`]; each kernel takes [`KERNEL_NS`] (or
//! `CUPTI_STANDIN_KERNEL_NS`, in ns), on streams 13 and 14 in turn, and is named
//! `standin_kernel`.
//! Records are the layouts of cudarc's bindings of NVIDIA's headers (`CUpti_ActivityKernel4`
//! for kernels).

#![allow(non_snake_case)]

use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use cudarc::cupti::sys;
use sys::CUpti_ActivityKind as Kind;
use sys::CUpti_ExternalCorrelationKind as ExternalKind;
use sys::CUptiResult as Result;

/// How long each kernel runs, in ns, unless `CUPTI_STANDIN_KERNEL_NS` says otherwise.
pub const KERNEL_NS: u64 = 1_000;
/// How long each launch call takes, in ns.
pub const CALL_NS: u64 = 2_000;
const STREAMS: [u32; 2] = [13, 14];
const KERNEL_NAME: &std::ffi::CStr = c"standin_kernel";
const ALIGN: usize = 8;

struct Buffer {
    memory: *mut u8,
    size: usize,
    used: usize,
    /// When the last kernel recorded here ends (0 without kernels).
    last_end: u64,
}
// SAFETY: the memory is the client's, handed to this library until it is completed.
unsafe impl Send for Buffer {}

struct State {
    subscribed: bool,
    enabled: Vec<u32>,
    request: sys::CUpti_BuffersCallbackRequestFunc,
    complete: sys::CUpti_BuffersCallbackCompleteFunc,
    host: Option<Buffer>,
    device: Option<Buffer>,
    next_correlation: u32,
    stream_free_at: [u64; 2],
    /// Kernels launched, by OS thread id.
    launches_by_thread: Vec<(u64, u64)>,
}

static STATE: Mutex<State> = Mutex::new(State {
    subscribed: false,
    enabled: Vec::new(),
    request: None,
    complete: None,
    host: None,
    device: None,
    next_correlation: 1,
    stream_free_at: [0; 2],
    launches_by_thread: Vec::new(),
});
static OPEN_TAGS: AtomicI64 = AtomicI64::new(0);
static BUFFERS_HELD: AtomicI64 = AtomicI64::new(0);
/// Records that found no room (no buffer, or one too small or misaligned), since they were
/// last reported.
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// The handle given to the subscriber: only compared, never dereferenced.
static SUBSCRIBER_TOKEN: u8 = 0;

thread_local! {
    /// This thread's external ids, innermost last, with their kinds.
    static TAGS: RefCell<Vec<(ExternalKind, u64)>> = const { RefCell::new(Vec::new()) };
}

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn os_thread_id() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

fn kernel_ns() -> u64 {
    static NS: OnceLock<u64> = OnceLock::new();
    *NS.get_or_init(|| {
        std::env::var("CUPTI_STANDIN_KERNEL_NS")
            .ok()
            .and_then(|ns| ns.parse().ok())
            .unwrap_or(KERNEL_NS)
    })
}

fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    // A large base, as CUPTI's timestamps are far from any process clock's.
    1 << 50 | EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The external-correlation kind `kind` names, if any.
fn external_kind(kind: u32) -> Option<ExternalKind> {
    [
        ExternalKind::CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN,
        ExternalKind::CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC,
        ExternalKind::CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
        ExternalKind::CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1,
        ExternalKind::CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
    ]
    .into_iter()
    .find(|&known| known as u32 == kind)
}

fn record_size(kind: u32) -> Option<usize> {
    let size = match kind {
        k if k == Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32 => {
            size_of::<sys::CUpti_ActivityKernel4>()
        }
        k if k == Kind::CUPTI_ACTIVITY_KIND_DRIVER as u32 => size_of::<sys::CUpti_ActivityAPI>(),
        k if k == Kind::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION as u32 => {
            size_of::<sys::CUpti_ActivityExternalCorrelation>()
        }
        _ => return None,
    };
    Some(size.next_multiple_of(ALIGN))
}

impl State {
    fn is_on(&self, kind: Kind) -> bool {
        self.enabled.contains(&(kind as u32))
    }

    /// Writes `record`, ending at `end` (0: not a kernel), to the host or device buffer; a
    /// buffer it does not fit in is full and returned, to be completed once the lock is
    /// released.
    fn append<T: Copy>(&mut self, device: bool, (record, end): (T, u64), full: &mut Vec<Buffer>) {
        const { assert!(align_of::<T>() <= ALIGN) };
        let size = size_of::<T>().next_multiple_of(ALIGN);
        let request = self.request;
        let queue = if device {
            &mut self.device
        } else {
            &mut self.host
        };
        if queue.as_ref().is_some_and(|b| b.used + size > b.size) {
            full.extend(queue.take());
        }
        if queue.is_none()
            && let Some(request) = request
        {
            let (mut memory, mut capacity, mut max_records) = (std::ptr::null_mut(), 0, 0);
            // SAFETY: the client's callback, given valid out-pointers. It runs under the
            // stand-in's lock: a client that called CUPTI from it would deadlock here.
            unsafe { request(&mut memory, &mut capacity, &mut max_records) };
            if !memory.is_null() {
                BUFFERS_HELD.fetch_add(1, Ordering::Relaxed);
                let buffer = Buffer {
                    memory,
                    size: capacity,
                    used: 0,
                    last_end: 0,
                };
                if (memory as usize).is_multiple_of(ALIGN) {
                    *queue = Some(buffer);
                } else {
                    // Handed back empty.
                    full.push(buffer);
                }
            }
        }
        let Some(buffer) = queue.as_mut().filter(|b| b.used + size <= b.size) else {
            DROPPED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        // SAFETY: in bounds (checked above) and aligned to 8.
        unsafe { std::ptr::write(buffer.memory.add(buffer.used).cast::<T>(), record) };
        buffer.used += size;
        buffer.last_end = buffer.last_end.max(end);
    }

    /// A kernel launch from this thread, tagged with its open external ids.
    fn launch(&mut self, tags: &[(ExternalKind, u64)], full: &mut Vec<Buffer>) {
        let thread = os_thread_id();
        match self
            .launches_by_thread
            .iter_mut()
            .find(|(tid, _)| *tid == thread)
        {
            Some((_, launches)) => *launches += 1,
            None => self.launches_by_thread.push((thread, 1)),
        }
        let correlation = self.next_correlation;
        self.next_correlation += 1;
        let api_on = self.is_on(Kind::CUPTI_ACTIVITY_KIND_DRIVER)
            || self.is_on(Kind::CUPTI_ACTIVITY_KIND_RUNTIME);
        if api_on && self.is_on(Kind::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
            let mut kinds_seen = Vec::new();
            for &(kind, id) in tags.iter().rev() {
                if kinds_seen.contains(&kind) {
                    continue;
                }
                kinds_seen.push(kind);
                // SAFETY: an all-zero record is valid (zero is each enum's INVALID value).
                let mut record: sys::CUpti_ActivityExternalCorrelation =
                    unsafe { std::mem::zeroed() };
                record.kind = Kind::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
                record.externalKind = kind;
                record.externalId = id;
                record.correlationId = correlation;
                self.append(false, (record, 0), full);
            }
        }
        let start = now_ns();
        if self.is_on(Kind::CUPTI_ACTIVITY_KIND_DRIVER) {
            // SAFETY: as above.
            let mut record: sys::CUpti_ActivityAPI = unsafe { std::mem::zeroed() };
            record.kind = Kind::CUPTI_ACTIVITY_KIND_DRIVER;
            record.cbid =
                sys::CUpti_driver_api_trace_cbid::CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel as u32;
            record.start = start;
            // The call takes its time, as a real launch does (a span tools can see).
            while now_ns() < start + CALL_NS {
                std::hint::spin_loop();
            }
            record.end = now_ns();
            record.processId = std::process::id();
            // As CUPTI: the calling thread's pthread id, cut to 32 bits.
            // SAFETY: pthread_self has no preconditions.
            record.threadId = unsafe { libc::pthread_self() } as u32;
            record.correlationId = correlation;
            self.append(false, (record, 0), full);
        }
        if self.is_on(Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            let lane = correlation as usize % STREAMS.len();
            let begin = start.max(self.stream_free_at[lane]);
            let end = begin.saturating_add(kernel_ns());
            self.stream_free_at[lane] = end;
            // SAFETY: as above.
            let mut record: sys::CUpti_ActivityKernel4 = unsafe { std::mem::zeroed() };
            record.kind = Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            record.start = begin;
            record.end = end;
            record.completed = end;
            record.contextId = 1;
            record.streamId = STREAMS[lane];
            record.gridX = 1;
            record.gridY = 1;
            record.gridZ = 1;
            record.correlationId = correlation;
            record.name = KERNEL_NAME.as_ptr();
            self.append(true, (record, end), full);
        }
    }
}

/// Hands `buffers` to the client, without the lock held (the client reads them through
/// `cuptiActivityGetNextRecord`).
fn complete(buffers: Vec<Buffer>) {
    let Some(complete) = state().complete else {
        return;
    };
    for buffer in buffers {
        BUFFERS_HELD.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the client's buffer, with `used` bytes of records written above.
        unsafe {
            complete(
                std::ptr::null_mut(),
                0,
                buffer.memory,
                buffer.size,
                buffer.used,
            )
        };
    }
}

fn launch_here() {
    let mut full = Vec::new();
    TAGS.with(|tags| state().launch(&tags.borrow(), &mut full));
    complete(full);
}

/// `cuptiSubscribe`: one subscriber at a time.
///
/// # Safety
/// `subscriber` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiSubscribe(
    subscriber: *mut sys::CUpti_SubscriberHandle,
    _callback: sys::CUpti_CallbackFunc,
    _userdata: *mut std::ffi::c_void,
) -> Result {
    let mut state = state();
    if state.subscribed || std::env::var_os("CUPTI_STANDIN_BUSY").is_some() {
        return Result::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    if subscriber.is_null() {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    }
    state.subscribed = true;
    // SAFETY: checked non-null; the client's out-pointer.
    unsafe { *subscriber = (&raw const SUBSCRIBER_TOKEN).cast_mut().cast() };
    Result::CUPTI_SUCCESS
}

/// `cuptiUnsubscribe`.
#[unsafe(no_mangle)]
pub extern "C" fn cuptiUnsubscribe(subscriber: sys::CUpti_SubscriberHandle) -> Result {
    let mut state = state();
    if !state.subscribed || subscriber.cast_const().cast() != &raw const SUBSCRIBER_TOKEN {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    }
    state.subscribed = false;
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityRegisterCallbacks`.
#[unsafe(no_mangle)]
pub extern "C" fn cuptiActivityRegisterCallbacks(
    request: sys::CUpti_BuffersCallbackRequestFunc,
    complete: sys::CUpti_BuffersCallbackCompleteFunc,
) -> Result {
    if request.is_none() || complete.is_none() {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    }
    let mut state = state();
    state.request = request;
    state.complete = complete;
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityEnable`: the kinds this stand-in writes.
#[unsafe(no_mangle)]
pub extern "C" fn cuptiActivityEnable(kind: u32) -> Result {
    let known = record_size(kind).is_some() || kind == Kind::CUPTI_ACTIVITY_KIND_RUNTIME as u32;
    if !known {
        return Result::CUPTI_ERROR_NOT_COMPATIBLE;
    }
    let mut state = state();
    if !state.enabled.contains(&kind) {
        state.enabled.push(kind);
    }
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityDisable`.
#[unsafe(no_mangle)]
pub extern "C" fn cuptiActivityDisable(kind: u32) -> Result {
    state().enabled.retain(|&k| k != kind);
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityFlushAll`: the device buffer first, held back while a kernel in it runs
/// unless forced; forced, after the kernels launched so far ended (see the crate's docs).
#[unsafe(no_mangle)]
pub extern "C" fn cuptiActivityFlushAll(flag: u32) -> Result {
    let forced = flag & sys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32 != 0;
    if forced {
        let last_end = state().stream_free_at.into_iter().max().unwrap_or(0);
        std::thread::sleep(std::time::Duration::from_nanos(
            last_end.saturating_sub(now_ns()),
        ));
    }
    let buffers = {
        let mut state = state();
        let now = now_ns();
        let device = state
            .device
            .take_if(|buffer| forced || buffer.last_end <= now);
        let host = state.host.take();
        device.into_iter().chain(host).collect()
    };
    complete(buffers);
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityPushExternalCorrelationId`.
#[unsafe(no_mangle)]
pub extern "C" fn cuptiActivityPushExternalCorrelationId(kind: u32, id: u64) -> Result {
    let Some(kind) = external_kind(kind) else {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    };
    TAGS.with(|tags| tags.borrow_mut().push((kind, id)));
    OPEN_TAGS.fetch_add(1, Ordering::Relaxed);
    launch_here();
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityPopExternalCorrelationId`.
///
/// # Safety
/// `last` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityPopExternalCorrelationId(
    kind: u32,
    last: *mut u64,
) -> Result {
    let Some(kind) = external_kind(kind) else {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    };
    let open = TAGS.with(|tags| tags.borrow().iter().any(|&(k, _)| k == kind));
    if !open {
        return Result::CUPTI_ERROR_QUEUE_EMPTY;
    }
    let popped = TAGS.with(|tags| {
        let mut tags = tags.borrow_mut();
        let at = tags.iter().rposition(|&(k, _)| k == kind)?;
        Some(tags.remove(at).1)
    });
    OPEN_TAGS.fetch_sub(1, Ordering::Relaxed);
    if !last.is_null() {
        // SAFETY: the client's out-pointer, checked non-null.
        unsafe { *last = popped.unwrap_or(0) };
    }
    Result::CUPTI_SUCCESS
}

/// `cuptiGetTimestamp`: the clock kernel records are on.
///
/// # Safety
/// `timestamp` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetTimestamp(timestamp: *mut u64) -> Result {
    if timestamp.is_null() {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: the client's out-pointer, checked non-null.
    unsafe { *timestamp = now_ns() };
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityGetNextRecord`: walks a completed buffer.
///
/// # Safety
/// `buffer` holds `valid` bytes written by this library; `record` is null or the last record
/// returned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityGetNextRecord(
    buffer: *mut u8,
    valid: usize,
    record: *mut *mut sys::CUpti_Activity,
) -> Result {
    if buffer.is_null() || record.is_null() {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: the caller's contract.
    let offset = unsafe {
        let current = *record;
        if current.is_null() {
            0
        } else {
            let kind = *current.cast::<u32>();
            let Some(size) = record_size(kind) else {
                return Result::CUPTI_ERROR_INVALID_KIND;
            };
            current.cast::<u8>().offset_from(buffer) as usize + size
        }
    };
    if offset >= valid {
        return Result::CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    // SAFETY: `offset` is within the valid bytes.
    unsafe { *record = buffer.add(offset).cast() };
    Result::CUPTI_SUCCESS
}

/// `cuptiActivityGetNumDroppedRecords`: the records dropped since the last call.
///
/// # Safety
/// `dropped` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityGetNumDroppedRecords(
    _context: cudarc::driver::sys::CUcontext,
    _stream: u32,
    dropped: *mut usize,
) -> Result {
    if dropped.is_null() {
        return Result::CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: the client's out-pointer, checked non-null.
    unsafe { *dropped = DROPPED.swap(0, Ordering::Relaxed) as usize };
    Result::CUPTI_SUCCESS
}

/// Launches a kernel from the calling thread, tagged with its open external ids (none: a
/// kernel no op launched).
#[unsafe(no_mangle)]
pub extern "C" fn cupti_standin_launch() {
    launch_here();
}

/// Kernels launched so far.
#[unsafe(no_mangle)]
pub extern "C" fn cupti_standin_launches() -> u64 {
    state()
        .launches_by_thread
        .iter()
        .map(|(_, launches)| launches)
        .sum()
}

/// Kernels launched so far from the OS thread `tid` (`gettid`).
#[unsafe(no_mangle)]
pub extern "C" fn cupti_standin_launches_from(tid: u64) -> u64 {
    state()
        .launches_by_thread
        .iter()
        .find(|(thread, _)| *thread == tid)
        .map_or(0, |(_, launches)| *launches)
}

/// 1 while a client is subscribed.
#[unsafe(no_mangle)]
pub extern "C" fn cupti_standin_subscribed() -> u32 {
    u32::from(state().subscribed)
}

/// Activity kinds enabled now.
#[unsafe(no_mangle)]
pub extern "C" fn cupti_standin_enabled_kinds() -> u32 {
    state().enabled.len() as u32
}

/// Buffers taken from the client and not handed back yet.
#[unsafe(no_mangle)]
pub extern "C" fn cupti_standin_buffers_held() -> i64 {
    BUFFERS_HELD.load(Ordering::Relaxed)
}

/// External ids pushed and not popped, over all threads.
#[unsafe(no_mangle)]
pub extern "C" fn cupti_standin_open_tags() -> i64 {
    OPEN_TAGS.load(Ordering::Relaxed)
}
