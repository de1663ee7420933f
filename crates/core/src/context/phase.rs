//! Each thread's open user ranges. The innermost one is the phase of the ops the thread runs
//! (`forward`, `backward`, `optimizer`, ...), by which statistics are grouped.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

thread_local! {
    /// The open ranges of this thread: their names (for order checks), phase ids and path ids.
    static STACK: RefCell<Vec<(String, u32, u32)>> = const { RefCell::new(Vec::new()) };
    /// The phase of this thread's ops outside its own ranges: the phase of the thread it runs
    /// work for (a launch thread), 0 otherwise.
    static INHERITED: Cell<u32> = const { Cell::new(0) };
    /// Whether [`INHERITED`] was set by [`inheriting`], which takes precedence over [`SOURCE`].
    static INHERITING: Cell<bool> = const { Cell::new(false) };
    /// Where this thread's phase outside its own ranges comes from, when it runs other
    /// threads' work as it arrives (a fusion thread): asked at each op, and told when the work
    /// of the current stream ran dry ([`ran_dry`]).
    static SOURCE: Cell<Option<PhaseSource>> = const { Cell::new(None) };
}

/// Phase names by id, and ids by name; id 0 is "outside any range". The same for paths (the
/// names of the open ranges, outermost first, joined by `/`), each with its innermost phase.
struct Phases {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    paths: Vec<(String, u32)>,
    path_ids: HashMap<String, u32>,
}

static PHASES: LazyLock<Mutex<Phases>> = LazyLock::new(|| {
    Mutex::new(Phases {
        names: vec!["-".to_owned()],
        ids: HashMap::new(),
        paths: vec![("-".to_owned(), 0)],
        path_ids: HashMap::new(),
    })
});

fn phases() -> MutexGuard<'static, Phases> {
    PHASES.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Phases {
    fn phase_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// The path of a range `name` (phase `phase`) opened inside the range of path `parent` (0:
    /// none).
    fn path_id(&mut self, parent: u32, name: &str, phase: u32) -> u32 {
        let path = match self.paths.get(parent as usize) {
            Some((parent, _)) if parent_is_a_range(parent) => format!("{parent}/{name}"),
            _ => name.to_owned(),
        };
        if let Some(&id) = self.path_ids.get(&path) {
            return id;
        }
        let id = self.paths.len() as u32;
        self.paths.push((path.clone(), phase));
        self.path_ids.insert(path, id);
        id
    }
}

fn parent_is_a_range(path: &str) -> bool {
    path != "-"
}

/// Told of every change of a thread's phase, on that thread, with the new phase: work that
/// runs later on another thread (a fused backend's) finds its phase by it.
static WATCHER: std::sync::OnceLock<fn(u32)> = std::sync::OnceLock::new();

/// Calls `watcher` at each change of phase from now on; the first watcher set stays.
pub fn watch(watcher: fn(u32)) {
    let _ = WATCHER.set(watcher);
}

fn changed() {
    if let Some(watcher) = WATCHER.get() {
        watcher(current());
    }
}

/// A range named `name` opened on this thread.
pub fn push(name: String) {
    let parent = STACK.with_borrow(|stack| stack.last().map_or(0, |(_, _, path)| *path));
    let (id, path) = {
        let mut phases = phases();
        let id = phases.phase_id(&name);
        (id, phases.path_id(parent, &name, id))
    };
    STACK.with_borrow_mut(|stack| stack.push((name, id, path)));
    changed();
}

/// This thread's innermost range closed; its name, `None` when none was open.
pub fn pop() -> Option<String> {
    let popped = STACK.with_borrow_mut(|stack| stack.pop().map(|(name, _, _)| name));
    changed();
    popped
}

/// The names of this thread's open ranges, outermost first.
pub fn open_ranges() -> Vec<String> {
    STACK.with_borrow(|stack| stack.iter().map(|(name, _, _)| name.clone()).collect())
}

/// The id of this thread's innermost open range (0 outside any).
#[inline]
pub fn current() -> u32 {
    STACK.with_borrow(|stack| stack.last().map_or_else(outside_ranges, |(_, id, _)| *id))
}

/// The path of this thread's open ranges (their names, outermost first, joined by `/`) as an
/// id for [`path_name`]; outside its own ranges, the path of the phase it runs in (a phase
/// from another thread is known by its name alone). 0 outside any range.
pub fn current_path() -> u32 {
    match STACK.with_borrow(|stack| stack.last().map(|(_, _, path)| *path)) {
        Some(path) => path,
        None => path_of_phase(outside_ranges()),
    }
}

/// The path of a top-level range of phase `phase` (0 for 0).
pub fn path_of_phase(phase: u32) -> u32 {
    if phase == 0 {
        return 0;
    }
    let mut phases = phases();
    let name = phases
        .names
        .get(phase as usize)
        .cloned()
        .unwrap_or_default();
    phases.path_id(0, &name, phase)
}

/// The text of a path id (`forward/attention`; `-` for 0, outside any range).
pub fn path_name(path: u32) -> String {
    phases()
        .paths
        .get(path as usize)
        .map_or_else(|| "-".to_owned(), |(path, _)| path.clone())
}

fn outside_ranges() -> u32 {
    match SOURCE.get() {
        Some(source) if !INHERITING.get() => (source.phase)(),
        _ => INHERITED.get(),
    }
}

/// A read or a sync was asked of this thread: a thread that runs other threads' work (a
/// fusion thread) has just run everything registered before it on the current stream.
pub fn ran_dry() {
    if let Some(source) = SOURCE.get() {
        (source.ran_dry)();
    }
}

/// Runs `work` with `phase` as this thread's phase outside its own ranges.
pub fn inheriting<T>(phase: u32, work: impl FnOnce() -> T) -> T {
    struct Restore(u32, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            INHERITED.set(self.0);
            INHERITING.set(self.1);
        }
    }
    let _restore = Restore(INHERITED.replace(phase), INHERITING.replace(true));
    work()
}

/// Where the phase of a thread that runs other threads' work comes from.
#[derive(Clone, Copy)]
pub struct PhaseSource {
    /// The phase of the op starting now.
    pub phase: fn() -> u32,
    /// The current stream ran everything registered before now.
    pub ran_dry: fn(),
}

/// From now on, this thread's phase outside its own ranges (and outside [`inheriting`]) is
/// what `source` says at each op: a thread that runs other threads' work as it arrives.
pub fn source_from(source: PhaseSource) {
    SOURCE.set(Some(source));
}

/// The name of a phase id (`-` for 0, outside any range).
pub fn name(id: u32) -> String {
    phases()
        .names
        .get(id as usize)
        .cloned()
        .unwrap_or_else(|| "-".to_owned())
}
