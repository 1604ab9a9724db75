# ruff: noqa: E402, B007  (sys.path is set to the wheel under test before its imports)
import os
import statistics
import sys
import time

sys.path[:0] = ["/tmp/h117_new/python", "/tmp/h117_new"]
import onnx_light
from onnx import helper

from benchmarks.gemm import bench_vs_ort as b
from benchmarks.ort_reference import ort_session

for name, graph, feeds, flops in b.cases("transformer"):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    sess = {
        "ours": onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=2)),
        "ort_spin_off": ort_session(data, 2),
        "ort_spin_on": ort_session(data, 2, spinning=True),
    }
    s = {k: [] for k in sess}
    for k in sess:
        sess[k].run(None, feeds)
    for r in range(30):
        for k, se in sess.items():
            for _ in range(2):  # back to back, as nodes in a model: the second run is timed
                t0 = time.perf_counter()
                se.run(None, feeds)
                dt = time.perf_counter() - t0
            s[k].append(dt)
        time.sleep(0.002)
    med = {k: statistics.median(v) * 1e6 for k, v in s.items()}
    print(
        f"{name:22s}",
        " ".join(f"{k} {v:.0f}us" for k, v in med.items()),
        f"ours/ort_off {med['ours'] / med['ort_spin_off']:.3f} ours/ort_on {med['ours'] / med['ort_spin_on']:.3f} load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
