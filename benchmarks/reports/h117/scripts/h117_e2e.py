# ruff: noqa: E402, B007  (sys.path is set to the wheel under test before its imports)
# usage: h117_e2e.py VARIANT_DIR MODEL THREADS REPS -> JSON: ours e2e median, ort e2e median, ours MatMul node-sum median
import json
import statistics
import sys
import time

variant, model, threads, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path[:0] = [variant + "/python", "/tmp/h117_new"]
import numpy as np
import onnx_light

from benchmarks.ort_reference import ort_session

path = f"/root/.cache/onnx-light/corpus/torch-2.13.0+cpu/dynamo/{model}.onnx"
data = open(path, "rb").read()
feeds = (
    {"tokens": np.random.default_rng(0).standard_normal((1, 128, 768), np.float32)}
    if "bert" in model
    else {"image": np.random.default_rng(0).standard_normal((1, 3, 224, 224), np.float32)}
)
ours = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
theirs = ort_session(data, threads)
for _ in range(2):
    ours.run(None, feeds)
    theirs.run(None, feeds)
o, t, mm = [], [], []
for _ in range(reps):
    t0 = time.perf_counter()
    ours.run(None, feeds)
    o.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    theirs.run(None, feeds)
    t.append(time.perf_counter() - t0)
    _, nodes, _ = ours.run_with_events(None, feeds)
    mm.append(sum(n.duration_ns for n in nodes if n.op in ("MatMul",)) * 1e-9)
print(json.dumps({"ours": statistics.median(o), "ort": statistics.median(t), "ours_matmul": statistics.median(mm)}))
