//! The op path's part: the return addresses of this thread's stack, interned as a stack id.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap;

/// The most frames kept of a stack, innermost first: deeper callers are left off.
const DEPTH: usize = 128;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Every stack taken so far, by id - 1.
static STACKS: Mutex<Vec<Box<[usize]>>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's stacks and their ids, so that a stack seen before costs no lock.
    static INTERNED: RefCell<FxHashMap<Box<[usize]>, u32>> = RefCell::new(FxHashMap::default());
}

/// Turns the taking of stacks on or off (`[stats] call_sites`).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether ops take their call stacks.
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// This thread's call stack, as an id for [`call_site`](super::call_site) and
/// [`user_frames`](super::user_frames); 0 when stacks are not taken.
#[inline]
pub fn capture() -> u32 {
    match enabled() {
        true => take(),
        false => 0,
    }
}

/// The unwind and the interning, out of line: an op with call sites off pays the check only.
#[inline(never)]
fn take() -> u32 {
    let mut ips = [0usize; DEPTH];
    let mut taken = 0;
    // SAFETY: `trace_unsynchronized` is unsafe only where the platform's unwinder is not
    // thread-safe (Windows' dbghelp); the closure neither panics nor unwinds.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            ips[taken] = frame.ip() as usize;
            taken += 1;
            taken < DEPTH
        });
    }
    let ips = &ips[..taken];
    INTERNED.with_borrow_mut(|interned| {
        if let Some(&id) = interned.get(ips) {
            return id;
        }
        let mut stacks = STACKS.lock().unwrap_or_else(PoisonError::into_inner);
        stacks.push(ips.into());
        let id = stacks.len() as u32;
        interned.insert(ips.into(), id);
        id
    })
}

/// The return addresses of stack `id`, innermost first.
pub(super) fn addresses(id: u32) -> Option<Box<[usize]>> {
    let stacks = STACKS.lock().unwrap_or_else(PoisonError::into_inner);
    stacks.get(id.checked_sub(1)? as usize).cloned()
}
