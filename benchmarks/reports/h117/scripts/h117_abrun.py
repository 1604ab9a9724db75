# ruff: noqa: E402, B007  (sys.path is set to the wheel under test before its imports)
# Alternating processes: base, new, base, new ... ; prints raw per-round medians (us), load, ratio new/base.
import json
import os
import subprocess
import sys

rounds, threads, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
filters = sys.argv[4:]
rows = []
for r in range(rounds):
    res = {}
    order = ("base", "new") if r % 2 == 0 else ("new", "base")
    for v in order:
        p = subprocess.run(
            ["python3", "/tmp/h117_ab.py", f"/tmp/h117_{v}", str(threads), str(reps), *filters],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": ""},
        )
        res[v] = json.loads(p.stdout.strip().splitlines()[-1])
    load = os.getloadavg()[0]
    for case in res["base"]:
        b, n = res["base"][case], res["new"][case]
        print(
            f"round {r} load {load:.2f} thr {threads} {case:22s} base {b[0] * 1e6:8.1f} (ort {b[1] * 1e6:8.1f})  new {n[0] * 1e6:8.1f} (ort {n[1] * 1e6:8.1f})  new/base {n[0] / b[0]:.3f}  base/ort {b[0] / b[1]:.3f} new/ort {n[0] / n[1]:.3f}",
            flush=True,
        )
