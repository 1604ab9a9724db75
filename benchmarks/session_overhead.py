"""Per-run and per-node session overhead: chains of N tiny nodes (Add or Identity on a few
floats) run by onnx-light and by ONNX Runtime in one process, same thread count, graph
rewrites off in both (each executes every node). Benchmark, not a test.

    ./bazelw run //benchmarks:session_overhead -- --nodes 1,4,16,64,256 --op Add --threads 1

For each N the two runtimes alternate in rounds (machine noise hits both alike). Prints the
raw per-run samples (microseconds), the medians, and a least-squares line through the
medians over N for each runtime: intercept = fixed cost of a run (binding, feeds, outputs,
frame), slope = cost per node (executor loop, kernel dispatch, output allocation); the
kernels' own arithmetic on 16 floats is a few ns of it.
"""

import statistics
import time

import numpy as np
import onnx_light
import onnxruntime as ort
from absl import app, flags
from onnx import TensorProto, helper

from benchmarks.ort_reference import conditions, finish_document, ort_session

FLAGS = flags.FLAGS
flags.DEFINE_list("nodes", ["1", "2", "4", "8", "16", "32", "64", "128", "256"], "chain lengths")
flags.DEFINE_enum("op", "Add", ["Add", "Identity"], "the chain's op (Add reads a constant too)")
flags.DEFINE_integer("elements", 16, "elements of the float tensor each node reads")
flags.DEFINE_integer("threads", 1, "threads of both runtimes")
flags.DEFINE_integer("repeats", 200, "timed runs per runtime and chain length")
flags.DEFINE_integer("rounds", 5, "rounds the repeats are split over, the runtimes alternating")
flags.DEFINE_integer("warmup", 20, "untimed runs before each block")
flags.DEFINE_string("json", None, "also write the samples here")
flags.register_multi_flags_validator(
    ["repeats", "rounds"],
    lambda f: f["rounds"] >= 1 and f["repeats"] >= f["rounds"],
    message="--rounds must be >= 1 and --repeats >= --rounds (each round times --repeats // --rounds runs "
    "per runtime; with fewer repeats than rounds no run would be timed)",
)


def chain(op, nodes, elements):
    """y = x + c + c + ... (Add) or x through `nodes` Identity nodes, on float[elements]."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])]
    const = helper.make_tensor("c", TensorProto.FLOAT, [elements], np.full(elements, 0.5, np.float32).tolist())
    body, previous = [], "x"
    for i in range(nodes):
        out = f"t{i}"
        node_inputs = [previous, "c"] if op == "Add" else [previous]
        body.append(helper.make_node(op, node_inputs, [out], name=f"{op.lower()}{i}"))
        previous = out
    outputs = [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [elements])]
    initializers = [const] if op == "Add" else []  # an unread initializer makes ORT warn
    graph = helper.make_graph(body, f"{op.lower()}_chain", inputs, outputs, initializer=initializers)
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


def line_fit(xs, ys):
    """(intercept, slope) of the least-squares line through (xs, ys)."""
    slope, intercept = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(intercept), float(slope)


def measure(nodes):
    model = chain(FLAGS.op, nodes, FLAGS.elements).SerializeToString()
    x = np.random.default_rng(0).standard_normal(FLAGS.elements).astype(np.float32)
    feeds = {"x": x}
    options = ort.SessionOptions()
    options.intra_op_num_threads = FLAGS.threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ours = onnx_light.InferenceSession(model, sess_options=options)
    theirs = ort_session(model, FLAGS.threads, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    expected = x + 0.5 * nodes if FLAGS.op == "Add" else x
    np.testing.assert_allclose(ours.run(None, feeds)[0], expected, rtol=1e-5)
    np.testing.assert_allclose(theirs.run(None, feeds)[0], expected, rtol=1e-5)
    ours_samples, theirs_samples = [], []
    for _ in range(FLAGS.rounds):
        ours_samples += sample(lambda: ours.run(None, feeds), FLAGS.repeats // FLAGS.rounds, FLAGS.warmup)
        theirs_samples += sample(lambda: theirs.run(None, feeds), FLAGS.repeats // FLAGS.rounds, FLAGS.warmup)
    return ours_samples, theirs_samples


def main(argv: list[str]) -> None:
    del argv  # flags only
    lengths = [int(n) for n in FLAGS.nodes]
    started = conditions(op=FLAGS.op, elements=FLAGS.elements, threads=FLAGS.threads)
    rows = {}
    print(f"chains of {FLAGS.op} on float[{FLAGS.elements}], {FLAGS.threads} thread(s), {FLAGS.repeats} runs each")
    print(f"{'nodes':>6} {'onnx-light us':>14} {'onnxruntime us':>15} {'ratio':>6}")
    for n in lengths:
        ours_samples, theirs_samples = measure(n)
        rows[n] = {"onnx_light_us": ours_samples, "onnxruntime_us": theirs_samples}
        om, tm = statistics.median(ours_samples), statistics.median(theirs_samples)
        print(f"{n:>6} {om:>14.2f} {tm:>15.2f} {om / tm:>6.2f}", flush=True)
    for side, label in (("onnx_light_us", "onnx-light"), ("onnxruntime_us", "onnxruntime")):
        intercept, slope = line_fit(lengths, [statistics.median(rows[n][side]) for n in lengths])
        print(f"{label:<12} fixed per run {intercept:8.2f} us   per node {1000 * slope:8.1f} ns")
    for n in lengths:
        for side, label in (("onnx_light_us", "onnx-light"), ("onnxruntime_us", "onnxruntime")):
            print(f"raw {label} N={n} (us):", " ".join(f"{s:.1f}" for s in rows[n][side]))
    doc = {"op": FLAGS.op, "elements": FLAGS.elements, "threads": FLAGS.threads, "chains": rows}
    finish_document({"conditions": started, **doc}, FLAGS.json or None)


if __name__ == "__main__":
    app.run(main)
