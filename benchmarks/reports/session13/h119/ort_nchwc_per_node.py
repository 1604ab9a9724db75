"""ORT's per-node times (profiling) of one-node depthwise Conv (+ activation) / SE models at ORT_ENABLE_ALL."""

import json
import os
import statistics
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

CASES = [
    ("dw3x3_s1_c32_112_swish", 32, 112, 3, 1, "Swish"),
    ("dw3x3_s2_c96_112_swish", 96, 112, 3, 2, "Swish"),
    ("dw5x5_s2_c144_56_swish", 144, 56, 5, 2, "Swish"),
    ("dw3x3_s1_c240_28_swish", 240, 28, 3, 1, "Swish"),
    ("dw5x5_s1_c672_14_swish", 672, 14, 5, 1, "Swish"),
    ("dw5x5_s2_c576_14_hardswish", 576, 14, 5, 2, "HardSwish"),
]


def model(c, hw, k, s, act):
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (c, 1, k, k)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.uniform(-1, 1, (c,)).astype(np.float32), "B")
    p = k // 2
    nodes = [
        helper.make_node("Conv", ["X", "W", "B"], ["c"], group=c, kernel_shape=[k, k], pads=[p] * 4, strides=[s, s])
    ]
    if act == "Swish":
        nodes += [helper.make_node("Sigmoid", ["c"], ["sg"]), helper.make_node("Mul", ["c", "sg"], ["Y"])]
    else:
        nodes += [helper.make_node("HardSwish", ["c"], ["Y"])]
    oh = (hw + 2 * p - k) // s + 1
    g = helper.make_graph(
        nodes,
        "dw",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, c, oh, oh])],
        [w, b],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
for name, c, hw, k, s, act in CASES:
    m = model(c, hw, k, s, act)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.enable_profiling = True
    so.profile_file_prefix = tempfile.mkdtemp() + "/p"
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(2).uniform(-2, 2, (1, c, hw, hw)).astype(np.float32)
    for _ in range(10):
        sess.run(None, {"X": x})
    sess.end_profiling()
    so.enable_profiling = True
    sess2 = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    for _ in range(10):
        sess2.run(None, {"X": x})
    for _ in range(runs):
        sess2.run(None, {"X": x})
    prof = json.load(open(sess2.end_profiling()))
    per = {}
    totals = []
    for e in prof:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per.setdefault(e["args"]["op_name"], []).append(e["dur"])
        if e.get("cat") == "Session" and e["name"] == "model_run":
            totals.append(e["dur"])
    totals = totals[-runs:]
    ops = {op: statistics.median(v[-runs:]) for op, v in per.items()}
    print(
        name,
        "threads",
        threads,
        "load",
        os.getloadavg()[0],
        "median_us per op:",
        {k: round(v, 1) for k, v in ops.items()},
        "model_run median",
        statistics.median(totals),
        flush=True,
    )
