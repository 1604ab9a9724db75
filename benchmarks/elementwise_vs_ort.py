"""onnx-light vs ONNX Runtime on single-node elementwise models (a benchmark, not a test).

    ./bazelw run //benchmarks:elementwise_vs_ort -- [--repeats=N] [--json=out.json]

For Add, Mul, Sigmoid, Gelu, Cast (float32 -> float16) and Where at 1K, 64K and 16M elements, with 1 and 2
threads, both runtimes run the same model on the same feeds, interleaved sample by sample
so that load from other processes hits both alike. Prints the median latency of each and
the ratio onnx-light / ORT; --json keeps every raw sample. "kernel ms" is the onnx-light
node's own duration (from run_with_events, separate samples): the session's feed and
fetch copies and output allocation are the rest of its end-to-end time.
"""

import numpy as np
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper

from benchmarks.ort_reference import conditions, interleaved_samples, ort_session, write_results

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 0, "samples per case (0: scaled to the size)")
flags.DEFINE_string("json", "", "where to write the raw samples")
flags.DEFINE_list("ops", ["Add", "Mul", "Sigmoid", "Gelu", "Cast", "Where"], "ops to run")
flags.DEFINE_list("sizes", ["1024", "65536", "16777216"], "element counts")
flags.DEFINE_list("threads", ["1", "2"], "thread counts")

F = TensorProto.FLOAT


def make_model(op, n):
    x = helper.make_tensor_value_info("x", F, [n])
    y = helper.make_tensor_value_info("y", F, [n])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT16 if op == "Cast" else F, [n])
    if op in ("Add", "Mul"):
        nodes, inputs, opset = [helper.make_node(op, ["x", "y"], ["out"])], [x, y], 14
    elif op == "Where":
        c = helper.make_tensor_value_info("c", TensorProto.BOOL, [n])
        nodes, inputs, opset = [helper.make_node("Where", ["c", "x", "y"], ["out"])], [c, x, y], 16
    elif op == "Cast":
        nodes, inputs, opset = [helper.make_node("Cast", ["x"], ["out"], to=TensorProto.FLOAT16)], [x], 21
    else:
        nodes, inputs, opset = [helper.make_node(op, ["x"], ["out"])], [x], 20
    graph = helper.make_graph(nodes, op, inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def make_feeds(op, n, rng):
    feeds = {"x": rng.standard_normal(n, dtype=np.float32)}
    if op in ("Add", "Mul", "Where"):
        feeds["y"] = rng.standard_normal(n, dtype=np.float32)
    if op == "Where":
        feeds["c"] = rng.random(n) > 0.5
    return feeds


def main(argv):
    del argv
    started = conditions()
    rng = np.random.default_rng(0)
    results = []
    print(
        f"{'op':<8} {'elements':>9} {'thr':>3} {'onnx-light ms':>14} {'ORT ms':>10} {'ratio':>7} "
        f"{'kernel ms':>10} {'kernel/ORT':>10}"
    )
    for op in FLAGS.ops:
        for n in map(int, FLAGS.sizes):
            model = make_model(op, n)
            feeds = make_feeds(op, n, rng)
            for threads in map(int, FLAGS.threads):
                ours = onnx_light.InferenceSession(
                    model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
                )
                theirs = ort_session(model, threads)
                np.testing.assert_allclose(ours.run(None, feeds)[0], theirs.run(None, feeds)[0], rtol=1e-5, atol=1e-6)
                repeats = FLAGS.repeats or max(9, min(2000, (1 << 24) // max(n, 1) * 3))
                samples = interleaved_samples(ours, theirs, feeds, repeats)
                ol, rt = np.median(samples["onnx_light"]), np.median(samples["ort"])
                kernel = np.median(samples["onnx_light_kernel"])
                print(
                    f"{op:<8} {n:>9} {threads:>3} {ol:>14.4f} {rt:>10.4f} {ol / rt:>7.2f} {kernel:>10.4f} "
                    f"{kernel / rt:>10.2f}",
                    flush=True,
                )
                results.append(
                    {
                        "op": op,
                        "elements": n,
                        "threads": threads,
                        "median_ms_onnx_light": ol,
                        "median_ms_ort": rt,
                        "ratio": ol / rt,
                        "median_ms_onnx_light_kernel": kernel,
                        "samples_ms": samples,
                    }
                )
    if FLAGS.json:
        write_results(FLAGS.json, results, started)


if __name__ == "__main__":
    app.run(main)
