"""A/B helper (h109, session 11): one QLinearConv node per model (uint8 X, int8 per-channel W with zero
points 0, as quantize_static makes them). `python3 ab.py --make` writes the models to /tmp/h109;
`python3 ab.py CASES THREADS RUNS TAG` times one onnx-light build on them (median and min of RUNS
run() calls after 3 warm-ups) and saves the outputs for a bit-identity check, with
PYTHONPATH=<tree>/bazel-bin/benchmarks/quantized_vs_ort.runfiles/onnx_light{,/python}. ort.py times
ORT (spinning off) on the same files. Alternate processes of the two builds for an A/B."""

import os
import pickle
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D = "/tmp/h109"


def _init(name, array):
    return numpy_helper.from_array(array, name)


def qconv(c, m, hw, stride=1, k=3, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, size=(m, c, k, k)).astype(np.int8)
    inits = [
        _init("x_scale", np.array(0.02, np.float32)),
        _init("x_zp", np.array(128, np.uint8)),
        _init("w", w),
        _init("w_scale", rng.uniform(0.002, 0.01, size=m).astype(np.float32)),
        _init("w_zp", np.zeros(m, np.int8)),
        _init("y_scale", np.array(0.05, np.float32)),
        _init("y_zp", np.array(120, np.uint8)),
        _init("bias", rng.integers(-5000, 5000, size=m).astype(np.int32)),
    ]
    p = k // 2
    node = helper.make_node(
        "QLinearConv",
        ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"],
        ["y"],
        pads=[p] * 4,
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
    "q512_7": lambda: qconv(512, 512, 7),
    "q256_14": lambda: qconv(256, 256, 14),
    "q256to512_s2": lambda: qconv(256, 512, 14, stride=2),
    "q128_28": lambda: qconv(128, 128, 28),
    # 1x1 stride 1 (columns read in place, no grid): the same M x N x K as q512_7 at N = 64
    # and 49, and as q256_14 at N = 196.
    "q1x1_4608_8": lambda: qconv(4608, 512, 8, k=1),
    "q1x1_4608_7": lambda: qconv(4608, 512, 7, k=1),
    "q1x1_2304_14": lambda: qconv(2304, 256, 14, k=1),
}

if sys.argv[1] == "--make":
    for name, f in CASES.items():
        model, feeds = f()
        onnx.save(model, f"{D}/{name}.onnx")
        pickle.dump(feeds, open(f"{D}/{name}.feeds", "wb"))
    sys.exit(0)

import onnx_light  # noqa: E402 (after --make, which needs no build)

names = sys.argv[1].split(",")
threads = int(sys.argv[2])
runs = int(sys.argv[3])
tag = sys.argv[4]
for name in names:
    feeds = pickle.load(open(f"{D}/{name}.feeds", "rb"))
    opts = onnx_light.SessionOptions()
    opts.intra_op_num_threads = threads
    s = onnx_light.InferenceSession(f"{D}/{name}.onnx", sess_options=opts)
    out = s.run(None, feeds)[0]
    np.save(f"{D}/out_{tag}_{name}.npy", out)
    for _ in range(3):
        s.run(None, feeds)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        s.run(None, feeds)
        ts.append(time.perf_counter() - t0)
    print(
        f"{tag} {name} t{threads} median_us {np.median(ts) * 1e6:.1f} min_us {np.min(ts) * 1e6:.1f} load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
