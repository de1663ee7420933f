//! Device time through CUPTI where CUPTI cannot be loaded (built with `--features cupti`, run
//! on a machine without CUDA): a clear error, no crash, and a session that keeps host times.
#![cfg(feature = "cupti")]

use burn_profiled::device_time;

mod support;

const NO_CUPTI: &str = "device time per op needs CUPTI (libcupti.so), which could not be loaded: \
                        libcupti.so was not found on the library path (add its directory, such as \
                        /usr/local/cuda/extras/CUPTI/lib64, to LD_LIBRARY_PATH)";

/// Whether this machine has CUPTI (a GPU machine, where `scripts/gpu-check.sh` checks device
/// time): recording starts there, and this test has nothing to check.
fn has_cupti() -> bool {
    match device_time::start() {
        Ok(()) => {
            let _ = device_time::stop();
            true
        }
        Err(error) => {
            assert_eq!(error.to_string(), NO_CUPTI);
            false
        }
    }
}

// One test: CUPTI is process-wide.
#[test]
fn without_cupti_the_error_says_what_is_missing_and_a_session_keeps_host_times() {
    if has_cupti() {
        return;
    }
    // Asking again gives the same answer: nothing was left half started.
    let error = device_time::start().expect_err("still no CUPTI");
    assert_eq!(error.to_string(), NO_CUPTI);
    assert!(!device_time::is_recording());

    support::device_time::session_keeps_host_times();
}
