//! The user's op observers: a sink that hands each op to code outside the crate.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::context::op::Op;
use crate::context::switches::{self, OBSERVE};

/// Receives every op of every `Profiled` backend while installed with [`observe`].
///
/// Both calls happen on the thread that runs the op, `op_started` right before the inner
/// backend's op and `op_finished` right after it (after the device sync when
/// `set_op_sync` is on). Calls from different threads interleave;
/// each thread's calls are properly nested. Observers must be cheap and must not run backend
/// ops themselves.
pub trait OpObserver: Send + Sync {
    /// `op` is about to run on the current thread.
    fn op_started(&self, op: &'static Op);
    /// `op`, the innermost op started on the current thread, has returned.
    fn op_finished(&self, op: &'static Op);
}

/// The observers installed when an op started; it tells the same ones when it finishes.
#[doc(hidden)]
pub type Observers = Arc<[(u64, Arc<dyn OpObserver>)]>;

/// The installed observers; `None` when there are none. Ops clone the `Arc` and call the
/// observers outside the lock, so installing one never waits for a running op.
static OBSERVERS: RwLock<Option<Observers>> = RwLock::new(None);
static NEXT_OBSERVER_ID: AtomicU64 = AtomicU64::new(0);

/// Installs `observer` until the returned guard is dropped.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// # mod burn_profiled {
/// #     pub mod probe {
/// #         pub use burn_profiled_core::context::op::Op;
/// #         pub use burn_profiled_core::sinks::observers::{OpObserver, observe};
/// #     }
/// # }
/// use burn_profiled::probe::{observe, Op, OpObserver};
///
/// #[derive(Default)]
/// struct CountOps(AtomicUsize);
/// impl OpObserver for CountOps {
///     fn op_started(&self, _op: &'static Op) {}
///     fn op_finished(&self, _op: &'static Op) { self.0.fetch_add(1, Ordering::Relaxed); }
/// }
///
/// let counter = Arc::new(CountOps::default());
/// let _observing = observe(counter.clone());
/// // ... run a model on a `Profiled<_>` backend: every op increments the counter.
/// ```
pub fn observe(observer: Arc<dyn OpObserver>) -> Observing {
    let id = NEXT_OBSERVER_ID.fetch_add(1, Ordering::Relaxed);
    let mut slot = OBSERVERS.write().unwrap_or_else(PoisonError::into_inner);
    let mut list: Vec<_> = slot.as_deref().unwrap_or_default().to_vec();
    list.push((id, observer));
    *slot = Some(list.into());
    switches::set(OBSERVE, true);
    Observing { id }
}

/// Keeps an observer installed; dropping it uninstalls the observer.
#[must_use = "the observer is uninstalled when this guard is dropped"]
#[derive(Debug)]
pub struct Observing {
    id: u64,
}

impl Drop for Observing {
    fn drop(&mut self) {
        let mut slot = OBSERVERS.write().unwrap_or_else(PoisonError::into_inner);
        let list: Vec<_> = slot
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter(|(id, _)| *id != self.id)
            .cloned()
            .collect();
        if list.is_empty() {
            switches::set(OBSERVE, false);
            *slot = None;
        } else {
            *slot = Some(list.into());
        }
    }
}

/// The observers installed now.
#[doc(hidden)]
pub fn installed() -> Option<Observers> {
    OBSERVERS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Tells `observers` that `op` started on this thread.
#[doc(hidden)]
pub fn started(observers: &Observers, op: &'static Op) {
    for (_, observer) in observers.iter() {
        observer.op_started(op);
    }
}

/// Tells `observers` that `op` finished on this thread.
#[doc(hidden)]
pub fn finished(observers: &Observers, op: &'static Op) {
    for (_, observer) in observers.iter() {
        observer.op_finished(op);
    }
}
