//! An NVTX v3 *tool* (injection library) that records every NVTX event a
//! program emits, so tests can check what would reach Nsight Systems on a
//! machine with no GPU and no Nsight.
//!
//! Two ways to attach it (see the README for details and pitfalls):
//!
//! * **Dynamic:** build the `cdylib` (`libnvtx_recorder.so`), then run the
//!   program with `NVTX_INJECTION64_PATH=/absolute/path/libnvtx_recorder.so`
//!   and `NVTX_RECORDER_OUT=events.tsv`. The events are written at exit.
//! * **Static (tests):** put `nvtx_recorder::install_static!();` in the final
//!   binary (for example at the top of an integration test file), then read
//!   [`events_of_thread`]`(`[`current_tid`]`())`.
//!
//! NVTX initialises its tool once, at the first NVTX call of the process; the
//! recorder is process-global and shared by every thread.

#![deny(missing_docs)]

mod event;
mod hooks;
mod inject;
mod store;
mod tsv;

pub use event::{Event, Kind, Message, Payload};
pub use inject::InitializeInjectionNvtx2;
pub use tsv::{to_tsv, write_tsv};

/// The type of [`InitializeInjectionNvtx2`], i.e. NVTX's
/// `NvtxInitializeInjectionNvtxFunc_t` without the nullable wrapper. It is the
/// type of the `InitializeInjectionNvtx2_fnptr` static that [`install_static!`] defines.
pub type InjectionInitFn =
    unsafe extern "C" fn(nvtx_sys::ffi::NvtxGetExportTableFunc_t) -> std::ffi::c_int;

/// Every event recorded so far (up to `NVTX_RECORDER_LIMIT`), in timestamp order.
pub fn events() -> Vec<Event> {
    store::snapshot().0
}

/// The recorded events made by OS thread `tid`, in order.
pub fn events_of_thread(tid: u64) -> Vec<Event> {
    store::events_where(|e| e.tid == tid)
}

/// The calling thread's OS thread id (`gettid`), as recorded in [`Event::tid`].
pub fn current_tid() -> u64 {
    store::current_tid()
}

/// The number of events ever recorded, including those dropped because the
/// buffer held `NVTX_RECORDER_LIMIT` events already.
pub fn total() -> u64 {
    store::counts().0
}

/// The number of events dropped because the buffer was full.
pub fn dropped() -> u64 {
    let (total, kept) = store::counts();
    total.saturating_sub(kept as u64)
}

/// Whether NVTX has initialised the recorder in this process (through the
/// `NVTX_INJECTION64_PATH` library or [`install_static!`]). It only becomes true
/// at the first NVTX call.
pub fn is_attached() -> bool {
    store::is_attached()
}

/// Installs the recorder as the *static* NVTX injection of the binary being built.
///
/// Expands to an exported static `InitializeInjectionNvtx2_fnptr` pointing at
/// [`InitializeInjectionNvtx2`], which NVTX's weak symbol of that name binds to.
/// Use it exactly once per final binary (each integration test file is its own
/// binary): a second definition fails to link with a duplicate symbol. The
/// library itself never defines the static. If `NVTX_INJECTION64_PATH` is also
/// set, that library wins.
///
/// ```
/// nvtx_recorder::install_static!();
///
/// fn main() {
///     let tid = nvtx_recorder::current_tid();
///     {
///         let _r = nvtx::LocalRange::new(c"work");
///     }
///     let evs = nvtx_recorder::events_of_thread(tid);
///     assert!(nvtx_recorder::is_attached());
///     assert_eq!(evs[0].kind, nvtx_recorder::Kind::Push);
///     assert_eq!(evs[0].message.text(), Some("work"));
///     assert_eq!(evs[1].kind, nvtx_recorder::Kind::Pop);
/// }
/// ```
#[macro_export]
macro_rules! install_static {
    () => {
        /// Static NVTX injection: NVTX's weak `InitializeInjectionNvtx2_fnptr` binds here.
        #[unsafe(no_mangle)]
        #[used]
        #[allow(non_upper_case_globals)]
        pub static InitializeInjectionNvtx2_fnptr: $crate::InjectionInitFn =
            $crate::InitializeInjectionNvtx2;
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: Kind, message: Message) -> Event {
        Event {
            ts_ns: 5,
            tid: 7,
            kind,
            domain: None,
            depth: 0,
            message,
            category: None,
            color: None,
            payload: None,
            range_id: None,
            handle: None,
        }
    }

    #[test]
    fn tsv_lines() {
        let mut push = event(Kind::Push, Message::Unicode("a\tb\\c\nd".into()));
        push.domain = Some("burn".into());
        push.depth = 2;
        push.category = Some(3);
        push.color = Some(0xffff0000);
        push.payload = Some(Payload::F64(1.5));
        let mut start = event(Kind::Start, Message::Ascii("s".into()));
        start.range_id = Some(9);
        let mut name = event(Kind::NameThread, Message::Ascii("main".into()));
        name.handle = Some(42);
        let mut reg = event(Kind::RegisterString, Message::Ascii("fwd".into()));
        reg.handle = Some(1);
        let tsv = to_tsv(&[push, event(Kind::Pop, Message::None), start, name, reg]);
        let expected = [
            "ts_ns\ttid\tkind\tdomain\tdepth\tmsg_type\tmessage\textra",
            "5\t7\tpush\tburn\t2\tunicode\ta\\tb\\\\c\\nd\tcat=3 color=#ffff0000 payload=f64:1.5",
            "5\t7\tpop\t-\t0\tnone\t\t",
            "5\t7\tstart\t-\t0\tascii\ts\tid=9",
            "5\t7\tname_thread\t-\t0\tascii\tmain\tos_tid=42",
            "5\t7\tregister_string\t-\t0\tascii\tfwd\thandle=1",
        ];
        assert_eq!(tsv.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn message_helpers() {
        assert_eq!(Message::None.text(), None);
        assert_eq!(Message::Registered("x".into()).text(), Some("x"));
        assert_eq!(Message::Unicode("x".into()).type_name(), "unicode");
        assert_eq!(Payload::I32(-3).to_string(), "i32:-3");
        assert_eq!(Kind::DomainCreate.to_string(), "domain_create");
    }
}
