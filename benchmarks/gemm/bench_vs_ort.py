"""GEMM, MatMul and Conv: onnx-light beside ONNX Runtime in one process, interleaved.

Each case is one ONNX node; both runtimes get the same feeds and thread count. Runs
alternate (ours, ORT, ours, ...) so that load from other processes hits both alike.
Writes raw samples (case x runtime x threads x repetition) as CSV and prints medians,
GFLOP/s and the ratio ours / ORT. On a shared machine the single-thread figures use the
calling thread's CPU time (both runtimes compute on the caller when given one thread),
which other processes do not inflate; multi-thread figures use wall time.

    bazel run -c opt //benchmarks/gemm:bench_vs_ort -- --out=$PWD/benchmarks/reports/gemm/vs_ort.csv
    bazel run -c opt //benchmarks/gemm:bench_vs_ort -- --cases=transformer --threads=2   # BERT / ViT
"""

import csv
import statistics
import time

import numpy as np
import onnx
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper

from benchmarks.ort_reference import ort_session

FLAGS = flags.FLAGS
flags.DEFINE_list("threads", ["1", "2"], "thread counts to compare")
flags.DEFINE_integer("reps", 15, "timed runs per runtime, case and thread count")
flags.DEFINE_enum("cases", "all", ["gemm", "conv", "transformer", "all"], "which cases")
flags.DEFINE_string("filter", "", "only cases whose name contains this")
flags.DEFINE_string("out", "", "CSV of every sample")


def matmul_case(m, n, k):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])],
        "mm",
        [
            helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [k, n]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
    )
    rng = np.random.default_rng(0)
    feeds = {"A": rng.standard_normal((m, k), np.float32), "B": rng.standard_normal((k, n), np.float32)}
    return f"matmul_{m}x{n}x{k}", graph, feeds, 2.0 * m * n * k


def linear_case(tokens, k, n):
    """A transformer's linear layer as torch exports it: MatMul of [1, tokens, k] activations
    by a constant [k, n] weight (prepacked at session creation): BERT (128 tokens) and
    ViT-B/16 (197 tokens): the fused QKV projection (N = 2304), the attention output (768)
    and the MLP (3072 and back)."""
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "W"], ["Y"])],
        "linear",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [1, tokens, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, tokens, n])],
        [onnx.numpy_helper.from_array(rng.standard_normal((k, n), np.float32) * 0.05, "W")],
    )
    feeds = {"A": rng.standard_normal((1, tokens, k), np.float32)}
    return f"linear_{tokens}x{n}x{k}", graph, feeds, 2.0 * tokens * n * k


def heads_case(heads, m, n, k):
    """Attention's batched MatMuls (both operands activations): scores [h, m, k] @ [h, k, n]
    (k = 64, the head size) and context [h, m, m] @ [h, m, 64]."""
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])],
        "heads",
        [
            helper.make_tensor_value_info("A", TensorProto.FLOAT, [1, heads, m, k]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [1, heads, k, n]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, heads, m, n])],
    )
    feeds = {
        "A": rng.standard_normal((1, heads, m, k), np.float32),
        "B": rng.standard_normal((1, heads, k, n), np.float32),
    }
    return f"heads{heads}_{m}x{n}x{k}", graph, feeds, 2.0 * heads * m * n * k


def classifier_case(k, n, activation=""):
    """A fully connected layer at batch 1 as PyTorch exports it: Gemm(x, W[n, k], b) with
    transB=1 and constant weights (the GEMV path: MobileNetV3's 576x1024 and 1024x1000,
    EfficientNet's 1280x1000, ResNet-18's 512x1000), optionally followed by an activation
    node (MobileNetV3's 576x1024 + HardSwish, which onnx-light fuses into FusedGemm)."""
    rng = np.random.default_rng(0)
    if activation:
        nodes = [
            helper.make_node("Gemm", ["A", "W", "b"], ["G"], transB=1),
            helper.make_node(activation, ["G"], ["Y"]),
        ]
    else:
        nodes = [helper.make_node("Gemm", ["A", "W", "b"], ["Y"], transB=1)]
    graph = helper.make_graph(
        nodes,
        "fc",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [1, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, n])],
        [
            onnx.numpy_helper.from_array(rng.standard_normal((n, k), np.float32) * 0.05, "W"),
            onnx.numpy_helper.from_array(rng.standard_normal((n,), np.float32), "b"),
        ],
    )
    suffix = f"_{activation.lower()}" if activation else ""
    return f"classifier_{k}x{n}{suffix}", graph, {"A": rng.standard_normal((1, k), np.float32)}, 2.0 * n * k


