//! Multi-threaded recording: ranges that end on another thread, and concurrent
//! threads that must not lose or mix events.

mod common;

use common::{brief, capture};
use nvtx::{LocalRange, Str};
use nvtx_recorder::{Kind, current_tid, events, events_of_thread};
use std::sync::{Arc, Barrier};

nvtx_recorder::install_static!();

#[test]
fn start_end_range_ends_on_another_thread() {
    let (worker_tid, evs) = capture(|| {
        let range = nvtx::Range::new(c"process-wide");
        std::thread::spawn(move || {
            let _w = LocalRange::new(c"worker");
            drop(range);
            current_tid()
        })
        .join()
        .unwrap()
    });
    assert_eq!(evs.len(), 1, "{evs:#?}");
    assert_eq!(evs[0].kind, Kind::Start);
    let id = evs[0].range_id.expect("start id");
    let worker = events_of_thread(worker_tid);
    assert_eq!(
        brief(&worker),
        [
            "push - 0 ascii worker".to_string(),
            format!("end - 0 none id={id}"),
            "pop - 0 none".to_string(),
        ]
    );
    assert_eq!(worker[1].range_id, Some(id));
    assert_ne!(worker_tid, current_tid());
}

#[test]
fn concurrent_threads_lose_nothing() {
    const N: usize = 2_000;
    let barrier = Arc::new(Barrier::new(2));
    let workers: Vec<_> = ["left", "right"]
        .into_iter()
        .map(|name| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let tid = current_tid();
                nvtx::name_thread(u32::try_from(tid).unwrap(), Str::from_str_lossy(name));
                barrier.wait();
                for i in 0..N {
                    let _outer = LocalRange::new(Str::from_str_lossy(&format!("{name}-{i}")));
                    let _inner = LocalRange::new(c"inner");
                    nvtx::mark(c"m");
                }
                tid
            })
        })
        .collect();
    let tids: Vec<u64> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_ne!(tids[0], tids[1]);
    for (tid, name) in tids.iter().zip(["left", "right"]) {
        let got = brief(&events_of_thread(*tid));
        let mut want = vec![format!("name_thread - 0 unicode {name} os_tid={tid}")];
        for i in 0..N {
            want.push(format!("push - 0 unicode {name}-{i}"));
            want.push("push - 1 ascii inner".into());
            want.push("mark - 2 ascii m".into());
            want.push("pop - 1 none".into());
            want.push("pop - 0 none".into());
        }
        assert_eq!(got.len(), want.len(), "thread {name}");
        assert_eq!(got, want, "thread {name}");
    }
    let all = events();
    assert!(
        all.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns),
        "buffer not in time order"
    );
    assert!(nvtx_recorder::total() >= (2 * (1 + 5 * N)) as u64);
    assert_eq!(nvtx_recorder::dropped(), 0);
}
