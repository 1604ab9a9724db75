"""Instructions per run() of onnx-light and ONNX Runtime under callgrind (a benchmark, not a test).

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg/ours.%p \\
        bazel-bin/benchmarks/instructions_vs_ort --runtime=onnx_light [--only=conv] [--runs=3]
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg/ort.%p \\
        bazel-bin/benchmarks/instructions_vs_ort --runtime=ort
    bazel-bin/benchmarks/instructions_vs_ort --summarize=/tmp/cg     # the table

(ONNX_LIGHT_MAX_ISA=avx2 is implied: valgrind emulates no AVX-512, so both runtimes take
their AVX2 paths; this compares the two AVX2 implementations on an AVX-512 host, where
wall-clock timings of a shared machine are not decision grade.) Each case is a one-node (or
few-node) model at a shape of the issue-14 corpus, or a whole corpus model from
--corpus_dir (the PyTorch exports, when present). Per case and runtime: a session on one
thread, --warmup untimed runs, then callgrind's counters are zeroed, instrumentation runs
for exactly --runs run() calls (client requests through callgrind_marks.so, bracketing the
calls), and the counters are dumped under the label "<runtime>:<case>". Everything else
(imports, session creation, warm-up) runs uninstrumented. --summarize reads the dumps of a
folder and prints instructions per run of each runtime and their ratio.
"""

import ctypes
import glob
import os
import re
import sys

import numpy as np
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper

from benchmarks.conv_vs_ort import conv_model
from benchmarks.qlinear_binary_vs_ort import CASES as QLINEAR_BINARY_CASES
from benchmarks.qlinear_binary_vs_ort import qlinear_binary_model

FLAGS = flags.FLAGS
flags.DEFINE_enum("runtime", "onnx_light", ["onnx_light", "ort"], "the runtime whose run() calls are counted")
flags.DEFINE_integer("runs", 3, "counted run() calls per case")
# --warmup (uncounted run() calls before them; pass 1 under valgrind) and --only (comma-separated
# substrings: run only the cases whose name contains one) are conv_vs_ort's flags, imported with it.
flags.DEFINE_string("ort_level", "all", "ORT's graph optimization level: all (its default), extended, basic, disabled")
flags.DEFINE_string("corpus_dir", "~/.cache/onnx-light/corpus", "the PyTorch corpus (whole models), if present")
flags.DEFINE_string("summarize", "", "print the table of the callgrind dumps in this folder instead of running")

# name: (input channels, output channels, height = width, kernel, stride, group, activation)
CONV_CASES = {
    # ResNet-18's 3x3 convolutions (the implicit GEMM), the stride-2 ones included.
    "conv3x3_64_56": (64, 64, 56, 3, 1, 1, ""),
    "conv3x3s2_64to128_56": (64, 128, 56, 3, 2, 1, ""),
    "conv3x3_128_28": (128, 128, 28, 3, 1, 1, ""),
    "conv3x3_256_14": (256, 256, 14, 3, 1, 1, ""),
    "conv3x3_512_7": (512, 512, 7, 3, 1, 1, ""),
    # 1x1 convolutions (GEMM on X).
    "conv1x1_64to256_56": (64, 256, 56, 1, 1, 1, ""),
    "conv1x1_24to144_56_swish": (24, 144, 56, 1, 1, 1, "swish"),
    # ResNet-50's 1x1 convolutions: 56x56 (large N) and the 7x7 stage (N = 49 positions).
    "conv1x1_256to64_56": (256, 64, 56, 1, 1, 1, ""),
    "conv1x1_512to2048_7": (512, 2048, 7, 1, 1, 1, ""),
    "conv1x1_2048to512_7": (2048, 512, 7, 1, 1, 1, ""),
    # Depthwise 3x3 (EfficientNet-B0 / MobileNetV2 shapes).
    "dw3x3s1_32_112_swish": (32, 32, 112, 3, 1, 32, "swish"),
    "dw3x3s1_144_56": (144, 144, 56, 3, 1, 144, ""),
    "dw3x3s2_96_112_swish": (96, 96, 112, 3, 2, 96, "swish"),
}


def _single(op, shape, attrs=None, domain_opset=("", 20)):
    def build(rng):
        graph = helper.make_graph(
            [helper.make_node(op, ["x"], ["y"], **(attrs or {}))],
            op.lower(),
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(*domain_opset)], ir_version=9)
        return model, {"x": rng.standard_normal(shape).astype(np.float32)}

    return build


def _matmul(m, k, n, bias=False):
    def build(rng):
        b = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        inits = [numpy_helper.from_array(b, "b")]
        nodes = [helper.make_node("MatMul", ["x", "b"], ["p" if bias else "y"])]
        if bias:
            inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "c"))
            nodes.append(helper.make_node("Add", ["p", "c"], ["y"]))
        graph = helper.make_graph(
            nodes,
            "matmul",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, k])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
        return model, {"x": rng.standard_normal((1, m, k)).astype(np.float32)}

    return build


