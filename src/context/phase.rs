//! Each thread's open user ranges. The innermost one is the phase of the ops the thread runs
//! (`forward`, `backward`, `optimizer`, ...), by which statistics are grouped.

use std::cell::{Cell, RefCell};
use std::sync::{Mutex, PoisonError};

thread_local! {
    /// The open ranges of this thread: their names (for order checks) and phase ids.
    static STACK: RefCell<Vec<(String, u32)>> = const { RefCell::new(Vec::new()) };
    /// The phase of this thread's ops outside its own ranges: the phase of the thread it runs
    /// work for (a launch thread), 0 otherwise.
    static INHERITED: Cell<u32> = const { Cell::new(0) };
}

/// Phase names by id; id 0 is "outside any range".
static PHASES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn phase_id(name: &str) -> u32 {
    let mut phases = PHASES.lock().unwrap_or_else(PoisonError::into_inner);
    if phases.is_empty() {
        phases.push("-".to_owned());
    }
    match phases.iter().position(|phase| phase == name) {
        Some(id) => id as u32,
        None => {
            phases.push(name.to_owned());
            (phases.len() - 1) as u32
        }
    }
}

/// A range named `name` opened on this thread.
pub(crate) fn push(name: String) {
    let id = phase_id(&name);
    STACK.with_borrow_mut(|stack| stack.push((name, id)));
}

/// This thread's innermost range closed; its name, `None` when none was open.
pub(crate) fn pop() -> Option<String> {
    STACK.with_borrow_mut(|stack| stack.pop().map(|(name, _)| name))
}

/// The names of this thread's open ranges, outermost first.
pub(crate) fn open_ranges() -> Vec<String> {
    STACK.with_borrow(|stack| stack.iter().map(|(name, _)| name.clone()).collect())
}

/// The id of this thread's innermost open range (0 outside any).
pub(crate) fn current() -> u32 {
    STACK.with_borrow(|stack| stack.last().map_or_else(|| INHERITED.get(), |(_, id)| *id))
}

/// Runs `work` with `phase` as this thread's phase outside its own ranges.
pub(crate) fn inheriting<T>(phase: u32, work: impl FnOnce() -> T) -> T {
    struct Restore(u32);
    impl Drop for Restore {
        fn drop(&mut self) {
            INHERITED.set(self.0);
        }
    }
    let _restore = Restore(INHERITED.replace(phase));
    work()
}

/// The name of a phase id (`-` for 0, outside any range).
pub(crate) fn name(id: u32) -> String {
    let phases = PHASES.lock().unwrap_or_else(PoisonError::into_inner);
    phases
        .get(id as usize)
        .cloned()
        .unwrap_or_else(|| "-".to_owned())
}
