# ruff: noqa: E402, B007  (sys.path is set to the wheel under test before its imports)
import os
import statistics
import sys
import time

sys.path[:0] = ["/tmp/h117_exp/python", "/tmp/h117_new"]
import onnx_light

assert onnx_light.__file__.startswith("/tmp/h117_exp")
from onnx import helper

from benchmarks.gemm import bench_vs_ort as b
from benchmarks.ort_reference import ort_session

for name, graph, feeds, flops in b.cases("transformer"):
    if "linear" not in name:
        continue
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    ours = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=2))
    ort = ort_session(data, 2)
    os.environ["H117_TILES_PER_PARTICIPANT"] = "2"
    _, _, regs = ours.run_with_events(None, feeds)
    tiles2 = regs[0].total
    os.environ.pop("H117_TILES_PER_PARTICIPANT")
    _, _, regs = ours.run_with_events(None, feeds)
    tiles1 = regs[0].total
    ref = ours.run(None, feeds)[0]
    os.environ["H117_TILES_PER_PARTICIPANT"] = "2"
    assert (ours.run(None, feeds)[0] == ref).all()
    os.environ.pop("H117_TILES_PER_PARTICIPANT")
    s = {"grid1": [], "grid2": [], "grid4": [], "ort": []}
    for r in range(30):
        for k in s:
            if k == "ort":
                t0 = time.perf_counter()
                ort.run(None, feeds)
                s[k].append(time.perf_counter() - t0)
                continue
            if k == "grid1":
                os.environ.pop("H117_TILES_PER_PARTICIPANT", None)
            else:
                os.environ["H117_TILES_PER_PARTICIPANT"] = k[-1]
            t0 = time.perf_counter()
            ours.run(None, feeds)
            s[k].append(time.perf_counter() - t0)
    os.environ.pop("H117_TILES_PER_PARTICIPANT", None)
    med = {k: statistics.median(v) * 1e6 for k, v in s.items()}
    print(
        name,
        f"tiles {tiles1}/{tiles2}",
        " ".join(f"{k} {v:.0f}us" for k, v in med.items()),
        " ".join(f"{k}/ort {med[k] / med['ort']:.3f}" for k in ("grid1", "grid2", "grid4")),
        f"load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
