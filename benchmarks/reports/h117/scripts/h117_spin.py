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
    if "linear" not in name or "3072x768" in name:
        continue
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    sess = {}
    for spin in (200, 0):
        pol = onnx_light.CpuExecutionPolicy(num_threads=2, spin_microseconds=spin)
        sess[f"spin{spin}"] = onnx_light.InferenceSession(data, cpu_execution=pol)
    sess["ort"] = ort_session(data, 2)
    one = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=1))
    sess["ours1"] = one
    s = {k: [] for k in sess}
    for k in sess:
        sess[k].run(None, feeds)
    for r in range(40):
        for k, se in sess.items():
            t0 = time.perf_counter()
            se.run(None, feeds)
            s[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e6 for k, v in s.items()}
    print(
        name,
        " ".join(f"{k} {v:.0f}us" for k, v in med.items()),
        f"spin200/ort {med['spin200'] / med['ort']:.3f} spin0/ort {med['spin0'] / med['ort']:.3f} load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
