"""onnx-light vs ONNX Runtime on Softmax, LogSoftmax and LayerNormalization (a benchmark, not a test).

    ./bazelw run //benchmarks:softmax_layernorm_vs_ort -- [--repeats=N] [--json=out.json]

Each case runs one single-node float model in both runtimes on the same feeds, interleaved
sample by sample so that load from other processes hits both alike, at 1 and 2 threads.
Prints the median end-to-end latency of each and the ratio onnx-light / ORT, and the
onnx-light node's own duration (run_with_events); --json keeps every raw sample.
"""

import numpy as np
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper

from benchmarks.ort_reference import conditions, interleaved_samples, ort_session, write_results

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 0, "samples per case (0: scaled to the size)")
flags.DEFINE_string("json", "", "where to write the raw samples")
flags.DEFINE_list("threads", ["1", "2"], "thread counts")
flags.DEFINE_list("ops", ["Softmax", "LogSoftmax", "LayerNormalization"], "ops to run")

F = TensorProto.FLOAT

# (op, shape, axis)
CASES = [
    ("Softmax", [1, 6, 128, 128], -1),
    ("Softmax", [1, 12, 512, 512], -1),
    ("Softmax", [1, 12, 128, 128], -1),  # BERT-base attention scores, sequence 128
    ("Softmax", [1, 12, 197, 197], -1),  # ViT-B/16 attention scores
    ("Softmax", [64, 1000], -1),
    ("Softmax", [8, 128, 64], 1),
    ("LogSoftmax", [1, 6, 128, 128], -1),
    ("LogSoftmax", [64, 1000], -1),
    ("LogSoftmax", [8, 128, 64], 1),
    ("LayerNormalization", [1, 128, 384], -1),
    ("LayerNormalization", [1, 512, 768], -1),
    ("LayerNormalization", [64, 1024], -1),
]


def make_model(op, shape, axis):
    x = helper.make_tensor_value_info("x", F, shape)
    y = helper.make_tensor_value_info("y", F, shape)
    initializers = []
    if op == "LayerNormalization":
        rng = np.random.default_rng(1)
        norm = shape[axis:] if axis >= 0 else shape[axis:]
        initializers = [
            helper.make_tensor("scale", F, norm, rng.standard_normal(norm).astype(np.float32).ravel()),
            helper.make_tensor("bias", F, norm, rng.standard_normal(norm).astype(np.float32).ravel()),
        ]
        node = helper.make_node(op, ["x", "scale", "bias"], ["y"], axis=axis)
    else:
        node = helper.make_node(op, ["x"], ["y"], axis=axis)
    graph = helper.make_graph([node], op, [x], [y], initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def main(argv):
    del argv
    started = conditions()
    rng = np.random.default_rng(0)
    results = []
    print(
        f"{'op':<18} {'shape':<18} {'axis':>4} {'thr':>3} {'onnx-light ms':>14} {'ORT ms':>10} {'ratio':>7} "
        f"{'kernel ms':>10} {'kernel/ORT':>10}"
    )
    for op, shape, axis in CASES:
        if op not in FLAGS.ops:
            continue
        model = make_model(op, shape, axis)
        feeds = {"x": (rng.standard_normal(shape, dtype=np.float32) * 3)}
        n = int(np.prod(shape))
        for threads in map(int, FLAGS.threads):
            ours = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
            theirs = ort_session(model, threads)
            np.testing.assert_allclose(ours.run(None, feeds)[0], theirs.run(None, feeds)[0], rtol=1e-4, atol=1e-5)
            repeats = FLAGS.repeats or max(15, min(400, (1 << 22) // n * 4))
            samples = interleaved_samples(ours, theirs, feeds, repeats)
            ol, rt = np.median(samples["onnx_light"]), np.median(samples["ort"])
            kernel = np.median(samples["onnx_light_kernel"])
            shape_text = "x".join(map(str, shape))
            print(
                f"{op:<18} {shape_text:<18} {axis:>4} {threads:>3} {ol:>14.4f} {rt:>10.4f} {ol / rt:>7.2f} "
                f"{kernel:>10.4f} {kernel / rt:>10.2f}",
                flush=True,
            )
            results.append(
                {
                    "op": op,
                    "shape": shape,
                    "axis": axis,
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
