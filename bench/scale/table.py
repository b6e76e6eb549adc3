#!/usr/bin/env python3
"""Turns electsim_scale_bench's JSON output into the markdown table of results/scale.md.

  build/bench/electsim_scale_bench --benchmark_repetitions=3 --benchmark_out=scale.json --benchmark_out_format=json
  bench/scale/table.py scale.json

With repetitions, times and rates are the median and, in brackets, the
spread (max - min) / median; the byte counts do not vary between runs.
"""
import json
import statistics
import sys
from collections import defaultdict

MIB = 1024 * 1024


def median_and_spread(values):
    median = statistics.median(values)
    spread = f" ({(max(values) - min(values)) / median:.0%})" if len(values) > 1 else ""
    return median, spread


def main(path):
    with open(path) as f:
        report = json.load(f)
    runs = defaultdict(list)  # (benchmark, algorithm, nodes) -> one entry per repetition
    for b in report["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            raise SystemExit(f"{b['name']}: {b.get('error_message')}")
        assert b["time_unit"] == "ms", b["name"]
        parts = b["run_name"].split("/")  # BM_Setup/raft/5 or BM_SteadyRun/raft/5/manual_time
        runs[(parts[0], parts[1], int(parts[2]))].append(b)
    print("| nodes | algorithm | set-up ms | peak set-up MiB | bytes/node | events/s | peak run MiB | steady window (simulated) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for algorithm in ("raft", "bully"):
        for nodes in sorted(n for kind, a, n in runs if kind == "BM_Setup" and a == algorithm):
            setup = runs[("BM_Setup", algorithm, nodes)]
            steady = runs.get(("BM_SteadyRun", algorithm, nodes), [])
            setup_ms, setup_spread = median_and_spread([b["real_time"] for b in setup])
            cells = [f"{nodes:,}", algorithm, f"{setup_ms:.3g}{setup_spread}",
                     f"{setup[0]['peak_setup_bytes'] / MIB:.2f}", f"{setup[0]['bytes_per_node']:,.0f}"]
            if steady:
                events_per_s, events_spread = median_and_spread([b["items_per_second"] for b in steady])
                cells += [f"{events_per_s:,.0f}{events_spread}", f"{max(b['peak_run_bytes'] for b in steady) / MIB:.2f}",
                          f"{steady[0]['steady_sim_s']:g} s"]
            else:
                cells += ["-", "-", "-"]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
