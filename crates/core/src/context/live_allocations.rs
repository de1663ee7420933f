//! Host blocks still alive, by the op that made them: while tracing, the
//! [`TrackingAllocator`](super::memory::TrackingAllocator) keeps each block of at least
//! [`MIN_BYTES`] made while an op ran (its thread's [maker](set_maker)) with the step it was
//! made in, until it is freed, on whichever thread. What a training loop keeps from one step to
//! the next stays in the table: the leak warning names its makers.
//!
//! Exact where the allocator sees the tensors' memory (NdArray's tensors are host blocks); a
//! block made on another thread than the op's (a worker pool's) has no maker and is not kept.
//! While tracing, a block's allocation and its free take a lock and a hash table operation
//! (`cargo bench --bench kept_alive`); smaller blocks, and all blocks while not tracing, cost
//! one relaxed load.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap;

/// The smallest block kept: an op's bookkeeping (shapes, strides, its tensor's header) is
/// smaller; what leaks in a training loop is the tensors' data.
pub const MIN_BYTES: usize = 256;

/// A block alive in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveBlock {
    /// The maker the op that made it set ([`set_maker`]).
    pub maker: u32,
    /// The step it was made in (the run's step when it was made).
    pub step: u32,
    /// Its size.
    pub bytes: u64,
}

static TRACING: AtomicBool = AtomicBool::new(false);
/// Whether some block is [watched](watch), of any size.
static WATCHING: AtomicBool = AtomicBool::new(false);
static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// The live blocks, and the watched ones.
#[derive(Default)]
struct Table {
    live: FxHashMap<usize, LiveBlock>,
    /// Blocks whose free is told ([`watch`]), with their tags (tensors that share a buffer
    /// share its block).
    watched: FxHashMap<usize, Vec<u32>>,
    /// The tags of watched blocks freed since [`take_freed`] last ran.
    freed: Vec<u32>,
}

