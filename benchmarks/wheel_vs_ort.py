"""Add (4M floats) and MatMul (512^3) from the wheel installed in a venv, beside ONNX Runtime,
at 1 and 2 threads; writes /tmp/wheel_vs_ort.json. Run with the venv's python:
    python -m venv --system-site-packages /tmp/v && /tmp/v/bin/pip install --no-deps bazel-bin/python/onnx_light-*.whl
    /tmp/v/bin/python benchmarks/wheel_vs_ort.py
"""

import json
import os
import time

import numpy as np
import onnx_light
import onnxruntime as ort
from onnx import TensorProto, helper


def model(op, n):
    g = helper.make_graph(
        [helper.make_node(op, ["a", "b"], ["y"])],
        "g",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n]) for x in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


def gemm(n):
    g = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"])],
        "g",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n, n]) for x in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


res = {
    "build": onnx_light.build_info(),
    "installed_at": onnx_light.__file__,
    "load_before": os.getloadavg(),
    "cases": [],
}
for name, data, feeds in [
    (
        "Add 4M floats",
        model("Add", 4 << 20),
        {"a": np.random.rand(4 << 20).astype(np.float32), "b": np.random.rand(4 << 20).astype(np.float32)},
    ),
    (
        "MatMul 512^3",
        gemm(512),
        {"a": np.random.rand(512, 512).astype(np.float32), "b": np.random.rand(512, 512).astype(np.float32)},
    ),
]:
    for threads in (1, 2):
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        sessions = {
            "onnx_light_wheel": onnx_light.InferenceSession(
                data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
            ),
            "ort": ort.InferenceSession(data, o, providers=["CPUExecutionProvider"]),
        }
        row = {"case": name, "threads": threads}
        for k, s in sessions.items():
            for _ in range(5):
                s.run(None, feeds)
            t = []
            for _ in range(30):
                a = time.perf_counter()
                s.run(None, feeds)
                t.append((time.perf_counter() - a) * 1e3)
            row[k + "_ms"] = t
            time.sleep(0.5)
        row["ratio"] = float(np.median(row["onnx_light_wheel_ms"]) / np.median(row["ort_ms"]))
        res["cases"].append(row)
        print(
            name,
            threads,
            f"ours(wheel) {np.median(row['onnx_light_wheel_ms']):.3f} ms ORT {np.median(row['ort_ms']):.3f} ms"
            f" ratio {row['ratio']:.2f}",
        )
res["load_after"] = os.getloadavg()
json.dump(res, open("/tmp/wheel_vs_ort.json", "w"), indent=1)
