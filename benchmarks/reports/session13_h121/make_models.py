"""Models of the session-13 h121 A/B (issue 17), written to /tmp/h121: one QLinearConv node
per model (uint8 X with zero point 128, int8 per-channel W with zero points 0, as
quantize_static makes them; pads k // 2) at ResNet-18's int8 layer shapes, plus the torch
corpus's ResNet-18 through ORT's quantize_static in QOperator and QDQ form (the models of
benchmarks/quantized_vs_ort.py). Run with PYTHONPATH=<tree>/bazel-bin/benchmarks/
quantized_vs_ort.runfiles/onnx_light (the benchmarks package, for the ResNet-18 models)."""

import os
import pickle

import numpy as np
from onnx import TensorProto, helper, numpy_helper

D = "/tmp/h121"


def qconv(c, m, hw, stride=1, k=3, seed=0):
    rng = np.random.default_rng(seed)
    inits = [
        numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
        numpy_helper.from_array(rng.integers(-127, 128, size=(m, c, k, k)).astype(np.int8), "w"),
        numpy_helper.from_array(rng.uniform(0.002, 0.01, size=m).astype(np.float32), "w_scale"),
        numpy_helper.from_array(np.zeros(m, np.int8), "w_zp"),
        numpy_helper.from_array(np.array(0.05, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(120, np.uint8), "y_zp"),
        numpy_helper.from_array(rng.integers(-5000, 5000, size=m).astype(np.int32), "bias"),
    ]
    node = helper.make_node(
        "QLinearConv",
        ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"],
        ["y"],
        pads=[k // 2] * 4,
        strides=[stride] * 2,
    )
    g = helper.make_graph(
        [node],
        "q",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, c, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        initializer=inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    return model, {"x": rng.integers(0, 256, size=(1, c, hw, hw)).astype(np.uint8)}


CASES = {
    "q64_56": lambda: qconv(64, 64, 56),  # 3x3, 56x56 (layer1)
    "q128_28": lambda: qconv(128, 128, 28),
    "q256_14": lambda: qconv(256, 256, 14),
    "q512_7": lambda: qconv(512, 512, 7),
    "q64to128_s2": lambda: qconv(64, 128, 56, stride=2),  # 3x3 stride 2 (first conv of a stage)
    "q128to256_s2": lambda: qconv(128, 256, 28, stride=2),
    "q256to512_s2": lambda: qconv(256, 512, 14, stride=2),
    "p64to128_s2": lambda: qconv(64, 128, 56, stride=2, k=1),  # 1x1 stride 2 (downsample)
    "p128to256_s2": lambda: qconv(128, 256, 28, stride=2, k=1),
    "p256to512_s2": lambda: qconv(256, 512, 14, stride=2, k=1),
    "q1x1_4608_7": lambda: qconv(4608, 512, 7, k=1),  # h109's 1x1 of q512_7's M x N x K
    "stem": lambda: qconv(3, 64, 224, stride=2, k=7),  # 3 channels: not taken (C % 4)
}

if __name__ == "__main__":
    os.makedirs(D, exist_ok=True)
    for name, f in CASES.items():
        model, feeds = f()
        with open(f"{D}/{name}.onnx", "wb") as out:
            out.write(model.SerializeToString())
        pickle.dump(feeds, open(f"{D}/{name}.feeds", "wb"))
    from absl import flags

    from benchmarks import quantized_vs_ort as q

    flags.FLAGS(["make_models"])
    for name, fn in (("r18_qop", q.resnet18_qoperator_model), ("r18_qdq", q.resnet18_qdq_model)):
        model, feeds, _ = fn(np.random.default_rng(0))
        with open(f"{D}/{name}.onnx", "wb") as out:
            out.write(model.SerializeToString())
        pickle.dump(feeds, open(f"{D}/{name}.feeds", "wb"))
