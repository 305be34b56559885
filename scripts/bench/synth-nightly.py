#!/usr/bin/env python3
"""A year of nightly runs from one stored run: N copies of SRC under OUT, one a night, each
with its own run id, instance token and start time (what `history` tells runs apart by),
in the layout of format 1 (the server counters as a JSON column of results.csv, as SRC has
them) or of format 2 (the same counters in counters.csv, the column gone, manifest version 2,
a counter at 0 left out as `rmatrix run` leaves it out). The rows themselves are SRC's.

    scripts/bench/synth-nightly.py SRC OUT --layout old|new [--runs 365]
"""
import argparse
import csv
import datetime
import io
import json
import os
import shutil

csv.field_size_limit(1 << 30)
KEY = ["server", "config", "engine", "workload", "concurrency", "rate", "iteration"]


def new_layout(results_text):
    """results.csv without server_counters, and counters.csv, as format 2 writes them."""
    rows = list(csv.DictReader(io.StringIO(results_text)))
    header = next(csv.reader(io.StringIO(results_text)))
    kept = [h for h in header if h != "server_counters"]
    out = io.StringIO()
    w = csv.DictWriter(out, kept, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    counters = io.StringIO()
    c = csv.writer(counters, lineterminator="\n")
    c.writerow(KEY + ["counter", "delta"])
    for r in rows:
        w.writerow(r)
        if r.get("status") != "ok" or not r.get("server_counters"):
            continue
        for name, delta in sorted(json.loads(r["server_counters"]).items()):
            if delta > 0:
                c.writerow([r.get(k, "") for k in KEY] + [name, delta])
    return out.getvalue(), counters.getvalue()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("--layout", choices=["old", "new"], required=True)
    p.add_argument("--runs", type=int, default=365)
    a = p.parse_args()
    manifest = json.load(open(os.path.join(a.src, "manifest.json")))
    results = open(os.path.join(a.src, "results.csv")).read()
    if a.layout == "new":
        results, counters = new_layout(results)
        manifest["format_version"] = 2
    start = datetime.datetime(2025, 12, 1, 2, 0, 0, tzinfo=datetime.timezone.utc)
    os.makedirs(a.out, exist_ok=True)
    for n in range(a.runs):
        day = start + datetime.timedelta(days=n)
        run_id = f"{day:%Y%m%d}-nightly"
        d = os.path.join(a.out, run_id)
        os.makedirs(d, exist_ok=True)
        m = dict(manifest)
        m.update(
            run_id=run_id,
            instance=f"{n:08x}",
            started_at=day.strftime("%Y-%m-%dT%H:%M:%SZ"),
            finished_at=(day + datetime.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f, indent=2)
        shutil.copy(os.path.join(a.src, "matrix.yaml"), d)
        with open(os.path.join(d, "results.csv"), "w") as f:
            f.write(results)
        if a.layout == "new":
            with open(os.path.join(d, "counters.csv"), "w") as f:
                f.write(counters)


if __name__ == "__main__":
    main()
