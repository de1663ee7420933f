"""Reads a burn-profiled run's trace.json with Holistic Trace Analysis (HTA) and prints, as one
JSON line on stdout, what HTA made of it: the profiler steps, the CPU ops it found and, where
the trace has GPU kernels, its temporal, kernel and idle-time breakdowns, the streams of its
queue length summary and its mapping of kernels to the CPU ops that launched them (HTA's call
graph). tests/hta.rs and tests/device_time_standin.rs compare it with the run's ops.json and
run.json.

Usage: python analyse.py RUN_DIR
"""

import json
import logging
import sys

logging.disable(logging.WARNING)

from hta.common.trace_call_graph import CallGraph  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402


def main(run_dir):
    # As docs/guide/hta.md says: trace_files too, or HTA would read every .json file in the
    # run directory.
    analysis = TraceAnalysis(
        trace_dir=run_dir,
        trace_files={0: "trace.json"},
        include_last_profiler_step=True,
    )
    trace = analysis.t
    df = trace.get_trace(0)
    names = trace.symbol_table.get_sym_table()
    name = df["name"].map(lambda i: names[i])
    cat = df["cat"].map(lambda i: names[i])
    in_steps = df["iteration"] >= 0
    cpu_ops = df[(cat == "cpu_op") & in_steps]
    out = {
        "profiler_steps": [int(s) for s in analysis.get_profiler_steps()],
        "cpu_ops_in_steps": {
            str(op): int(n) for op, n in name[cpu_ops.index].value_counts().items()
        },
    }
    kernels = df[df["stream"].ne(-1)]
    out["kernels"] = int(len(kernels))
    if len(kernels) > 0:
        temporal = analysis.get_temporal_breakdown(visualize=False)
        out["temporal"] = {
            key: float(temporal[key].iloc[0])
            for key in ["idle_time(us)", "compute_time(us)", "kernel_time(us)"]
        }
        by_type, by_kernel = analysis.get_gpu_kernel_breakdown(visualize=False)
        out["kernel_types"] = {
            str(row["kernel_type"]): float(row["sum"]) for _, row in by_type.iterrows()
        }
        out["kernel_breakdown"] = {
            str(row["name"]): float(row["sum (us)"]) for _, row in by_kernel.iterrows()
        }
        idle, _ = analysis.get_idle_time_breakdown(visualize=False)
        out["idle_by_stream"] = {
            f"{row['stream']} {row['idle_category']}": float(row["idle_time"])
            for _, row in idle.iterrows()
        }
        # None without CUDA runtime launch calls (a Burn 0.22 run's launches are CubeCL's).
        queue = analysis.get_queue_length_summary(ranks=[0])
        out["queue_length_streams"] = (
            [] if queue is None else sorted(int(stream) for _, stream in queue.index)
        )
        # HTA's own mapping: each kernel's launch call (by correlation), nested in the CPU op
        # that made it (by the call stack); per CPU op, its kernels and their time, which
        # building the call graph adds to the trace's rows.
        CallGraph(trace, ranks=[0])
        df = trace.get_trace(0)
        mapped = {}
        for _, row in df[df["cat"].map(lambda i: names[i]) == "cpu_op"].iterrows():
            op = mapped.setdefault(names[row["name"]], {"kernels": 0, "kernel_us": 0.0})
            op["kernels"] += int(row["num_kernels"])
            op["kernel_us"] += float(row["kernel_dur_sum"])
        out["kernels_by_cpu_op"] = mapped
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