def _layernorm(shape):
    def build(rng):
        d = shape[-1]
        inits = [
            numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "g"),
            numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "b"),
        ]
        graph = helper.make_graph(
            [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
            "layernorm",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
        return model, {"x": rng.standard_normal(shape).astype(np.float32)}

    return build


def _conv(cin, cout, hw, kernel, stride, group, activation):
    def build(rng):
        return conv_model(rng, cin, cout, hw, kernel, stride, group, activation)

    return build


def _qlinear_binary(op, a_shape, b_shape):
    def build(rng):
        return qlinear_binary_model(rng, op, a_shape, b_shape)

    return build


def _corpus_model(path):
    def build(rng):
        import onnx  # noqa: PLC0415

        model = onnx.load(path)
        initializers = {i.name for i in model.graph.initializer}
        feeds = {}
        for value in model.graph.input:
            if value.name in initializers:
                continue
            dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
            feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
        return model, feeds

    return build


def cases():
    out = {name: _conv(*shape) for name, shape in CONV_CASES.items()}
    out.update(
        {
            "sigmoid_144x56x56": _single("Sigmoid", [1, 144, 56, 56]),
            "tanh_128x3072": _single("Tanh", [1, 128, 3072]),
            "gelu_128x3072": _single("Gelu", [1, 128, 3072]),
            "softmax_12x128x128": _single("Softmax", [1, 12, 128, 128], {"axis": -1}),
            "layernorm_128x768": _layernorm([1, 128, 768]),
            "matmul_128x768x3072": _matmul(128, 768, 3072),
            "matmul_128x3072x768": _matmul(128, 3072, 768),
            "matmul_128x768x768_bias": _matmul(128, 768, 768, bias=True),
            "matmul_512x512x512": _matmul(512, 512, 512),
        }
    )
    out.update({name: _qlinear_binary(*case) for name, case in QLINEAR_BINARY_CASES.items()})
    for path in sorted(glob.glob(os.path.join(os.path.expanduser(FLAGS.corpus_dir), "torch-*", "dynamo", "*.onnx"))):
        out["model_" + os.path.splitext(os.path.basename(path))[0]] = _corpus_model(path)
    return out


def _marks():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "libcallgrind_marks.so"), os.path.join(here, "..", "libcallgrind_marks.so")):
        if os.path.exists(candidate):
            return ctypes.CDLL(candidate)
    found = glob.glob(os.path.join(os.path.dirname(sys.argv[0]), "**", "libcallgrind_marks.so"), recursive=True)
    if not found:
        raise FileNotFoundError("libcallgrind_marks.so (//benchmarks:callgrind_marks) not found beside the script")
    return ctypes.CDLL(found[0])


def _session(model):
    if FLAGS.runtime == "ort":
        import onnxruntime as ort  # noqa: PLC0415

        from benchmarks.ort_reference import ort_session  # noqa: PLC0415

        levels = {
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        }
        return ort_session(model, 1, graph_optimization_level=levels[FLAGS.ort_level])
    import onnx_light  # noqa: PLC0415

    return onnx_light.InferenceSession(
        model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=1)
    )


def _summarize(folder):
    per_run = {}
    for path in sorted(glob.glob(os.path.join(folder, "*"))):
        label, total = None, None
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"desc: Trigger: Client Request: (\S+)", line)
                if m:
                    label = m.group(1)
                m = re.match(r"(summary|totals): (\d+)", line)
                if m:
                    total = int(m.group(2))
        if label and total is not None and ":" in label:
            runtime, rest = label.split(":", 1)
            case, runs = rest.rsplit("@", 1)
            per_run[(case, runtime)] = total / int(runs)
    names = sorted({case for case, _ in per_run})
    print(f"{'case':<28} {'onnx-light Ir/run':>18} {'ORT Ir/run':>14} {'ratio':>7}")
    for case in names:
        ours, theirs = per_run.get((case, "onnx_light")), per_run.get((case, "ort"))
        ratio = f"{ours / theirs:7.2f}" if ours and theirs else "      -"
        fmt = lambda v: f"{v / 1e6:.2f}M" if v else "-"  # noqa: E731
        print(f"{case:<28} {fmt(ours):>18} {fmt(theirs):>14} {ratio}")


def main(argv):
    del argv
    if FLAGS.summarize:
        _summarize(FLAGS.summarize)
        return
    marks = _marks()
    marks.onnx_light_callgrind_dump.argtypes = [ctypes.c_char_p]
    if not marks.onnx_light_callgrind_available():
        raise app.UsageError("libcallgrind_marks.so was built without valgrind's headers (apt-get install valgrind)")
    if not marks.onnx_light_running_on_valgrind():
        print("instructions_vs_ort: not under valgrind; nothing is counted (see the module docstring)", flush=True)
    only = [s for s in FLAGS.only.split(",") if s]
    rng = np.random.default_rng(0)
    for name, build in cases().items():
        if only and not any(s in name for s in only):
            continue
        model, feeds = build(rng)
        session = _session(model)
        for _ in range(FLAGS.warmup):
            session.run(None, feeds)
        marks.onnx_light_callgrind_zero()
        marks.onnx_light_callgrind_start()
        for _ in range(FLAGS.runs):
            session.run(None, feeds)
        marks.onnx_light_callgrind_stop()
        marks.onnx_light_callgrind_dump(f"{FLAGS.runtime}:{name}@{FLAGS.runs}".encode())
        print(f"{FLAGS.runtime} {name}: {FLAGS.runs} runs counted", flush=True)
        del session


if __name__ == "__main__":
    app.run(main)
