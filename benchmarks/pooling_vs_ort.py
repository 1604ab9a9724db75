"""onnx-light vs ONNX Runtime on single-node pooling models (a benchmark, not a test).

    ./bazelw run //benchmarks:pooling_vs_ort -- [--repeats=N] [--json=out.json]

ResNet/MobileNet pooling shapes: the ResNet stem MaxPool (1x64x112x112, 3x3 stride 2 pad 1),
the same pool on 1x64x28x28 (near the parallel threshold), a 2x2 stride 2 MaxPool/AveragePool on 1x256x56x56, a 3x3 stride 1 pad 1 AveragePool and the
global pools on 1x2048x7x7 and 1x1280x7x7, with 1 and 2 threads. Both runtimes run the same
model on the same feeds, interleaved sample by sample; prints medians, the ratio onnx-light /
ORT, and each node's own duration ("kernel ms": onnx-light's from run_with_events, ORT's from
its profiler, in a second profiled session), since feed/fetch copies dominate small pools.
"""

import json
import os
import tempfile

import numpy as np
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper

from benchmarks.ort_reference import conditions, interleaved_samples, ort_session, write_results

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 200, "samples per case")
flags.DEFINE_string("json", "", "where to write the raw samples")
flags.DEFINE_list("threads", ["1", "2"], "thread counts")
flags.DEFINE_string("only", "", "run only cases whose name contains this")

# name, op, input shape, attributes
CASES = [
    ("maxpool_stem", "MaxPool", [1, 64, 112, 112], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("maxpool_small", "MaxPool", [1, 64, 28, 28], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("maxpool_2x2s2", "MaxPool", [1, 256, 56, 56], dict(kernel_shape=[2, 2], strides=[2, 2])),
    ("avgpool_2x2s2", "AveragePool", [1, 256, 56, 56], dict(kernel_shape=[2, 2], strides=[2, 2])),
    (
        "avgpool_3x3s1p1",
        "AveragePool",
        [1, 64, 56, 56],
        dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0),
    ),
    ("lppool_3x3s2p1", "LpPool", [1, 64, 112, 112], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("gap_2048x7x7", "GlobalAveragePool", [1, 2048, 7, 7], {}),
    ("gap_1280x7x7", "GlobalAveragePool", [1, 1280, 7, 7], {}),
    ("gmp_2048x7x7", "GlobalMaxPool", [1, 2048, 7, 7], {}),
]


def make_model(op, shape, attrs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], op, [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


def main(argv):
    del argv
    started = conditions()
    rng = np.random.default_rng(0)
    results = []
    print(
        f"{'case':<16} {'thr':>3} {'onnx-light ms':>14} {'ORT ms':>10} {'ratio':>7} {'kernel ms':>10} "
        f"{'ORT kernel':>10} {'kernel ratio':>12}"
    )
    for name, op, shape, attrs in CASES:
        if FLAGS.only and FLAGS.only not in name:
            continue
        model = make_model(op, shape, attrs)
        feeds = {"x": rng.standard_normal(shape, dtype=np.float32)}
        for threads in map(int, FLAGS.threads):
            ours = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
            theirs = ort_session(model, threads)
            profile_dir = tempfile.mkdtemp()
            profiled = ort_session(model, threads, profile_prefix=os.path.join(profile_dir, "ort"))
            np.testing.assert_allclose(ours.run(None, feeds)[0], theirs.run(None, feeds)[0], rtol=1e-5, atol=1e-6)
            samples = interleaved_samples(
                ours,
                theirs,
                feeds,
                FLAGS.repeats,
                per_repeat=lambda profiled=profiled, feeds=feeds: profiled.run(None, feeds),
            )
            with open(profiled.end_profiling()) as f:
                samples["ort_kernel"] = [
                    e["dur"] / 1e3
                    for e in json.load(f)
                    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")
                ]
            ol, rt = np.median(samples["onnx_light"]), np.median(samples["ort"])
            kernel, ort_kernel = np.median(samples["onnx_light_kernel"]), np.median(samples["ort_kernel"])
            print(
                f"{name:<16} {threads:>3} {ol:>14.4f} {rt:>10.4f} {ol / rt:>7.2f} {kernel:>10.4f} {ort_kernel:>10.4f} "
                f"{kernel / ort_kernel:>12.2f}",
                flush=True,
            )
            results.append(
                {
                    "case": name,
                    "op": op,
                    "shape": shape,
                    "threads": threads,
                    "median_ms_onnx_light": ol,
                    "median_ms_ort": rt,
                    "ratio": ol / rt,
                    "median_ms_onnx_light_kernel": kernel,
                    "median_ms_ort_kernel": ort_kernel,
                    "kernel_ratio": kernel / ort_kernel,
                    "samples_ms": samples,
                }
            )
    if FLAGS.json:
        write_results(FLAGS.json, results, started)


if __name__ == "__main__":
    app.run(main)