def conv_case(name, n, c, h, w, m, kernel, stride=1, pad=0, group=1):
    out_h = (h + 2 * pad - kernel) // stride + 1
    out_w = (w + 2 * pad - kernel) // stride + 1
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((m, c // group, kernel, kernel), np.float32) * 0.1
    bias = rng.standard_normal((m,), np.float32)
    graph = helper.make_graph(
        [
            helper.make_node(
                "Conv",
                ["X", "W", "B"],
                ["Y"],
                kernel_shape=[kernel, kernel],
                strides=[stride, stride],
                pads=[pad] * 4,
                group=group,
            )
        ],
        name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, m, out_h, out_w])],
        [onnx.numpy_helper.from_array(weight, "W"), onnx.numpy_helper.from_array(bias, "B")],
    )
    feeds = {"X": rng.standard_normal((n, c, h, w), np.float32)}
    flops = 2.0 * n * m * out_h * out_w * (c // group) * kernel * kernel
    return f"conv_{name}", graph, feeds, flops


def cases(selection):
    gemm = [
        matmul_case(1024, 1024, 1024),
        matmul_case(128, 768, 3072),
        matmul_case(1, 4096, 4096),
        matmul_case(4096, 1, 4096),
        classifier_case(576, 1024),
        classifier_case(1024, 1000),
        classifier_case(1280, 1000),
        classifier_case(512, 1000),
        classifier_case(576, 1024, "HardSwish"),
        matmul_case(256, 256, 256),
    ]
    conv = [
        # ResNet-50 layer shapes (batch 1).
        conv_case("resnet_conv1_7x7s2", 1, 3, 224, 224, 64, 7, 2, 3),
        conv_case("resnet_3x3_64", 1, 64, 56, 56, 64, 3, 1, 1),
        conv_case("resnet_1x1_64_256", 1, 64, 56, 56, 256, 1),
        conv_case("resnet_3x3_128", 1, 128, 28, 28, 128, 3, 1, 1),
        conv_case("resnet_3x3_256", 1, 256, 14, 14, 256, 3, 1, 1),
        conv_case("resnet_1x1_1024_256", 1, 1024, 14, 14, 256, 1),
        conv_case("resnet_3x3_512", 1, 512, 7, 7, 512, 3, 1, 1),
        # MobileNet depthwise shapes.
        conv_case("mobilenet_dw_32_112", 1, 32, 112, 112, 32, 3, 1, 1, 32),
        conv_case("mobilenet_dw_128_56", 1, 128, 56, 56, 128, 3, 1, 1, 128),
        conv_case("mobilenet_dw_256_28s2", 1, 256, 28, 28, 256, 3, 2, 1, 256),
        conv_case("mobilenet_dw_512_14", 1, 512, 14, 14, 512, 3, 1, 1, 512),
    ]
    # BERT (seq 128) and ViT-B/16 (197 tokens): linear layers and attention's batched MatMuls.
    transformer = (
        [
            linear_case(tokens, k, n)
            for tokens in (128, 197)
            for k, n in ((768, 2304), (768, 768), (768, 3072), (3072, 768))
        ]
        + [heads_case(12, m, m, 64) for m in (128, 197)]
        + [heads_case(12, m, 64, m) for m in (128, 197)]
    )
    return {"gemm": gemm, "conv": conv, "transformer": transformer, "all": gemm + conv + transformer}[selection]


def main(argv: list[str]) -> None:
    del argv  # flags only
    rows = []
    print(f"{'case':36s} {'thr':>3s} {'ours GF/s':>10s} {'ORT GF/s':>10s} {'ratio':>6s}")
    for name, graph, feeds, flops in cases(FLAGS.cases):
        if FLAGS.filter not in name:
            continue
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        data = model.SerializeToString()
        for threads in [int(t) for t in FLAGS.threads]:
            theirs = ort_session(data, threads)
            ours = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
            expected = theirs.run(None, feeds)[0]
            got = ours.run(None, feeds)[0]
            np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3 * float(np.abs(expected).max()))
            samples = {"onnx_light": [], "onnxruntime": []}
            for _ in range(2):
                ours.run(None, feeds)
                theirs.run(None, feeds)
            for rep in range(FLAGS.reps):
                for runtime, session in (("onnx_light", ours), ("onnxruntime", theirs)):
                    start, cpu_start = time.perf_counter(), time.thread_time()
                    session.run(None, feeds)
                    wall, cpu = time.perf_counter() - start, time.thread_time() - cpu_start
                    seconds = cpu if threads == 1 else wall
                    samples[runtime].append(seconds)
                    rows.append(
                        [name, runtime, threads, rep, f"{wall:.6e}", f"{cpu:.6e}", f"{flops / seconds * 1e-9:.2f}"]
                    )
            med = {r: statistics.median(s) for r, s in samples.items()}
            gf = {r: flops / t * 1e-9 for r, t in med.items()}
            print(
                f"{name:36s} {threads:3d} {gf['onnx_light']:10.1f} {gf['onnxruntime']:10.1f} "
                f"{gf['onnx_light'] / gf['onnxruntime']:6.2f}",
                flush=True,
            )
    if FLAGS.out:
        with open(FLAGS.out, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["case", "runtime", "threads", "rep", "wall_seconds", "caller_cpu_seconds", "gflops"])
            writer.writerows(rows)


if __name__ == "__main__":
    app.run(main)
