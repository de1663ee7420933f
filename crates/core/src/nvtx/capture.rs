//! Capture control: let Nsight Systems record only the steady state, e.g. after warm-up.
//!
//! [`start_capture`] opens an NVTX range named [`CAPTURE_RANGE`] (a registered string in the
//! default domain) and, with the `cuda` feature and a CUDA driver present, calls
//! `cuProfilerStart`; [`stop_capture`] closes both. Either way of capturing then works:
//!
//! ```text
//! nsys profile --capture-range=nvtx --nvtx-capture=capture ...
//! nsys profile --capture-range=cudaProfilerApi ...          # needs the `cuda` feature
//! ```
//!
//! Capture control does not depend on [`enable`](super::enable): it is inert without an NVTX
//! tool and without a CUDA driver, and never panics.

use std::sync::{Mutex, PoisonError};

use super::ffi;
use super::label::Label;

/// The name of the NVTX range that [`start_capture`] opens.
pub const CAPTURE_RANGE: &str = "capture";

/// The open capture range's NVTX id, while capturing.
static CAPTURING: Mutex<Option<u64>> = Mutex::new(None);

/// Starts the capture; a no-op if it is already started.
pub fn start_capture() {
    let mut capturing = CAPTURING.lock().unwrap_or_else(PoisonError::into_inner);
    if capturing.is_some() {
        return;
    }
    profiler_api(Switch::Start);
    let label = Label::new(CAPTURE_RANGE).with_registered(0, capture_string());
    *capturing = Some(ffi::start(None, &label));
}

/// Stops the capture; a no-op if it is not started.
pub fn stop_capture() {
    let mut capturing = CAPTURING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(id) = capturing.take() {
        ffi::end(None, id);
        profiler_api(Switch::Stop);
    }
}

/// Whether a capture is started.
pub fn is_capturing() -> bool {
    CAPTURING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some()
}

/// `nsys --nvtx-capture` matches registered strings unless told otherwise, so register it.
fn capture_string() -> ffi::RawString {
    static HANDLE: std::sync::OnceLock<ffi::RawString> = std::sync::OnceLock::new();
    *HANDLE.get_or_init(|| ffi::register_string(None, CAPTURE_RANGE))
}

#[derive(Clone, Copy, Debug)]
enum Switch {
    Start,
    Stop,
}

#[cfg(feature = "cuda")]
fn profiler_api(switch: Switch) {
    let result = cuda_context().and_then(|context| {
        context
            .bind_to_thread()
            .and_then(|()| match switch {
                Switch::Start => cudarc::driver::profiler_start(),
                Switch::Stop => cudarc::driver::profiler_stop(),
            })
            .map_err(|error| format!("cuProfiler{switch:?} failed: {error:?}"))
    });
    if let Err(reason) = result {
        note_once(&reason);
    }
}

/// Device 0's primary context, kept for the process: cuProfilerStart/Stop act on the current
/// context, which the calling thread may not have.
#[cfg(feature = "cuda")]
fn cuda_context() -> Result<&'static std::sync::Arc<cudarc::driver::CudaContext>, String> {
    use std::sync::{Arc, OnceLock};
    static CONTEXT: OnceLock<Result<Arc<cudarc::driver::CudaContext>, String>> = OnceLock::new();
    CONTEXT
        .get_or_init(|| {
            // SAFETY: only loads and unloads the driver library to see whether it is there.
            if !unsafe { cudarc::driver::sys::is_culib_present() } {
                return Err("no CUDA driver (libcuda) was found".to_owned());
            }
            cudarc::driver::CudaContext::new(0)
                .map_err(|error| format!("no CUDA context: {error:?}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(not(feature = "cuda"))]
fn profiler_api(_switch: Switch) {
    note_once("built without the `cuda` feature");
}

/// Tells once per process why `--capture-range=cudaProfilerApi` will not see the capture;
/// nothing when op ranges found no NVTX tool attached (no profiler is there to capture, which
/// a session says itself).
fn note_once(reason: &str) {
    static NOTED: std::sync::Once = std::sync::Once::new();
    if crate::sinks::op_ranges::tool_found() == Some(false) {
        return;
    }
    NOTED.call_once(|| {
        eprintln!(
            "burn-profiled: capture uses the NVTX range `{CAPTURE_RANGE}` only ({reason}); \
             profile with `nsys profile --capture-range=nvtx --nvtx-capture={CAPTURE_RANGE}`"
        )
    });
}
