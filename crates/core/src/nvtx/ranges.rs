//! User ranges in NVTX's default domain: the port of the original `NVTXRangeWrapper`.
//!
//! Off until [`enable`]d, once per process. While off, every call is a no-op and closures that
//! produce names are not called.

use std::marker::PhantomData;
use std::sync::OnceLock;

use super::ffi;
use super::label::Label;
use crate::context::{phase, thread};
use crate::device_sync::DeviceSync;

/// How user ranges behave once enabled; see [`enable`].
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::DeviceSync;
/// use burn_profiled::nvtx::RangeConfig;
///
/// // Burn 0.21: `DeviceSync::new::<B>(device)`.
/// let device = DeviceSync::custom("my device", || { /* wait for it */ });
/// let config = RangeConfig::new()
///     .sync_on_push(device.clone())
///     .sync_on_pop(device)
///     .keep_track_of_range_order(true);
/// ```
#[derive(Clone, Debug, Default)]
pub struct RangeConfig {
    sync_on_push: Option<DeviceSync>,
    sync_on_pop: Option<DeviceSync>,
    keep_track_of_range_order: bool,
}

impl RangeConfig {
    /// No sync, no order tracking.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sync this device before each push, so work queued before the range stays outside it.
    pub fn sync_on_push(mut self, device: impl Into<DeviceSync>) -> Self {
        self.sync_on_push = Some(device.into());
        self
    }

    /// Sync this device before each pop, so work queued inside the range lands inside it.
    pub fn sync_on_pop(mut self, device: impl Into<DeviceSync>) -> Self {
        self.sync_on_pop = Some(device.into());
        self
    }

    #[doc(hidden)]
    pub fn sync_on_push_device(&self) -> Option<&DeviceSync> {
        self.sync_on_push.as_ref()
    }

    #[doc(hidden)]
    pub fn sync_on_pop_device(&self) -> Option<&DeviceSync> {
        self.sync_on_pop.as_ref()
    }

    /// Keep a per-thread stack of open ranges and check each pop against it (debugging only:
    /// it costs a `String` per push).
    pub fn keep_track_of_range_order(mut self, on: bool) -> Self {
        self.keep_track_of_range_order = on;
        self
    }
}

static CONFIG: OnceLock<RangeConfig> = OnceLock::new();

/// Enables user ranges for the rest of the process.
///
/// # Panics
/// If user ranges were enabled before: there is no disable, and a second configuration would
/// silently fight the first (as in the original, where this is an assertion; the message names
/// this function where the original's names Python's ways of enabling).
pub fn enable(config: RangeConfig) {
    if CONFIG.set(config).is_err() {
        panic!(
            "NVTXRangeWrapper singleton can be enabled only once (burn_profiled::nvtx::enable was called twice)"
        );
    }
}

/// Whether user ranges are enabled.
pub fn is_enabled() -> bool {
    CONFIG.get().is_some()
}

#[doc(hidden)]
pub fn config() -> Option<&'static RangeConfig> {
    CONFIG.get()
}

/// Pushes a range named `label` on this thread. A no-op until [`enable`]d.
///
/// Prefer [`range`] (a guard) or [`scope`] (a closure), which cannot forget the pop.
pub fn range_push(label: impl Into<Label>) {
    if let Some(config) = CONFIG.get() {
        push(config, label.into());
    }
}

/// [`range_push`] with a name computed only when ranges are enabled.
pub fn range_push_with<L: Into<Label>>(label: impl FnOnce() -> L) {
    if let Some(config) = CONFIG.get() {
        push(config, label().into());
    }
}

fn push(config: &RangeConfig, label: Label) {
    if let Some(device) = &config.sync_on_push {
        device.sync();
    }
    ffi::push(None, &label);
    crate::probe::range_pushed(label.text().to_owned());
}

/// Pops this thread's innermost range. A no-op until [`enable`]d.
///
/// With order tracking on, `expected` names the range this pop should close.
///
/// # Panics
/// With order tracking on: if this thread has no open range, or if `expected` is given and the
/// innermost range has another name. The NVTX pop has happened by then, as in the original.
pub fn range_pop(expected: Option<&str>) {
    if let Some(config) = CONFIG.get()
        && let Err(message) = pop(config, expected)
    {
        panic!("{message}");
    }
}

