# ruff: noqa: E402, B007  (sys.path is set to the wheel under test before its imports)
# usage: h117_ab.py VARIANT_DIR THREADS REPS FILTER...  -> one JSON line: case -> [ours median s, ort median s]
import json
import statistics
import sys
import time

variant, threads, reps, filters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
sys.path[:0] = [variant + "/python", "/tmp/h117_new"]
import onnx_light

assert onnx_light.__file__.startswith(variant), onnx_light.__file__
from onnx import helper

from benchmarks.gemm import bench_vs_ort as b
from benchmarks.ort_reference import ort_session

out = {}
for name, graph, feeds, flops in b.cases("transformer"):
    if filters and not any(f in name for f in filters):
        continue
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    ours = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    theirs = ort_session(data, threads)
    for _ in range(3):
        ours.run(None, feeds)
        theirs.run(None, feeds)
    s = {"o": [], "t": []}
    for _ in range(reps):
        for k, sess in (("o", ours), ("t", theirs)):
            t0 = time.perf_counter()
            c0 = time.thread_time()
            sess.run(None, feeds)
            s[k].append(time.perf_counter() - t0 if threads > 1 else time.thread_time() - c0)
    out[name] = [statistics.median(s["o"]), statistics.median(s["t"])]
print(json.dumps(out))
