//! Emits a small, fixed NVTX scenario on two threads, through the `nvtx` crate.
//!
//! Without a tool attached this does nothing visible. To record it:
//!
//! ```text
//! cargo build -p nvtx-recorder
//! NVTX_INJECTION64_PATH=$PWD/target/debug/libnvtx_recorder.so \
//!   NVTX_RECORDER_OUT=events.tsv cargo run -p nvtx-recorder --example emit
//! ```
//!
//! `tests/dynamic.rs` runs it that way and checks the TSV.

use nvtx::{Color, Domain, EventAttributes, LocalRange, Range, Str};

fn os_tid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    u32::try_from(tid).unwrap_or(0)
}

fn main() {
    nvtx::name_thread(os_tid(), c"main");
    nvtx::mark(c"start");
    let domain = Domain::new(c"burn");
    let [fwd, matmul] = domain.register_strings([c"forward", c"matmul"]);
    let process = Range::new(c"process-wide");
    {
        let _outer = LocalRange::new(c"outer");
        let _inner = LocalRange::new(Str::from_str_lossy("inner (rust str)"));
        let _attrs = LocalRange::new(
            EventAttributes::builder()
                .message(c"attrs")
                .color(Color::new(0xff, 0x00, 0x00, 0xff))
                .payload(42_u64)
                .build(),
        );
    }
    {
        let _f = domain.local_range(fwd);
        let _m = domain.local_range(matmul);
        domain.mark(matmul);
    }
    std::thread::spawn(move || {
        nvtx::name_thread(os_tid(), c"worker");
        let _w = LocalRange::new(c"worker-outer");
        drop(process);
    })
    .join()
    .expect("worker thread panicked");
}