/// Pops, then checks the order; the error is the message to panic with.
fn pop(config: &RangeConfig, expected: Option<&str>) -> Result<(), String> {
    if let Some(device) = &config.sync_on_pop {
        device.sync();
    }
    ffi::pop(None);
    let before = config
        .keep_track_of_range_order
        .then(|| python_list(&phase::open_ranges()));
    let popped = crate::probe::range_popped();
    let Some(before) = before else {
        return Ok(());
    };
    {
        let Some(last) = popped else {
            return Err(
                "No ranges are present for the thread in which a range is being popped".to_owned(),
            );
        };
        match expected {
            Some(expected) if expected != last => Err(format!(
                "Popped range (`{last}`) does not correspond to expected range to pop (`{expected}`)\n  Range stack for thread {} before the pop is: {before}",
                thread::os_thread_id()
            )),
            _ => Ok(()),
        }
    }
}

/// `['a', 'b']`, as Python prints a list of strings.
fn python_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|item| crate::python::str_repr(item))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// An open user range; dropping it pops the range (also while unwinding from a panic).
#[must_use = "the range is popped when this guard is dropped"]
#[derive(Debug)]
pub struct RangeGuard {
    /// The name to check at the pop; `None` when ranges were off at the push.
    name: Option<String>,
    /// Ranges are per thread: the guard must be dropped where it was made.
    _not_send: PhantomData<*const ()>,
}

impl Drop for RangeGuard {
    fn drop(&mut self) {
        let (Some(name), Some(config)) = (self.name.take(), CONFIG.get()) else {
            return;
        };
        let checked = pop(config, Some(&name));
        if let Err(message) = checked
            && !std::thread::panicking()
        {
            panic!("{message}");
        }
    }
}

/// Opens a range that closes when the returned guard is dropped.
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::nvtx;
///
/// {
///     let _forward = nvtx::range("forward");
///     // ... the forward pass
/// } // popped here
/// ```
pub fn range(label: impl Into<Label>) -> RangeGuard {
    match CONFIG.get() {
        Some(config) => guard(config, label.into()),
        None => RangeGuard {
            name: None,
            _not_send: PhantomData,
        },
    }
}

/// [`range`] with a name computed only when ranges are enabled.
pub fn range_with<L: Into<Label>>(label: impl FnOnce() -> L) -> RangeGuard {
    match CONFIG.get() {
        Some(config) => guard(config, label().into()),
        None => RangeGuard {
            name: None,
            _not_send: PhantomData,
        },
    }
}

fn guard(config: &RangeConfig, label: Label) -> RangeGuard {
    let name = label.text().to_owned();
    push(config, label);
    RangeGuard {
        name: Some(name),
        _not_send: PhantomData,
    }
}

/// Runs `work` inside a range named `label` and returns its result.
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::nvtx;
///
/// let loss = nvtx::scope("loss", || 0.25);
/// assert_eq!(loss, 0.25);
/// ```
pub fn scope<T>(label: impl Into<Label>, work: impl FnOnce() -> T) -> T {
    let _range = range(label);
    work()
}

/// Places a mark (an instant event) named `label` on this thread. A no-op until [`enable`]d.
pub fn mark(label: impl Into<Label>) {
    if CONFIG.get().is_some() {
        ffi::mark(None, &label.into());
    }
}

/// [`mark`] with a name computed only when ranges are enabled.
pub fn mark_with<L: Into<Label>>(label: impl FnOnce() -> L) {
    if CONFIG.get().is_some() {
        ffi::mark(None, &label().into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_print_like_python_lists() {
        let list =
            |items: &[&str]| python_list(&items.iter().map(|i| i.to_string()).collect::<Vec<_>>());
        assert_eq!(list(&[]), "[]");
        assert_eq!(list(&["a", "b"]), "['a', 'b']");
        assert_eq!(list(&["it's"]), "[\"it's\"]");
        assert_eq!(list(&["a\\b\n"]), "['a\\\\b\\n']");
    }
}
