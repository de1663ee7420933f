//! A wait stuck in cubecl-common 0.10's registry lock, told and stopped rather than left to hang
//! (`shared_device` says how the deadlock comes about).
//!
//! Every wait of this crate's code that can meet the deadlock is watched: on the fusion thread,
//! a fuser closing a block and a new stream getting its fusers (each asks the registry for a
//! client, which takes microseconds); on the user's thread, [`share_device`] and a
//! [`Session`](crate::Session) waiting for a fused device (they may create a fusion server,
//! which holds the registry's lock until the fusion thread has run everything queued before
//! it). A watcher thread looks once a second: a wait that has lasted [`STALLED`] is probed by
//! asking the registry for a client from a fresh thread. If that does not come back within
//! [`PROBE`] either, one thread holds the registry lock while it waits for the fusion thread,
//! which waits for the lock: nothing can move again. The watcher says so, and what to do, and
//! ends the process, [`STALLED`] + [`PROBE`] + a second at most after the wait began.
//!
//! [`share_device`]: super::share_device

use std::cell::OnceCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Once, PoisonError, mpsc};
use std::time::{Duration, Instant};

use burn_cubecl::CubeRuntime;

/// How long a watched wait may last before the registry is probed. A fuser closes a block in
/// microseconds, but a session's first sync may run a whole queue (seconds, or minutes of
/// compilation and autotuning on a first run): only a registry that does not answer stops the
/// process, never a long wait alone.
const STALLED: Duration = Duration::from_secs(15);
/// How long the probe may wait for the registry lock before the process is stopped. Long: on
/// several devices the lock can be held for a while by a creation queued behind a busy runner
/// of another device, and stopping a healthy run would be worse than a late word.
const PROBE: Duration = Duration::from_secs(10);

/// One watched thread, as the watcher sees it.
struct Waiter {
    /// When its watched wait began, in ns since [`EPOCH`] (plus one); 0 when not waiting.
    since: AtomicU64,
    /// Who waits, for the message: "the fusion thread of DefaultDevice".
    who: String,
    /// Asks the registry for a client of the waiter's device.
    probe: Box<dyn Fn() + Send + Sync>,
}

static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
static WATCHED: Mutex<Vec<Arc<Waiter>>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's entry, when it is a fusion thread.
    static FUSION_THREAD: OnceCell<Arc<Waiter>> = const { OnceCell::new() };
}

fn now_ns() -> u64 {
    EPOCH.elapsed().as_nanos() as u64 + 1
}

fn waiter<R: CubeRuntime>(device: &R::CubeDevice, who: String, since: u64) -> Arc<Waiter> {
    let probed = device.clone();
    Arc::new(Waiter {
        since: AtomicU64::new(since),
        who,
        probe: Box::new(move || drop(R::client(&probed))),
    })
}

fn watch(waiter: Arc<Waiter>) {
    WATCHED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(waiter);
    static WATCHER: Once = Once::new();
    WATCHER.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("burn-profiled fusion watcher".to_owned())
            .spawn(watch_loop);
        if let Err(error) = spawned {
            eprintln!(
                "burn-profiled: cannot start the thread that watches fused devices for a \
                 deadlock ({error}); a hang there will go untold"
            );
        }
    });
}

fn unwatch(waiter: &Arc<Waiter>) {
    WATCHED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|other| !Arc::ptr_eq(other, waiter));
}

/// Watches this thread, the fusion thread of `device`, from now on (once per thread).
pub(super) fn watch_this_fusion_thread<R: CubeRuntime>(device: &R::CubeDevice) {
    FUSION_THREAD.with(|this| {
        this.get_or_init(|| {
            let thread = waiter::<R>(device, format!("the fusion thread of {device:?}"), 0);
            watch(thread.clone());
            thread
        });
    });
}

/// Marks this fusion thread as waiting (a block's close, a stream's fusers) until the guard
/// drops; nothing on a thread that is not watched.
pub(super) fn fusion_thread_busy() -> FusionThreadBusy {
    let thread = FUSION_THREAD.with(|this| this.get().cloned());
    if let Some(thread) = &thread {
        thread.since.store(now_ns(), Ordering::Relaxed);
    }
    FusionThreadBusy(thread)
}

/// See [`fusion_thread_busy`].
pub(super) struct FusionThreadBusy(Option<Arc<Waiter>>);

