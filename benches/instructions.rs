//! What `Profiled` costs per op, counted in instructions: exact and repeatable where wall-clock
//! time on a shared machine is not.
//!
//! `cargo bench --bench instructions` runs itself under `valgrind --tool=callgrind` once per
//! workload and variant, at two loop lengths, and prints the instructions of one iteration
//! (the difference of the two runs, so set-up and tear-down cancel out), and fails when
//! everything off costs more over bare NdArray than its workload's budget (1% on the 2x2 add,
//! 1.5% on the MLP step). Without valgrind it says so and exits. `instructions WORKLOAD VARIANT ITERATIONS` runs one loop, for use under
//! any tool.
//!
//! Workloads: `tiny` (a 2x2 float add: 3 backend ops) and `mlp` (one training step of a small
//! MLP with Adam). Variants: `ndarray`, `off` (`Profiled`, everything off), `ranges` (NVTX op
//! ranges on, no tool attached: the setting only, ops take the everything-off path), `stats` (op statistics on, keyed by op, phase and device).

use std::hint::black_box;
use std::process::Command;

use burn::backend::{Autodiff, NdArray};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled::{Profiled, probe, stats};

mod workloads;
use workloads::{MlpStep, TinyOp};

const VARIANTS: [&str; 4] = ["ndarray", "off", "ranges", "stats"];
/// Workloads, their two loop lengths, and what `Profiled` with everything off may cost on
/// each, in instructions, over bare NdArray: the bench fails past it.
///
/// The counts repeat exactly for one build. This package's bench build is one codegen unit
/// (`Cargo.toml`), so that burn's caller and `Profiled`'s op are compiled together, as they
/// must be for the caller to pass the op its tensors where they lie; split otherwise, the
/// caller may copy them first and the 2x2 add costs 1.010x (`docs/guide/overhead.md`). On the
/// MLP step the rest of the difference is burn's generic optimizer code laid out differently
/// (0.5% to 0.9% between builds), hence its wider budget.
const WORKLOADS: [(&str, u64, u64, f64); 2] =
    [("tiny", 20_000, 40_000, 1.01), ("mlp", 100, 200, 1.015)];

fn tiny<B: Backend>(iterations: u64) {
    let op = TinyOp::<B>::new();
    for _ in 0..iterations {
        black_box(op.run());
    }
}

fn mlp<B: AutodiffBackend>(iterations: u64) {
    let mut step = MlpStep::<B>::new();
    for _ in 0..iterations {
        step.run();
    }
}

fn run_one(workload: &str, variant: &str, iterations: u64) {
    probe::set_op_ranges(variant == "ranges");
    if variant == "stats" {
        stats::start(stats::StatsConfig::default());
    }
    match (workload, variant) {
        ("tiny", "ndarray") => tiny::<NdArray>(iterations),
        ("tiny", _) => tiny::<Profiled<NdArray>>(iterations),
        ("mlp", "ndarray") => mlp::<Autodiff<NdArray>>(iterations),
        ("mlp", _) => mlp::<Autodiff<Profiled<NdArray>>>(iterations),
        _ => panic!("unknown workload {workload:?}: use tiny or mlp"),
    }
}

/// The instructions callgrind counts for one loop of `iterations`.
fn count(workload: &str, variant: &str, iterations: u64) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let output = Command::new("valgrind")
        .env("RAYON_NUM_THREADS", "1")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .args([workload, variant, &iterations.to_string()])
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr
        .lines()
        .find_map(|line| line.split_once("Collected : "))
        .and_then(|(_, n)| n.trim().parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let [workload, variant, iterations] = args.as_slice() {
        let iterations = iterations.parse().expect("ITERATIONS is a number");
        return run_one(workload, variant, iterations);
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("instructions: valgrind is not installed; nothing measured");
        return;
    }
    let mut over_budget = Vec::new();
    for (workload, short, long, budget) in WORKLOADS {
        let mut baseline = None;
        for variant in VARIANTS {
            let (Some(a), Some(b)) = (
                count(workload, variant, short),
                count(workload, variant, long),
            ) else {
                println!("{workload}/{variant}: callgrind gave no count");
                continue;
            };
            let per_iteration = (b - a) as f64 / (long - short) as f64;
            let base = *baseline.get_or_insert(per_iteration);
            let ratio = per_iteration / base;
            println!(
                "{workload}/{variant}: {per_iteration:.0} instructions per iteration ({ratio:.4}x)"
            );
            if variant == "off" && ratio > budget {
                over_budget.push(format!("{workload}/off at {ratio:.4}x (budget {budget}x)"));
            }
        }
    }
    if !over_budget.is_empty() {
        eprintln!(
            "instructions: everything off must cost no more than bare NdArray and one relaxed \
             load and a branch an op: {}",
            over_budget.join(", ")
        );
        std::process::exit(1);
    }
}
