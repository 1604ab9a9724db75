# ruff: noqa: E402, B007  (sys.path is set to the wheel under test before its imports)
import json
import os
import subprocess

for r in range(6):
    for model in ("bert_base_encoder", "vit_b_16"):
        res = {}
        for v in ("base", "new") if r % 2 == 0 else ("new", "base"):
            p = subprocess.run(
                ["python3", "/tmp/h117_e2e.py", f"/tmp/h117_{v}", model, "2", "8"],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": ""},
            )
            res[v] = json.loads(p.stdout.strip().splitlines()[-1])
        b, n = res["base"], res["new"]
        print(
            f"round {r} load {os.getloadavg()[0]:.2f} {model:18s} base {b['ours'] * 1e3:7.2f}ms (ort {b['ort'] * 1e3:7.2f})  new {n['ours'] * 1e3:7.2f}ms (ort {n['ort'] * 1e3:7.2f})  new/base {n['ours'] / b['ours']:.3f}  base/ort {b['ours'] / b['ort']:.3f}  new/ort {n['ours'] / n['ort']:.3f}",
            flush=True,
        )
