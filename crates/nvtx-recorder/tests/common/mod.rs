//! Helpers shared by the integration tests (each test file is its own binary).
#![allow(dead_code)]

use nvtx_recorder::{Event, current_tid, events_of_thread, to_tsv};

/// Runs `f` and returns what it returned plus the events this thread recorded
/// meanwhile. Tests in one binary share the recorder, and the harness may run
/// several tests one after another on one thread, hence the "since" slice.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<Event>) {
    let tid = current_tid();
    let before = events_of_thread(tid).len();
    let r = f();
    let evs = events_of_thread(tid);
    assert!(
        nvtx_recorder::is_attached(),
        "NVTX did not initialise the recorder"
    );
    (r, evs[before..].to_vec())
}

/// Compact, timestamp- and thread-free form of each event: the TSV columns from
/// `kind` on, joined by single spaces, with empty fields and `handle=` left out
/// (handles depend on what other tests in the binary registered).
pub fn brief(events: &[Event]) -> Vec<String> {
    to_tsv(events)
        .lines()
        .skip(1)
        .map(|line| {
            line.split('\t')
                .skip(2)
                .flat_map(|field| field.split(' '))
                .filter(|f| !f.is_empty() && !f.starts_with("handle="))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}
