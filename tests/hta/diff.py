"""Compares two burn-profiled runs with HTA's trace diff (`TraceDiff.compare_traces`: the ops of
each run's first profiler step, their counts and total durations) and prints, as one JSON line
on stdout, each name's counts in both and HTA's verdict on them. tests/hta.rs checks it.

Usage: python diff.py BEFORE_RUN_DIR AFTER_RUN_DIR
"""

import json
import logging
import sys

logging.disable(logging.WARNING)

from hta.common.trace import Trace  # noqa: E402
from hta.trace_diff import TraceDiff  # noqa: E402


def load(run_dir):
    trace = Trace(trace_dir=run_dir, trace_files={0: "trace.json"})
    trace.parse_traces()
    trace.decode_symbol_ids()
    return trace


def main(before, after):
    diff = TraceDiff.compare_traces(load(before), load(after))
    out = {
        str(name): {
            "before": int(row["Control_counts"]),
            "after": int(row["Test_counts"]),
            "change": str(row["counts_change_categories"]),
        }
        for name, row in diff.iterrows()
    }
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