impl Drop for FusionThreadBusy {
    fn drop(&mut self) {
        if let Some(thread) = &self.0 {
            thread.since.store(0, Ordering::Relaxed);
        }
    }
}

/// Watches the calling thread's wait on `device` until the guard drops; `what` names the
/// wait for the message ("Session::start").
pub(super) fn user_thread_waits<R: CubeRuntime>(
    device: &R::CubeDevice,
    what: &str,
) -> UserThreadWaits {
    let thread = std::thread::current();
    let who = format!(
        "{what} on the thread `{}`, waiting for {device:?},",
        thread.name().unwrap_or("unnamed")
    );
    let waiter = waiter::<R>(device, who, now_ns());
    watch(waiter.clone());
    UserThreadWaits(waiter)
}

/// See [`user_thread_waits`].
pub(super) struct UserThreadWaits(Arc<Waiter>);

impl Drop for UserThreadWaits {
    fn drop(&mut self) {
        self.0.since.store(0, Ordering::Relaxed);
        unwatch(&self.0);
    }
}

fn watch_loop() {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let waiters = WATCHED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for waiter in waiters {
            let since = waiter.since.load(Ordering::Relaxed);
            if since == 0 || now_ns().saturating_sub(since) < STALLED.as_nanos() as u64 {
                continue;
            }
            if !registry_is_held(&waiter) || waiter.since.load(Ordering::Relaxed) != since {
                continue;
            }
            stop(&waiter.who, now_ns().saturating_sub(since));
        }
    }
}

/// Whether asking the registry for a client of `waiter`'s device waits longer than [`PROBE`].
fn registry_is_held(waiter: &Arc<Waiter>) -> bool {
    let (done, waited) = mpsc::channel();
    let probed = waiter.clone();
    let spawned = std::thread::Builder::new()
        .name("burn-profiled registry probe".to_owned())
        .spawn(move || {
            (probed.probe)();
            let _ = done.send(());
        });
    spawned.is_ok() && waited.recv_timeout(PROBE).is_err()
}

/// The text [`stop`] writes.
pub(super) fn deadlock_message(who: &str, waited: Duration) -> String {
    format!(
        "burn-profiled: stopping the process: {who} has waited {} s in a deadlock of \
         cubecl-common 0.10: a thread holds CubeCL's device registry while it waits for the \
         device's fusion thread, and the fusion thread waits for the registry. It comes from \
         using a second fused backend on the device for the first time (burn's own fused Wgpu \
         or Cuda, or Profiled<Fusion<..>>, and burn_profiled::fused, in either order) while \
         the first still had work queued. Call \
         burn_profiled::fused::share_device::<R>(&device) (R: WgpuRuntime, CudaRuntime) \
         before either backend first touches the device, or after the first one's last use \
         (a read of its results) and before the second one's first. See \
         docs/guide/how-it-works.md, \"What can share a device\".",
        waited.as_secs()
    )
}

fn stop(who: &str, waited_ns: u64) -> ! {
    use std::io::Write;
    eprintln!("{}", deadlock_message(who, Duration::from_nanos(waited_ns)));
    let _ = std::io::stdout().flush();
    // Not `exit`: its handlers may wait for the threads that are stuck.
    // SAFETY: `_exit` ends the process; nothing after it runs.
    unsafe { libc::_exit(101) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_waiter_the_cause_and_the_fix() {
        let text = deadlock_message(
            "the fusion thread of DefaultDevice",
            Duration::from_secs(10),
        );
        assert!(
            text.starts_with(
                "burn-profiled: stopping the process: the fusion thread of DefaultDevice has \
                 waited 10 s in a deadlock of cubecl-common 0.10"
            ),
            "the message says what stopped and where: {text}"
        );
        assert!(
            text.contains("burn_profiled::fused::share_device::<R>(&device)"),
            "the message gives the fix: {text}"
        );
    }

    /// The watcher stops a process within 30 s of the wait's start (the issue users met was
    /// silence for ever): the probe starts after `STALLED`, lasts `PROBE`, and the watcher
    /// looks once a second.
    #[test]
    fn a_deadlock_is_told_within_30_seconds() {
        assert!(STALLED + PROBE + Duration::from_secs(2) <= Duration::from_secs(30));
    }
}
