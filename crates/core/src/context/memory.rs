//! Memory as the op path sees it: a device's memory at one moment (read through its launch
//! thread), the host allocations counted by the opt-in [`TrackingAllocator`], and the step the
//! run is at.
//!
//! # Why a tracking allocator of our own
//! Attributing an allocation to the op that made it needs per-thread counts: the op reads its
//! thread's counts when it starts and when it ends. `stats_alloc`, `cap` and `peak_alloc` count
//! for the whole process (every thread's allocations in every op's delta); `dhat` is a heap
//! profiler with its own output and a backtrace per allocation (far too slow to leave on);
//! `tracking-allocator` has per-thread groups but calls a tracker object per allocation, keeps a
//! group header in every block and had its last release in 2022. What this needs is two
//! thread-local additions and one atomic per allocation, which is what this allocator does.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use serde::Serialize;

use super::live_allocations;

/// A device's memory at one moment, as its backend's allocator reports it (CubeCL's
/// `memory_usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DeviceMemory {
    /// Live allocations (CubeCL: active slices).
    pub allocations: u64,
    /// Bytes held by live allocations.
    pub in_use_bytes: u64,
    /// Bytes the allocator holds from the device (its pools), in use or not.
    pub reserved_bytes: u64,
}

impl std::ops::Add for DeviceMemory {
    type Output = DeviceMemory;

    fn add(self, other: DeviceMemory) -> DeviceMemory {
        DeviceMemory {
            allocations: self.allocations + other.allocations,
            in_use_bytes: self.in_use_bytes + other.in_use_bytes,
            reserved_bytes: self.reserved_bytes + other.reserved_bytes,
        }
    }
}

/// Reads a device's memory: of the stream given (CubeCL keeps a memory pool per stream, one
/// stream per thread that runs ops), or of the calling thread's stream (`None`).
pub type MemoryReader = dyn Fn(Option<u64>) -> Option<DeviceMemory> + Send + Sync;

/// A global allocator that counts the host memory each thread allocates and frees, so that
/// per-op memory (`[memory] per_op`) can say which op allocated what on host backends
/// (NdArray). Install it with one line in your binary; without it, per-op memory covers only
/// devices that report their own (CubeCL's), and the op table says host allocations were not
/// tracked.
///
/// ```
/// # mod burn_profiled {
/// #     pub mod memory {
/// #         pub use burn_profiled_core::context::memory::TrackingAllocator;
/// #     }
/// # }
/// use burn_profiled::memory::TrackingAllocator;
///
/// #[global_allocator]
/// static ALLOCATOR: TrackingAllocator = TrackingAllocator::system();
/// ```
///
/// It forwards every call to the allocator it wraps (`System` by default) and adds, per
/// allocation, two thread-local additions and one relaxed atomic addition. With per-op memory
/// on, it also keeps the blocks of 256 bytes or more that ops make until they are freed
/// ([`live_allocations`](super::live_allocations)), so that a growth warning names the ops
/// whose outputs stay alive.
#[derive(Debug, Default)]
pub struct TrackingAllocator<A = System> {
    inner: A,
}

impl TrackingAllocator<System> {
    /// Counting the system allocator.
    pub const fn system() -> Self {
        TrackingAllocator { inner: System }
    }
}

impl<A> TrackingAllocator<A> {
    /// Counting `inner` (for example another crate's allocator).
    pub const fn new(inner: A) -> Self {
        TrackingAllocator { inner }
    }
}

/// Whether a [`TrackingAllocator`] has counted an allocation in this process.
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Bytes allocated and not yet freed, process-wide.
static IN_USE: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Bytes this thread allocated and freed, since it started.
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
    static FREED: Cell<u64> = const { Cell::new(0) };
}

#[inline]
fn allocated(size: usize) {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    IN_USE.fetch_add(size as u64, Ordering::Relaxed);
    // Thread-locals without destructors stay readable while the thread exits.
    let _ = ALLOCATED.try_with(|bytes| bytes.set(bytes.get() + size as u64));
}

#[inline]
fn freed(size: usize) {
    IN_USE.fetch_sub(size as u64, Ordering::Relaxed);
    let _ = FREED.try_with(|bytes| bytes.set(bytes.get() + size as u64));
}

// SAFETY: every call is forwarded unchanged to `inner`, a `GlobalAlloc`; the counting around it
// does not touch the memory, and what the table of live blocks allocates
// (`live_allocations`) it does outside its own tracking.
unsafe impl<A: GlobalAlloc> GlobalAlloc for TrackingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let block = unsafe { self.inner.alloc(layout) };
        if !block.is_null() {
            allocated(layout.size());
            live_allocations::allocated(block, layout.size(), step);
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let block = unsafe { self.inner.alloc_zeroed(layout) };
        if !block.is_null() {
            allocated(layout.size());
            live_allocations::allocated(block, layout.size(), step);
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.inner.dealloc(block, layout) };
        freed(layout.size());
        live_allocations::freed(block, layout.size());
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let moved = unsafe { self.inner.realloc(block, layout, new_size) };
        if !moved.is_null() {
            freed(layout.size());
            allocated(new_size);
            live_allocations::moved((block, layout.size()), (moved, new_size), step);
        }
        moved
    }
}

/// Host allocations as a [`TrackingAllocator`] counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadAllocations {
    /// Bytes this thread allocated so far.
    pub allocated: u64,
    /// Bytes this thread freed so far.
    pub freed: u64,
}

/// This thread's counts, when a [`TrackingAllocator`] is installed.
pub fn thread_allocations() -> Option<ThreadAllocations> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| ThreadAllocations {
            allocated: ALLOCATED.get(),
            freed: FREED.get(),
        })
}

/// Host bytes allocated and not freed, process-wide, when a [`TrackingAllocator`] is installed.
pub fn host_in_use() -> Option<u64> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| IN_USE.load(Ordering::Relaxed))
}

/// The step the run is at: the number of steps finished (the session counts them).
static STEP: AtomicUsize = AtomicUsize::new(0);

/// The step ops run in now.
pub fn step() -> usize {
    STEP.load(Ordering::Relaxed)
}

/// Published by the session at each step's end.
pub fn set_step(step: usize) {
    STEP.store(step, Ordering::Relaxed);
}
