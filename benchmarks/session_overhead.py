"""Per-node session overhead: a chain of small Add nodes run by onnx-light and by ONNX
Runtime in one process, with the same thread count. Benchmark, not a test.

    ./bazelw run //benchmarks:session_overhead -- --nodes 200 --elements 16 --threads 1

Prints raw per-run samples (microseconds), medians, the per-node overhead of each runtime
(median run time / nodes) and the ratio onnx-light / ONNX Runtime.
"""

import json
import statistics
import time

import numpy as np
import onnx_light
import onnxruntime as ort
from absl import app, flags
from onnx import TensorProto, helper

from benchmarks.ort_reference import ort_session

FLAGS = flags.FLAGS
flags.DEFINE_integer("nodes", 200, "Add nodes in the chain")
flags.DEFINE_integer("elements", 16, "elements of the float tensor each node adds")
flags.DEFINE_integer("threads", 1, "threads of both runtimes")
flags.DEFINE_integer("repeats", 200, "timed runs per runtime")
flags.DEFINE_integer("warmup", 20, "untimed runs before each block")
flags.DEFINE_string("json", None, "also write the samples here")


def add_chain(nodes, elements):
    """y = x + c + c + ... (nodes Adds), each on a small float tensor."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])]
    const = helper.make_tensor("c", TensorProto.FLOAT, [elements], np.full(elements, 0.5, np.float32).tolist())
    chain, previous = [], "x"
    for i in range(nodes):
        out = f"t{i}"
        chain.append(helper.make_node("Add", [previous, "c"], [out], name=f"add{i}"))
        previous = out
    outputs = [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [elements])]
    graph = helper.make_graph(chain, "add_chain", inputs, outputs, initializer=[const])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def sample(run, repeats, warmup):
    for _ in range(warmup):
        run()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / 1000.0)
    return samples


def main(argv: list[str]) -> None:
    del argv  # flags only

    model = add_chain(FLAGS.nodes, FLAGS.elements).SerializeToString()
    x = np.random.default_rng(0).standard_normal(FLAGS.elements).astype(np.float32)
    feeds = {"x": x}

    ours = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=FLAGS.threads))
    # No graph rewrites: both runtimes execute the same 200 nodes.
    theirs = ort_session(model, FLAGS.threads, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)

    expected = x + 0.5 * FLAGS.nodes
    np.testing.assert_allclose(ours.run(None, feeds)[0], expected, rtol=1e-5)
    np.testing.assert_allclose(theirs.run(None, feeds)[0], expected, rtol=1e-5)

    # Interleave the two runtimes in rounds so that machine noise hits both alike.
    ours_samples, theirs_samples = [], []
    rounds = 5
    for _ in range(rounds):
        ours_samples += sample(lambda: ours.run(None, feeds), FLAGS.repeats // rounds, FLAGS.warmup)
        theirs_samples += sample(lambda: theirs.run(None, feeds), FLAGS.repeats // rounds, FLAGS.warmup)

    ours_median, theirs_median = statistics.median(ours_samples), statistics.median(theirs_samples)
    print(
        f"chain of {FLAGS.nodes} Add nodes on float[{FLAGS.elements}], {FLAGS.threads} thread(s), "
        f"{len(ours_samples)} runs each"
    )
    print(f"onnx-light   run: median {ours_median:9.1f} us  per node {1000 * ours_median / FLAGS.nodes:7.1f} ns")
    print(f"onnxruntime  run: median {theirs_median:9.1f} us  per node {1000 * theirs_median / FLAGS.nodes:7.1f} ns")
    print(f"ratio onnx-light / onnxruntime: {ours_median / theirs_median:.2f}")
    print("raw onnx-light samples (us):", " ".join(f"{s:.1f}" for s in ours_samples))
    print("raw onnxruntime samples (us):", " ".join(f"{s:.1f}" for s in theirs_samples))
    if FLAGS.json:
        with open(FLAGS.json, "w") as f:
            json.dump(
                {
                    "nodes": FLAGS.nodes,
                    "elements": FLAGS.elements,
                    "threads": FLAGS.threads,
                    "onnx_light_us": ours_samples,
                    "onnxruntime_us": theirs_samples,
                },
                f,
            )


if __name__ == "__main__":
    app.run(main)
