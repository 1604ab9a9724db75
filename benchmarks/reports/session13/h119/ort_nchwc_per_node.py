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
    # Squeeze-and-excitation (EfficientNet's: reduced channels in the kernel column): GlobalAveragePool,
    # Conv 1x1 + Swish, Conv 1x1 + Sigmoid, Mul.
    ("se_c240_28", 240, 28, 10, 0, "SE"),
    ("se_c672_14", 672, 14, 28, 0, "SE"),
]


def se_model(c, hw, r):
    rng = np.random.default_rng(1)
    inits = [
        numpy_helper.from_array(rng.uniform(-1, 1, (r, c, 1, 1)).astype(np.float32), "W1"),
        numpy_helper.from_array(rng.uniform(-1, 1, (r,)).astype(np.float32), "B1"),
        numpy_helper.from_array(rng.uniform(-1, 1, (c, r, 1, 1)).astype(np.float32), "W2"),
        numpy_helper.from_array(rng.uniform(-1, 1, (c,)).astype(np.float32), "B2"),
    ]
    nodes = [
        helper.make_node("GlobalAveragePool", ["X"], ["m"]),
        helper.make_node("Conv", ["m", "W1", "B1"], ["h"]),
        helper.make_node("Sigmoid", ["h"], ["hs"]),
        helper.make_node("Mul", ["h", "hs"], ["hw"]),
        helper.make_node("Conv", ["hw", "W2", "B2"], ["g"]),
        helper.make_node("Sigmoid", ["g"], ["gs"]),
        helper.make_node("Mul", ["X", "gs"], ["Y"]),
    ]
    g = helper.make_graph(
        nodes,
        "se",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, c, hw, hw])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


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
    m = se_model(c, hw, k) if act == "SE" else model(c, hw, k, s, act)
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
            node = e["name"][: -len("_kernel_time")]
            per.setdefault(e["args"]["op_name"] + ":" + node, []).append(e["dur"])
        if e.get("cat") == "Session" and e["name"] == "model_run":
            totals.append(e["dur"])
    totals = totals[-runs:]
    ops = {op: statistics.median(v[-runs:]) for op, v in per.items()}
    nodes_total = sum(v for op, v in ops.items() if not op.startswith("Reorder"))
    print(
        name,
        "threads",
        threads,
        "load",
        os.getloadavg()[0],
        "median_us per op:",
        {k: round(v, 1) for k, v in ops.items()},
        "nodes but reorders (sum of medians)",
        nodes_total,
        "model_run median",
        statistics.median(totals),
        flush=True,
    )