thread_local! {
    /// The maker of the blocks this thread makes now: the op it runs, 0 outside ops.
    static MAKER: Cell<u32> = const { Cell::new(0) };
    /// Whether this thread is inside the table's lock: the table's own blocks are not kept.
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// Starts keeping blocks, with an empty table.
pub fn start() {
    with_table(|table| {
        *table = Some(Table::default());
    });
    TRACING.store(true, Ordering::Relaxed);
}

/// Whether blocks are being kept.
pub fn tracing() -> bool {
    TRACING.load(Ordering::Relaxed)
}

/// Stops keeping blocks, and hands over those still alive.
pub fn stop() -> Vec<LiveBlock> {
    TRACING.store(false, Ordering::Relaxed);
    WATCHING.store(false, Ordering::Relaxed);
    with_table(|table| table.take().map(|table| table.live.into_values().collect()))
        .flatten()
        .unwrap_or_default()
}

/// While tracing, the free of the block at `block` (of any size) is told by [`take_freed`] as
/// `tag`: a tensor's buffer, whose end the graph of a step records.
pub fn watch(block: usize, tag: u32) {
    with_table(|table| {
        if let Some(table) = table {
            table.watched.entry(block).or_default().push(tag);
            WATCHING.store(true, Ordering::Relaxed);
        }
    });
}

/// The tags of the watched blocks freed since the last call.
pub fn take_freed() -> Vec<u32> {
    with_table(|table| table.as_mut().map(|table| std::mem::take(&mut table.freed)))
        .flatten()
        .unwrap_or_default()
}

/// Forgets the watched blocks (their frees are no longer told).
pub fn unwatch_all() {
    WATCHING.store(false, Ordering::Relaxed);
    with_table(|table| {
        if let Some(table) = table {
            table.watched = FxHashMap::default();
            table.freed.clear();
        }
    });
}

/// Sets the maker of the blocks this thread makes from now on (0: none), and returns the one
/// it replaces.
pub fn set_maker(maker: u32) -> u32 {
    MAKER
        .try_with(|current| current.replace(maker))
        .unwrap_or(0)
}

/// Runs `update` on the table, with this thread marked busy; `None` when this thread already
/// is (an allocation by the table itself) or is exiting.
fn with_table<T>(update: impl FnOnce(&mut Option<Table>) -> T) -> Option<T> {
    let entered = BUSY.try_with(|busy| !busy.replace(true)).unwrap_or(false);
    if !entered {
        return None;
    }
    let result = {
        let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        update(&mut table)
    };
    let _ = BUSY.try_with(|busy| busy.set(false));
    Some(result)
}

/// A block of `bytes` was made at `block`, in the step `step` says.
#[inline]
pub(super) fn allocated(block: *mut u8, bytes: usize, step: impl FnOnce() -> usize) {
    if bytes >= MIN_BYTES && TRACING.load(Ordering::Relaxed) {
        keep(block, bytes, step() as u32);
    }
}

/// The block at `block`, of `bytes`, was freed.
#[inline]
pub(super) fn freed(block: *mut u8, bytes: usize) {
    if (bytes >= MIN_BYTES || WATCHING.load(Ordering::Relaxed)) && TRACING.load(Ordering::Relaxed) {
        forget(block);
    }
}

/// The block at `from` was moved to `to` and resized to `bytes`: it keeps its maker and step
/// (a block it did not have is made now, in the step `step` says).
#[inline]
pub(super) fn moved(
    (from, from_bytes): (*mut u8, usize),
    (to, bytes): (*mut u8, usize),
    step: impl FnOnce() -> usize,
) {
    if (bytes >= MIN_BYTES || from_bytes >= MIN_BYTES || WATCHING.load(Ordering::Relaxed))
        && TRACING.load(Ordering::Relaxed)
    {
        relocate(from, to, bytes, step() as u32);
    }
}

#[inline(never)]
fn keep(block: *mut u8, bytes: usize, step: u32) {
    let maker = MAKER.try_with(Cell::get).unwrap_or(0);
    if maker == 0 {
        return;
    }
    let live = LiveBlock {
        maker,
        step,
        bytes: bytes as u64,
    };
    with_table(|table| {
        if let Some(table) = table {
            table.live.insert(block as usize, live);
        }
    });
}

#[inline(never)]
fn forget(block: *mut u8) {
    with_table(|table| {
        if let Some(table) = table {
            table.live.remove(&(block as usize));
            if let Some(tags) = table.watched.remove(&(block as usize)) {
                table.freed.extend(tags);
            }
        }
    });
}

#[inline(never)]
fn relocate(from: *mut u8, to: *mut u8, bytes: usize, step: u32) {
    let maker = MAKER.try_with(Cell::get).unwrap_or(0);
    with_table(|table| {
        let Some(table) = table else { return };
        if let Some(tags) = table.watched.remove(&(from as usize)) {
            table.watched.insert(to as usize, tags);
        }
        let kept = table.live.remove(&(from as usize));
        let live = match kept {
            Some(kept) => LiveBlock {
                bytes: bytes as u64,
                ..kept
            },
            None if maker != 0 => LiveBlock {
                maker,
                step,
                bytes: bytes as u64,
            },
            None => return,
        };
        if bytes >= MIN_BYTES {
            table.live.insert(to as usize, live);
        }
    });
}

/// One test at a time may trace: the table is the process's.
#[cfg(test)]
pub(crate) fn tests_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(at: usize) -> *mut u8 {
        at as *mut u8
    }

    const STEP: usize = 4;

    fn allocated(block: *mut u8, bytes: usize) {
        super::allocated(block, bytes, || STEP);
    }

    #[test]
    fn a_block_made_by_an_op_stays_until_it_is_freed() {
        let _lock = tests_lock();
        start();
        let before = set_maker(7);
        allocated(block(0x1000), 4096);
        allocated(block(0x3000), 4096);
        // Too small to be a tensor's data.
        allocated(block(0x5000), MIN_BYTES - 1);
        set_maker(before);
        // Outside ops: no maker.
        allocated(block(0x6000), 4096);
        freed(block(0x1000), 4096);
        let alive = stop();
        assert_eq!(
            alive,
            vec![LiveBlock {
                maker: 7,
                step: STEP as u32,
                bytes: 4096
            }]
        );
    }

    #[test]
    fn a_moved_block_keeps_its_maker_and_takes_its_new_size() {
        let _lock = tests_lock();
        start();
        let before = set_maker(3);
        allocated(block(0x1000), 1024);
        set_maker(9);
        moved((block(0x1000), 1024), (block(0x8000), 8192), || STEP + 1);
        set_maker(before);
        freed(block(0x1000), 1024);
        let alive = stop();
        assert_eq!(alive.len(), 1, "{alive:?}");
        assert_eq!((alive[0].maker, alive[0].bytes), (3, 8192));
    }

    #[test]
    fn a_watched_block_of_any_size_tells_its_free_once_for_each_tag() {
        let _lock = tests_lock();
        start();
        watch(0x1000, 5);
        watch(0x2000, 6);
        watch(0x1000, 7);
        freed(block(0x1000), 16);
        freed(block(0x3000), 16);
        assert_eq!(take_freed(), vec![5, 7]);
        assert_eq!(take_freed(), Vec::<u32>::new());
        unwatch_all();
        freed(block(0x2000), 16);
        assert_eq!(take_freed(), Vec::<u32>::new());
        let _ = stop();
    }

    #[test]
    fn nothing_is_kept_while_not_tracing() {
        let _lock = tests_lock();
        start();
        let _ = stop();
        let before = set_maker(7);
        allocated(block(0x1000), 4096);
        set_maker(before);
        start();
        assert_eq!(stop(), Vec::new());
    }
}
