//! Registered handles: the port of the original `numba_nvtx`, for hot loops.
//!
//! Register a name once, then push and pop through the handle at about the cost of the raw NVTX
//! call. Handles do not depend on [`enable`](super::enable): they are active whenever an NVTX
//! tool (Nsight Systems, the recorder) is attached, and inert (handle 0) otherwise, as in the
//! original.

use std::marker::PhantomData;

use super::ffi;

/// A name registered in NVTX's default domain; 0 (inert) when no NVTX tool is attached.
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::nvtx::{register_string, Handle};
///
/// let step = register_string("inner step");   // once, outside the loop
/// for _ in 0..3 {
///     step.push();
///     // ... work
///     Handle::pop();
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(u64);

/// Registers `name` in NVTX's default domain.
pub fn register_string(name: &str) -> Handle {
    Handle(ffi::register_string(None, name))
}

impl Handle {
    /// The raw NVTX string handle; 0 when no NVTX tool was attached at registration.
    pub fn raw(self) -> u64 {
        self.0
    }

    /// Whether the handle is inert (no NVTX tool was attached when it was registered).
    pub fn is_inert(self) -> bool {
        self.0 == 0
    }

    /// Pushes a range named by this handle on this thread; a no-op for an inert handle.
    #[inline]
    pub fn push(self) {
        if self.0 != 0 {
            ffi::push_registered(None, self.0);
        }
    }

    /// Pops this thread's innermost range of the default domain (unconditionally, like the
    /// original; without a tool NVTX makes it a no-op).
    #[inline]
    pub fn pop() {
        ffi::pop(None);
    }

    /// Pushes a range that is popped when the returned guard is dropped.
    #[inline]
    pub fn range(self) -> HandleRange {
        self.push();
        HandleRange {
            pushed: self.0 != 0,
            _not_send: PhantomData,
        }
    }
}

/// A range opened with [`Handle::range`]; popped on drop.
#[must_use = "the range is popped when this guard is dropped"]
#[derive(Debug)]
pub struct HandleRange {
    pushed: bool,
    _not_send: PhantomData<*const ()>,
}

impl Drop for HandleRange {
    #[inline]
    fn drop(&mut self) {
        if self.pushed {
            Handle::pop();
        }
    }
}
