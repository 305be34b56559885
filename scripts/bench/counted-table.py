#!/usr/bin/env python3
"""The spread of one build's counted instructions over several runs: per workload, every
iteration's srv_instr_per_op pooled over the runs (n, mean, sd, CV, min, max) and the spread
of the runs' means. Used by counted-variance.sh and counted-detect.sh.

Usage: counted-table.py RUN_DIR...
"""
import csv
import statistics as st
import sys

per = {}
for run in sys.argv[1:]:
    for r in csv.DictReader(open(f"{run}/results.csv")):
        assert r["status"] == "ok", r
        per.setdefault(r["workload"], {}).setdefault(run, []).append(float(r["srv_instr_per_op"]))
print(f"{len(sys.argv) - 1} runs")
print("| workload | iterations | mean | sd | CV | min | max | CV of the runs' means |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for w, by_run in sorted(per.items()):
    v = [x for xs in by_run.values() for x in xs]
    means = [st.mean(xs) for xs in by_run.values()]
    m, sd = st.mean(v), st.stdev(v)
    cv_runs = st.stdev(means) / st.mean(means) if len(means) > 1 else float("nan")
    print(f"| {w} | {len(v)} | {m:.1f} | {sd:.1f} | {100*sd/m:.3f}% | {min(v):.1f} | {max(v):.1f} | {100*cv_runs:.3f}% |")
