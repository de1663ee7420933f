//! `NVTX_RECORDER_LIMIT`: events beyond the limit are counted but dropped.
//! One test only: the limit is read once, at the first NVTX call of the process.

use nvtx_recorder::{dropped, events, total, write_tsv};

nvtx_recorder::install_static!();

#[test]
fn events_beyond_the_limit_are_counted_and_dropped() {
    // SAFETY: this binary has a single test, and no other thread reads the
    // environment while it is changed, before the first NVTX call.
    unsafe { std::env::set_var("NVTX_RECORDER_LIMIT", "10") };
    for _ in 0..25 {
        nvtx::mark(c"m");
    }
    assert!(nvtx_recorder::is_attached());
    assert_eq!(events().len(), 10);
    assert_eq!(total(), 25);
    assert_eq!(dropped(), 15);

    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("nvtx-recorder-limit-{}.tsv", std::process::id()));
    write_tsv(&path).unwrap();
    let tsv = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let lines: Vec<_> = tsv.lines().collect();
    assert_eq!(lines.len(), 12, "{tsv}");
    assert!(lines[0].starts_with("ts_ns\ttid\tkind"));
    assert_eq!(
        lines[11],
        "# dropped 15 of 25 events (NVTX_RECORDER_LIMIT=10)"
    );
}
