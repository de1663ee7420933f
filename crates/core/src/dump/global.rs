//! The process-wide dumper: the original's singleton. [`enable`] it once in the main program;
//! everywhere else the functions here do nothing until then, and cost one atomic load (a
//! `OnceLock` check). Data closures (`add_tensor_data_with`, `push_range_with`,
//! [`run_if_enabled`]) are not called while disabled.
//!
//! Each edition's `dump::global` is this one, with its Burn's own functions (gradients, taps,
//! ragged batches) beside.
//!
//! ```no_run
//! use burn_profiled_core::dump::{AddOptions, DumpType, global};
//!
//! global::enable("dumps");
//! global::add_tensor_data_with("x", || vec![1, 2, 3], AddOptions::new(DumpType::Json)).unwrap();
//! global::dump(true).unwrap();
//! ```
//!
//! Actions registered with [`perform_after_dump_count`] run with the dumper unlocked, so they
//! may call these functions.

use std::any::Any;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use super::dumper::TensorDumper;
use super::error::DumpError;
use super::options::{AddOptions, CompareSettings, DumpType};
use super::value::ToDump;

static DUMPER: OnceLock<Mutex<TensorDumper>> = OnceLock::new();

fn lock(dumper: &'static Mutex<TensorDumper>) -> MutexGuard<'static, TensorDumper> {
    dumper.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `work` on the enabled dumper, then its due actions with the lock released; `None`
/// while disabled. How an edition's own functions reach the dumper.
#[doc(hidden)]
pub fn with<R>(work: impl FnOnce(&mut TensorDumper) -> R) -> Option<R> {
    let dumper = DUMPER.get()?;
    let (result, due) = {
        let mut guard = lock(dumper);
        let result = work(&mut guard);
        (result, guard.take_deferred_actions())
    };
    for (count, mut action) in due {
        action();
        lock(dumper).restore_action(count, action);
    }
    Some(result)
}

/// Enables the process-wide dumper, writing dump `n` to `<dump_dir>/<n>/`.
///
/// # Panics
/// If it was enabled before, with the original's message "`` `TensorDumper` `` is already
/// enabled. Can only be enabled once." (there is no disable).
pub fn enable(dump_dir: impl Into<PathBuf>) {
    let mut dumper = TensorDumper::new(dump_dir);
    dumper.defer_actions();
    if DUMPER.set(Mutex::new(dumper)).is_err() {
        panic!("`TensorDumper` is already enabled. Can only be enabled once.");
    }
}

/// Whether the dumper is enabled.
pub fn is_enabled() -> bool {
    DUMPER.get().is_some()
}

/// Calls `work` only when the dumper is enabled.
pub fn run_if_enabled<R>(work: impl FnOnce() -> R) -> Option<R> {
    is_enabled().then(work)
}

/// See [`TensorDumper::push_range`].
pub fn push_range(name: &str) -> Result<(), DumpError> {
    with(|d| d.push_range(name)).unwrap_or(Ok(()))
}

/// [`push_range`] with the name made by `name()`, called only when enabled.
pub fn push_range_with<S: Into<String>>(name: impl FnOnce() -> S) -> Result<(), DumpError> {
    with(|d| d.push_range(name())).unwrap_or(Ok(()))
}

/// See [`TensorDumper::pop_range`]; `Ok(None)` while disabled.
pub fn pop_range() -> Result<Option<String>, DumpError> {
    with(|d| d.pop_range().map(Some)).unwrap_or(Ok(None))
}

/// See [`TensorDumper::add_tensor_data`]. Prefer [`add_tensor_data_with`]: this one builds
/// `data` (and reads nothing) even while disabled.
pub fn add_tensor_data<Burn>(
    path: &str,
    data: impl ToDump<Burn>,
    options: AddOptions,
) -> Result<(), DumpError> {
    with(|d| d.add_tensor_data(path, data, options)).unwrap_or(Ok(()))
}

/// See [`TensorDumper::add_tensor_data_with`]; `data` is not called while disabled.
pub fn add_tensor_data_with<Burn, T: ToDump<Burn>>(
    path: &str,
    data: impl FnOnce() -> T,
    options: AddOptions,
) -> Result<(), DumpError> {
    with(|d| d.add_tensor_data_with(path, data, options)).unwrap_or(Ok(()))
}

/// See [`TensorDumper::add_grad_data`].
pub fn add_grad_data<Burn>(
    path: &str,
    data: impl ToDump<Burn>,
    options: AddOptions,
) -> Result<(), DumpError> {
    with(|d| d.add_grad_data(path, data, options)).unwrap_or(Ok(()))
}

/// See [`TensorDumper::add_grad_data_with`]; `data` is not called while disabled.
pub fn add_grad_data_with<Burn, T: ToDump<Burn>>(
    path: &str,
    data: impl FnOnce() -> T,
    options: AddOptions,
) -> Result<(), DumpError> {
    with(|d| d.add_grad_data_with(path, data, options)).unwrap_or(Ok(()))
}

/// See [`TensorDumper::set_dump_type_for_all`].
pub fn set_dump_type_for_all(dump_type: DumpType, include_tensors: bool, include_grads: bool) {
    with(|d| d.set_dump_type_for_all(dump_type, include_tensors, include_grads));
}

/// See [`TensorDumper::dump`]; `Ok(true)` while disabled.
pub fn dump(dump_if_empty: bool) -> Result<bool, DumpError> {
    with(|d| d.dump(dump_if_empty)).unwrap_or(Ok(true))
}

/// See [`TensorDumper::compare_to_dumped_data`]; `Ok(true)` while disabled.
pub fn compare_to_dumped_data(
    settings: CompareSettings,
    compare_if_empty: bool,
) -> Result<bool, DumpError> {
    with(|d| d.compare_to_dumped_data(settings, compare_if_empty)).unwrap_or(Ok(true))
}

/// See [`TensorDumper::set_dump_is_compare`].
pub fn set_dump_is_compare(settings: CompareSettings) {
    with(|d| d.set_dump_is_compare(settings));
}

/// See [`TensorDumper::dump_count`]; 0 while disabled.
pub fn dump_count() -> usize {
    with(|d| d.dump_count()).unwrap_or(0)
}

/// See [`TensorDumper::set_dump_count`].
pub fn set_dump_count(count: usize) {
    with(|d| d.set_dump_count(count));
}

/// See [`TensorDumper::reset_dump_count`].
pub fn reset_dump_count() {
    with(|d| d.reset_dump_count());
}

/// See [`TensorDumper::perform_after_dump_count`].
pub fn perform_after_dump_count(count: usize, action: impl FnMut() + Send + 'static) {
    with(|d| d.perform_after_dump_count(count, action));
}

/// See [`TensorDumper::register_custom_converter`].
pub fn register_custom_converter<T, V, Burn>(convert: impl Fn(T) -> V + Send + 'static)
where
    T: Any + Send,
    V: ToDump<Burn>,
{
    with(|d| d.register_custom_converter(convert));
}
