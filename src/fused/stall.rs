//! A fusion thread stuck in cubecl-common 0.10's registry lock, told and stopped rather than
//! left to hang (`shared_device` says how the deadlock comes about).
//!
//! A fuser closing a block asks the registry for a client, which takes microseconds. A watcher
//! thread looks once a second at the fusion threads closing a block: one that has been at it
//! for [`STALLED`] is probed by asking the registry for a client from a fresh thread. If that
//! does not come back within [`PROBE`] either, another thread holds the registry lock while it
//! waits for this fusion thread, which waits for the lock: nothing can move again. The watcher
//! says so, and what to do, and ends the process.

use std::cell::OnceCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Once, PoisonError, mpsc};
use std::time::{Duration, Instant};

use burn_cubecl::CubeRuntime;

/// How long a fuser may take to close a block before the registry is probed. Long: on several
/// devices the registry's lock can be held for a while by a creation queued behind a busy
/// runner of another device, and stopping a healthy run would be worse than a late word.
const STALLED: Duration = Duration::from_secs(20);
/// How long the probe may wait for the registry lock before the process is stopped.
const PROBE: Duration = Duration::from_secs(10);

/// One fusion thread, as the watcher sees it.
struct FusionThread {
    /// When its fuser started closing a block, in ns since [`EPOCH`] (plus one); 0 when not.
    closing_since: AtomicU64,
    device: String,
    /// Asks the registry for a client of the thread's device.
    probe: Box<dyn Fn() + Send + Sync>,
}

static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
static WATCHED: Mutex<Vec<Arc<FusionThread>>> = Mutex::new(Vec::new());

thread_local! {
    static THIS_THREAD: OnceCell<Arc<FusionThread>> = const { OnceCell::new() };
}

fn now_ns() -> u64 {
    EPOCH.elapsed().as_nanos() as u64 + 1
}

/// Watches this thread, the fusion thread of `device`, from now on (once per thread).
pub(super) fn watch_this_fusion_thread<R: CubeRuntime>(device: &R::CubeDevice) {
    THIS_THREAD.with(|this| {
        this.get_or_init(|| {
            let probed = device.clone();
            let thread = Arc::new(FusionThread {
                closing_since: AtomicU64::new(0),
                device: format!("{device:?}"),
                probe: Box::new(move || drop(R::client(&probed))),
            });
            WATCHED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(thread.clone());
            static WATCHER: Once = Once::new();
            WATCHER.call_once(|| {
                let spawned = std::thread::Builder::new()
                    .name("burn-profiled fusion watcher".to_owned())
                    .spawn(watch);
                if let Err(error) = spawned {
                    eprintln!(
                        "burn-profiled: cannot start the thread that watches fusion threads for \
                         a deadlock ({error}); a hang there will go untold"
                    );
                }
            });
            thread
        });
    });
}

/// Marks this fusion thread as closing a block until the guard drops.
pub(super) fn closing_a_block() -> Closing {
    let thread = THIS_THREAD.with(|this| this.get().cloned());
    if let Some(thread) = &thread {
        thread.closing_since.store(now_ns(), Ordering::Relaxed);
    }
    Closing(thread)
}

/// See [`closing_a_block`].
pub(super) struct Closing(Option<Arc<FusionThread>>);

impl Drop for Closing {
    fn drop(&mut self) {
        if let Some(thread) = &self.0 {
            thread.closing_since.store(0, Ordering::Relaxed);
        }
    }
}

fn watch() {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let threads = WATCHED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for thread in threads {
            let since = thread.closing_since.load(Ordering::Relaxed);
            if since == 0 || now_ns().saturating_sub(since) < STALLED.as_nanos() as u64 {
                continue;
            }
            if !registry_is_held(&thread) || thread.closing_since.load(Ordering::Relaxed) != since {
                continue;
            }
            stop(&thread.device, now_ns().saturating_sub(since));
        }
    }
}

/// Whether asking the registry for a client of `thread`'s device waits longer than [`PROBE`].
fn registry_is_held(thread: &Arc<FusionThread>) -> bool {
    let (done, waited) = mpsc::channel();
    let probed = thread.clone();
    let spawned = std::thread::Builder::new()
        .name("burn-profiled registry probe".to_owned())
        .spawn(move || {
            (probed.probe)();
            let _ = done.send(());
        });
    spawned.is_ok() && waited.recv_timeout(PROBE).is_err()
}

/// The text [`stop`] writes.
pub(super) fn deadlock_message(device: &str, waited: Duration) -> String {
    format!(
        "burn-profiled: stopping the process: the fusion thread of {device} has waited {} s for \
         CubeCL's device registry, which another thread holds while it waits for this fusion \
         thread (a deadlock of cubecl-common 0.10). It comes from using a second fused backend \
         on the device for the first time (burn's own fused Wgpu or Cuda, or \
         Profiled<Fusion<..>>, after burn_profiled::fused, or the other way round) while the \
         first still had work queued. Call burn_profiled::fused::share_device::<R>(&device) \
         (R: WgpuRuntime, CudaRuntime) before the second backend's first use, or start a \
         burn_profiled Session on the device (it does the same). See \
         docs/guide/how-it-works.md, \"What can share a device\".",
        waited.as_secs()
    )
}

fn stop(device: &str, waited_ns: u64) -> ! {
    use std::io::Write;
    eprintln!(
        "{}",
        deadlock_message(device, Duration::from_nanos(waited_ns))
    );
    let _ = std::io::stdout().flush();
    // Not `exit`: its handlers may wait for the threads that are stuck.
    // SAFETY: `_exit` ends the process; nothing after it runs.
    unsafe { libc::_exit(101) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_device_the_cause_and_the_fix() {
        let text = deadlock_message("DefaultDevice", Duration::from_secs(10));
        assert!(
            text.starts_with(
                "burn-profiled: stopping the process: the fusion thread of DefaultDevice has \
                 waited 10 s for CubeCL's device registry"
            ),
            "the message says what stopped and where: {text}"
        );
        assert!(
            text.contains("burn_profiled::fused::share_device::<R>(&device)"),
            "the message gives the fix: {text}"
        );
    }
}
