//! Op statistics and the timeline: they add up to the ops that ran, the trace parses, its
//! spans nest per thread, thread ids and names are consistent, and the cap holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Once};

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::probe::{self, Op, OpObserver};
use burn_profiled::stats::{self, GroupBy, StatsConfig};
use burn_profiled::{Profiled, nvtx, trace};
use serde_json::Value;

type B = Profiled<NdArray>;

/// Statistics and the timeline are process-wide: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    static ENABLE: Once = Once::new();
    ENABLE.call_once(|| nvtx::enable(nvtx::RangeConfig::new()));
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts started ops by name, on every thread.
#[derive(Default)]
struct Count(Mutex<HashMap<&'static str, u64>>);

impl OpObserver for Count {
    fn op_started(&self, op: &'static Op) {
        *self.0.lock().unwrap().entry(op.name()).or_default() += 1;
    }
    fn op_finished(&self, _op: &'static Op) {}
}

fn workload() {
    let device = Default::default();
    let a = Tensor::<B, 2>::ones([2, 3], &device);
    let b = Tensor::<B, 2>::ones([3, 4], &device);
    nvtx::scope("forward", || {
        for _ in 0..3 {
            let _ = a.clone().matmul(b.clone()).exp();
        }
    });
    let _ = a.exp();
}

#[test]
fn statistics_add_up_to_the_ops_that_ran() {
    let _serial = serial();
    stats::reset();
    let count = Arc::new(Count::default());
    let observing = probe::observe(count.clone());
    stats::start(StatsConfig {
        by_shapes: true,
        ..StatsConfig::default()
    });
    workload();
    std::thread::spawn(workload).join().unwrap();
    stats::stop();
    drop(observing);
    let counted = count.0.lock().unwrap().clone();
    let snapshot = stats::snapshot();

    let rows = snapshot.rows(GroupBy::Op);
    let by_op: HashMap<&str, u64> = rows.iter().map(|r| (r.op.as_str(), r.calls)).collect();
    assert_eq!(by_op.len(), counted.len());
    for (op, calls) in &counted {
        assert_eq!(by_op.get(op), Some(calls), "{op}");
    }
    assert_eq!(by_op["float_matmul"], 6);
    assert_eq!(by_op["float_exp"], 8);
    let (calls, total) = snapshot.totals();
    assert_eq!(calls, counted.values().sum::<u64>());
    assert_eq!(
        rows.iter().map(|r| r.total_ns).sum::<u64>(),
        total.as_nanos() as u64
    );
    let percent: f64 = rows.iter().map(|r| r.total_percent).sum();
    assert!((percent - 100.0).abs() < 1e-6, "{percent}");
    assert!(
        rows.windows(2).all(|w| w[0].total_ns >= w[1].total_ns),
        "sorted by total"
    );
    for row in &rows {
        assert!(
            row.min_ns <= row.p50_ns.max(row.min_ns) && row.p50_ns <= row.max_ns + row.max_ns / 50
        );
        assert!(row.min_ns <= row.mean_ns && row.mean_ns <= row.max_ns);
    }

    // By phase: the matmuls ran inside `forward`; one exp per thread ran outside any range.
    let phases = snapshot.rows(GroupBy::OpAndPhase);
    let calls = |op: &str, phase: &str| {
        phases
            .iter()
            .find(|r| r.op == op && r.phase.as_deref() == Some(phase))
            .map(|r| r.calls)
    };
    assert_eq!(calls("float_matmul", "forward"), Some(6));
    assert_eq!(calls("float_exp", "forward"), Some(6));
    assert_eq!(calls("float_exp", "-"), Some(2));

    // By shapes: the tensor arguments' shapes.
    let shapes = snapshot.rows(GroupBy::OpAndShapes);
    let matmul = shapes.iter().find(|r| r.op == "float_matmul").unwrap();
    assert_eq!(matmul.input_shapes.as_deref(), Some("[[2, 3], [3, 4]]"));

    let table = snapshot.table(GroupBy::OpAndPhase);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("------------") && lines[2] == lines[0],
        "{table}"
    );
    assert!(
        lines[1].trim_start().starts_with("Name")
            && lines[1].contains("Phase")
            && lines[1].contains("# of Calls")
    );
    assert!(table.contains("float_matmul") && table.contains("forward"));
    assert!(lines.last().unwrap().starts_with("Total op time: "));

    let json: Value = serde_json::from_str(&snapshot.to_json(GroupBy::Op)).unwrap();
    assert_eq!(json["total_calls"], calls_total(&counted));
    assert_eq!(json["rows"].as_array().unwrap().len(), counted.len());
}

fn calls_total(counted: &HashMap<&'static str, u64>) -> u64 {
    counted.values().sum()
}

/// The spans of one thread, `(name, cat, start, end)` in µs, sorted as written.
fn spans(json: &Value, tid: u64) -> Vec<(String, String, f64, f64)> {
    json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == tid)
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (
                e["name"].as_str().unwrap().to_owned(),
                e["cat"].as_str().unwrap().to_owned(),
                ts,
                ts + e["dur"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Spans are ordered by start and each one either nests inside the open one or starts after it.
fn assert_well_nested(spans: &[(String, String, f64, f64)]) {
    let mut open: Vec<f64> = Vec::new();
    let mut last_start = f64::MIN;
    for (name, _, start, end) in spans {
        assert!(*start >= last_start, "{name} out of order");
        last_start = *start;
        while open.last().is_some_and(|e| *e <= *start) {
            open.pop();
        }
        if let Some(parent_end) = open.last() {
            assert!(end <= parent_end, "{name} overlaps its parent");
        }
        open.push(*end);
    }
}

#[test]
fn the_timeline_parses_nests_and_names_its_threads() {
    let _serial = serial();
    trace::clear();
    trace::start(trace::TraceConfig::default());
    workload();
    let worker = std::thread::spawn(|| {
        nvtx::name_current_thread("loader");
        workload();
        nvtx_recorder::current_tid()
    })
    .join()
    .unwrap();
    let mut stopwatch = burn_profiled::stopwatch::Stopwatch::new(
        burn_profiled::stopwatch::StopwatchConfig::new(0, None),
    );
    stopwatch.start_meas("step");
    stopwatch.end_meas("step");
    trace::stop();
    let (json, summary) = trace::to_json();
    let json: Value = serde_json::from_str(&json).expect("the trace is JSON");
    let main = nvtx_recorder::current_tid();

    let events = json["traceEvents"].as_array().unwrap();
    let thread_names: HashMap<u64, &str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(thread_names.get(&worker), Some(&"loader"));
    assert!(thread_names.contains_key(&main));
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["name"] == "process_name")
    );
    for e in events.iter().filter(|e| e["ph"] == "X") {
        assert!(
            thread_names.contains_key(&e["tid"].as_u64().unwrap()),
            "every span's thread is named"
        );
        assert_eq!(e["pid"], std::process::id());
    }

    for tid in [main, worker] {
        let spans = spans(&json, tid);
        assert_well_nested(&spans);
        let forward = spans
            .iter()
            .find(|s| s.0 == "forward" && s.1 == "user_annotation")
            .expect("the user range");
        let inside = spans
            .iter()
            .filter(|s| s.1 == "cpu_op" && s.2 >= forward.2 && s.3 <= forward.3)
            .count();
        assert!(
            inside >= 6,
            "3 matmuls and 3 exps inside `forward`, saw {inside}"
        );
    }
    assert!(
        spans(&json, main)
            .iter()
            .any(|s| s.0 == "step" && s.1 == "stopwatch")
    );
    assert_eq!(summary.dropped, 0);
    assert_eq!(
        summary.events,
        events.iter().filter(|e| e["ph"] == "X").count()
    );
}

#[test]
fn the_timeline_is_capped_and_says_so() {
    let _serial = serial();
    trace::clear();
    trace::start(trace::TraceConfig { max_events: 5 });
    let x = Tensor::<B, 1>::ones([4], &Default::default());
    for _ in 0..10 {
        let _ = x.clone().exp();
    }
    trace::stop();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/trace.json");
    let summary = trace::write(&path).unwrap();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(summary.events, 5);
    assert_eq!(json["otherData"]["max_events"], 5);
    let dropped = json["otherData"]["dropped_events"].as_u64().unwrap();
    assert_eq!(dropped, summary.dropped);
    assert!(dropped >= 5);
    let note = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["ph"] == "i")
        .expect("a note");
    assert_eq!(
        note["name"],
        format!("trace truncated: {dropped} events dropped after the cap of 5 events")
    );
    trace::clear();
}

#[test]
fn reads_transactions_and_argwhere_are_counted_on_their_device() {
    use burn::tensor::{Bool, Transaction};

    let _serial = serial();
    stats::reset();
    stats::start(StatsConfig::default());
    let device = Default::default();
    let x = Tensor::<B, 1>::from_floats([1.0, -2.0, 3.0], &device);
    let _ = x.clone().into_data();
    let _ = Transaction::default().register(x.clone()).execute();
    let _ = x.greater_elem(0.0).argwhere();
    let _ = Tensor::<B, 1, Bool>::from_bool([true].into(), &device).argwhere();
    stats::stop();
    let rows = stats::snapshot().rows(GroupBy::OpAndDevice);
    for op in ["float_into_data", "tr_execute", "bool_argwhere"] {
        let devices: Vec<Option<String>> = rows
            .iter()
            .filter(|row| row.op == op)
            .map(|row| row.device.clone())
            .collect();
        assert_eq!(devices, [Some("Cpu".to_owned())], "{op}: {rows:?}");
    }
}
