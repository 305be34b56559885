#!/usr/bin/env python3
"""Out-of-sample error of `rmatrix plan` estimates, replayed over stored runs: each run's estimate is
made from the runs that started before it (its own matrix copy and `--only`), against the time its
manifest recorded. Nothing is run.

    scripts/bench/estimate-replay.py RMATRIX DIR...   (run directories, or folders of them)
"""
import json, os, subprocess, sys, tempfile
from datetime import datetime
rmatrix, paths = sys.argv[1], sys.argv[2:]
runs = []
for p in paths:
    dirs = [p] if os.path.isfile(os.path.join(p, "manifest.json")) else \
        [os.path.join(p, d) for d in sorted(os.listdir(p))]
    for d in dirs:
        try:
            m = json.load(open(os.path.join(d, "manifest.json")))
        except (OSError, ValueError):
            continue
        if m.get("finished_at"):
            runs.append((m["started_at"], os.path.abspath(d), m))
runs.sort()
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
print(f"{'run':<40} {'estimate':>9} {'actual':>8} {'error':>8}")
for started, d, m in runs:
    with tempfile.TemporaryDirectory() as before:
        for s2, d2, _ in runs:
            if s2 < started:
                os.symlink(d2, os.path.join(before, os.path.basename(d2)))
        args = [rmatrix, "plan", os.path.join(d, "matrix.yaml"), "--format", "json",
                "--learn-from", before]
        for sel in m.get("only", []):
            args += ["--only", sel]
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{os.path.basename(d):<40} plan failed: {out.stderr.strip()[:80]}")
            continue
        est = json.loads(out.stdout)["estimate"]["seconds"]
    actual = (t(m["finished_at"]) - t(m["started_at"])).total_seconds()
    print(f"{os.path.basename(d):<40} {est:>8.0f}s {actual:>7.0f}s {est / actual - 1:>+8.1%}")
