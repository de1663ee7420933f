//! Attached launch threads: where an op that runs outside [`LaunchThread::run`] queues the
//! start and end of its range, so that its kernel launches, queued on the same launch thread
//! in between, land inside the range.
//!
//! CubeCL's device thread takes tasks from one FIFO queue per device: an op's launches are
//! queued there by the thread that calls the op. A range start queued before the op and a
//! range end queued after it frame exactly the op's launches, and the caller waits for
//! neither: no blocking round trip per op (measured at about 7 us on an H200). When several
//! threads queue ops on one device, each op holds the launch thread's queuing lock from its
//! start to its end (`LaunchThread::hold_queuing`), so no other thread's op starts in between.

use std::sync::RwLock;

use burn_backend::DeviceOps;

use super::launch::{LaunchThread, on_launch_thread};
use super::switches::{self, QUEUED};

/// The attached launch threads, each with the number of attachments not yet detached.
static ATTACHED: RwLock<Vec<(LaunchThread, usize)>> = RwLock::new(Vec::new());

fn attached() -> std::sync::RwLockReadGuard<'static, Vec<(LaunchThread, usize)>> {
    ATTACHED
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn attached_mut() -> std::sync::RwLockWriteGuard<'static, Vec<(LaunchThread, usize)>> {
    ATTACHED
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Attaches `launch` (which has a queue) in place of any other launch thread of the same
/// device; attaching it again counts, so that it stays until every attachment is detached.
pub(crate) fn attach(launch: &LaunchThread) {
    let mut attached = attached_mut();
    match attached.iter_mut().find(|(other, _)| other.same_as(launch)) {
        Some((_, count)) => *count += 1,
        None => {
            attached.retain(|(other, _)| !other.same_device(launch));
            attached.push((launch.clone(), 1));
        }
    }
    switches::set(QUEUED, true);
}

/// Detaches one attachment of `launch`, if it is attached.
pub(crate) fn detach(launch: &LaunchThread) {
    let mut attached = attached_mut();
    if let Some(at) = attached.iter().position(|(other, _)| other.same_as(launch)) {
        attached[at].1 -= 1;
        if attached[at].1 == 0 {
            attached.remove(at);
        }
    }
    switches::set(QUEUED, !attached.is_empty());
}

/// Whether `launch` is attached (not detached since an op queued its start there).
pub(crate) fn is_attached(launch: &LaunchThread) -> bool {
    attached().iter().any(|(other, _)| other.same_as(launch))
}

/// The attached launch thread of `device` (of type `D`), unless this thread is running a
/// launch thread's work already. Without a device, the one attached launch thread of a `D`.
pub(crate) fn launch_thread_of<D: DeviceOps>(device: Option<&D>) -> Option<LaunchThread> {
    if on_launch_thread() {
        return None;
    }
    let attached = attached();
    let mut matching = attached
        .iter()
        .map(|(launch, _)| launch)
        .filter(|launch| launch.is_for(device));
    let first = matching.next()?;
    if device.is_none() && matching.next().is_some() {
        // Several devices, and nothing says which one the op runs on.
        return None;
    }
    Some(first.clone())
}

/// The attached launch thread of `device` that can read its device's memory, also when this
/// thread is that launch thread (an op of a step run there reads it inline).
pub(crate) fn memory_launch_thread_of<D: DeviceOps>(device: Option<&D>) -> Option<LaunchThread> {
    let device = device?;
    attached()
        .iter()
        .map(|(launch, _)| launch)
        .find(|launch| launch.is_for(Some(device)) && launch.reads_memory())
        .cloned()
}
