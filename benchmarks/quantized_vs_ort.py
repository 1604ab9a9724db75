"""onnx-light vs ONNX Runtime on quantized (int8/uint8) models (a benchmark, not a test).

    ./bazelw run //benchmarks:quantized_vs_ort -- [--repeats=N] [--threads=1,2] [--json=out.json]

Cases (issue 17):
  qconv:          QuantizeLinear -> QLinearConv (32 -> 64 channels, 3x3, pad 1, 28x28, int8
                  per-channel weights, int32 bias) -> DequantizeLinear, float in and out;
  qlinear_matmul: QLinearMatMul 128x768 (uint8) x 768x768 (int8 constant);
  matmul_integer: MatMulInteger 128x768 (uint8) x 768x3072 (int8 constant) -> int32.
Weights are constant initializers (both runtimes may prepack them). Each runtime runs in its
own block per case and thread count (warm-up runs, then `repeats` timed runs), onnx-light
first, then ORT. The JSON holds every raw sample, the medians, the largest output difference
from ORT (in quantisation steps: ORT's u8s8 path without VNNI may saturate, so QLinear outputs
can differ by a step or more; MatMulInteger must agree exactly), and the conditions: CPU,
onnx-light build (compilation mode, ISA), ORT version and load average before and after.
"""

import time

import numpy as np
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper

from benchmarks.ort_reference import conditions, finish_document, ort_session

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 200, "timed runs per runtime, case and thread count")
flags.DEFINE_integer("warmup", 10, "untimed runs before each block")
flags.DEFINE_list("threads", ["1", "2"], "thread counts")
flags.DEFINE_string("only", "", "run only cases whose name contains this")
flags.DEFINE_string("json", "", "where to write the raw samples")


def _init(name, array):
    return numpy_helper.from_array(array, name)


def qconv_model(rng):
    """QuantizeLinear -> QLinearConv (32 -> 64, 3x3, 28x28) -> DequantizeLinear."""
    c, m = 32, 64
    w = rng.integers(-127, 128, size=(m, c, 3, 3)).astype(np.int8)
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
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
        helper.make_node(
            "QLinearConv",
            ["xq", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"],
            ["yq"],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "qconv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=inits,
    )
    feeds = {"x": rng.standard_normal((1, c, 28, 28), dtype=np.float32)}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), feeds, 0.05


def qlinear_matmul_model(rng, m=128, k=768, n=768):
    inits = [
        _init("a_scale", np.array(0.02, np.float32)),
        _init("a_zp", np.array(128, np.uint8)),
        _init("b", rng.integers(-127, 128, size=(k, n)).astype(np.int8)),
        _init("b_scale", np.array(0.004, np.float32)),
        _init("b_zp", np.array(0, np.int8)),
        _init("y_scale", np.array(0.5, np.float32)),
        _init("y_zp", np.array(128, np.uint8)),
    ]
    node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"], ["y"])
    graph = helper.make_graph(
        [node],
        "qlinear_matmul",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        initializer=inits,
    )
    feeds = {"a": rng.integers(0, 256, size=(m, k)).astype(np.uint8)}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), feeds, 1.0


def matmul_integer_model(rng, m=128, k=768, n=3072):
    inits = [
        _init("b", rng.integers(-127, 128, size=(k, n)).astype(np.int8)),
        _init("a_zp", np.array(128, np.uint8)),
        _init("b_zp", np.array(0, np.int8)),
    ]
    node = helper.make_node("MatMulInteger", ["a", "b", "a_zp", "b_zp"], ["y"])
    graph = helper.make_graph(
        [node],
        "matmul_integer",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        initializer=inits,
    )
    feeds = {"a": rng.integers(0, 256, size=(m, k)).astype(np.uint8)}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), feeds, 1.0


CASES = {"qconv": qconv_model, "qlinear_matmul": qlinear_matmul_model, "matmul_integer": matmul_integer_model}


def timed_block(session, feeds, warmup, repeats):
    """Wall-clock milliseconds of `repeats` runs after `warmup` untimed ones."""
    for _ in range(warmup):
        session.run(None, feeds)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def main(argv):
    del argv
    doc = {"benchmark": "quantized_vs_ort", "conditions": conditions(repeats=FLAGS.repeats, warmup=FLAGS.warmup)}
    results = []
    print(f"{'case':<16} {'thr':>3} {'onnx-light ms':>14} {'ORT ms':>10} {'ratio':>7} {'max diff (steps)':>17}")
    for name, build in CASES.items():
        if FLAGS.only and FLAGS.only not in name:
            continue
        model, feeds, step = build(np.random.default_rng(0))
        for threads in map(int, FLAGS.threads):
            ours = onnx_light.InferenceSession(
                model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
            )
            theirs = ort_session(model, threads)
            got = np.asarray(ours.run(None, feeds)[0]).astype(np.float64)
            want = np.asarray(theirs.run(None, feeds)[0]).astype(np.float64)
            max_diff = float(np.max(np.abs(got - want)) / step)
            samples = {"onnx_light": timed_block(ours, feeds, FLAGS.warmup, FLAGS.repeats)}
            samples["ort"] = timed_block(theirs, feeds, FLAGS.warmup, FLAGS.repeats)
            ol, rt = float(np.median(samples["onnx_light"])), float(np.median(samples["ort"]))
            print(f"{name:<16} {threads:>3} {ol:>14.4f} {rt:>10.4f} {ol / rt:>7.2f} {max_diff:>17.2f}", flush=True)
            results.append(
                {
                    "case": name,
                    "threads": threads,
                    "median_ms_onnx_light": ol,
                    "median_ms_ort": rt,
                    "ratio": ol / rt,
                    "max_diff_vs_ort_steps": max_diff,
                    "samples_ms": samples,
                }
            )
    doc["results"] = results
    finish_document(doc, FLAGS.json)


if __name__ == "__main__":
    app.run(main)
