//! Threads as the tools name them: the OS thread id Nsight Systems shows, and the names given
//! with `nvtx::name_current_thread`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Names given to threads, by OS thread id; kept after the thread ends, for the timeline.
static NAMES: Mutex<Option<HashMap<u32, String>>> = Mutex::new(None);

/// The calling thread's OS id (`gettid`), as Nsight Systems and the error messages show it.
pub fn os_thread_id() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

/// Names the calling thread.
pub fn set_current_name(name: &str) {
    NAMES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(os_thread_id(), name.to_owned());
}

/// Every thread given a name so far, by OS thread id.
pub fn names() -> HashMap<u32, String> {
    NAMES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_default()
}
