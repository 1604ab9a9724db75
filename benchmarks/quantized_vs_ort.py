"""onnx-light vs ONNX Runtime on quantized (int8/uint8) models (a benchmark, not a test).

    ./bazelw run //benchmarks:quantized_vs_ort -- [--repeats=N] [--threads=1,2] [--json=out.json]

Cases (issue 17):
  qconv:          QuantizeLinear -> QLinearConv (32 -> 64 channels, 3x3, pad 1, 28x28, int8
                  per-channel weights, int32 bias) -> DequantizeLinear, float in and out;
  qlinear_matmul: QLinearMatMul 128x768 (uint8) x 768x768 (int8 constant);
  matmul_integer: MatMulInteger 128x768 (uint8) x 768x3072 (int8 constant) -> int32;
  mlp_dynamic:    ORT's quantize_dynamic (int8 weights) of a float MLP block, MatMul 128x768
                  -> 3072, bias, Relu, MatMul -> 768, bias: DynamicQuantizeLinear before each
                  MatMulInteger, float in and out;
  cnn_static:     ORT's quantize_static (QOperator, uint8 activations, int8 per-channel weights,
                  calibrated on 4 random batches) of a small float CNN (Conv 3 -> 32 3x3 on
                  56x56, Relu, Conv 32 -> 32 + residual Add, Relu, Conv 32 -> 64 stride 2,
                  GlobalAveragePool, Flatten, Gemm -> 10): QLinearConv, QLinearAdd,
                  QLinearGlobalAveragePool, QGemm, float in and out;
  resnet18_qoperator, resnet18_qdq:
                  the torch corpus's ResNet-18 (tools/torch_corpus.py's cached export,
                  1x3x224x224, found under --corpus_dir) through ORT's quantize_static in
                  QOperator and QDQ formats (uint8 activations, int8 per-channel weights,
                  calibrated on --calibration_batches random batches), float in and out.
Weights are constant initializers (both runtimes may prepack them). Each runtime runs in its
own block per case and thread count (warm-up runs, then `repeats` timed runs), onnx-light
first, then ORT, with a pause of --ort_pause_s before onnx-light's block and after ORT's
(ORT's workers spin after runs: on 2 cores onnx-light timed right after ORT would lose its
second core); --ort_spinning=false builds ORT's sessions with spinning off, for a check
run. The JSON holds every raw sample, the medians, the largest output difference
from ORT (in quantisation steps: ORT's u8s8 path without VNNI may saturate, so QLinear outputs
can differ by a step or more; MatMulInteger must agree exactly; the float outputs of
mlp_dynamic and cnn_static count steps of (max - min) / 255 of ORT's output), and the conditions: CPU,
onnx-light build (compilation mode, ISA), ORT version, ORT's spinning and the pause, and the
load average before and after.
"""

import glob
import json
import os
import tempfile

import numpy as np
import onnx
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

from benchmarks.ort_reference import (
    ORT_PAUSE_S,
    block_timing_conditions,
    conditions,
    finish_document,
    ort_session,
    paired_blocks,
)

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 200, "timed runs per runtime, case and thread count")
flags.DEFINE_integer("warmup", 10, "untimed runs before each block")
flags.DEFINE_list("threads", ["1", "2"], "thread counts")
flags.DEFINE_string("only", "", "run only cases whose name contains this")
flags.DEFINE_bool("ort_spinning", True, "ORT's intra-op spinning at its default (on); false: off, for a check run")
flags.DEFINE_float("ort_pause_s", ORT_PAUSE_S, "pause after every ORT block, for ORT's spinning workers to sleep")
flags.DEFINE_string("json", "", "where to write the raw samples")
flags.DEFINE_string(
    "corpus_dir",
    os.path.join("~", ".cache", "onnx-light", "corpus"),
    "the torch corpus cache (tools/torch_corpus.py): torch-<version>/<exporter>/resnet18.onnx inside",
)
flags.DEFINE_string("corpus_exporter", "dynamo", "which export of the corpus to quantize (dynamo or torchscript)")
flags.DEFINE_integer("calibration_batches", 4, "random batches quantize_static calibrates the corpus models on")


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


def _float_init(rng, name, shape, scale):
    return _init(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def _quantized(model, quantize):
    """The model written by quantize(float_path, out_path) (ORT's quantizers work on files)."""
    with tempfile.TemporaryDirectory() as tmp:
        float_path, out_path = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "quantized.onnx")
        onnx.save(model, float_path)
        quantize(float_path, out_path)
        return onnx.load(out_path)


def mlp_dynamic_model(rng, m=128, d=768, hidden=3072):
    """quantize_dynamic of MatMul d -> hidden, Add, Relu, MatMul hidden -> d, Add."""
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h2"]),
        helper.make_node("Relu", ["h2"], ["h3"]),
        helper.make_node("MatMul", ["h3", "w2"], ["h4"]),
        helper.make_node("Add", ["h4", "b2"], ["y"]),
    ]
    inits = [
        _float_init(rng, "w1", [d, hidden], d**-0.5),
        _float_init(rng, "b1", [hidden], 0.1),
        _float_init(rng, "w2", [hidden, d], hidden**-0.5),
        _float_init(rng, "b2", [d], 0.1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp_dynamic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    quantized = _quantized(model, lambda src, dst: quantize_dynamic(src, dst, weight_type=QuantType.QInt8))
    feeds = {"x": rng.standard_normal((m, d), dtype=np.float32)}
    return quantized, feeds, None  # main takes one 8-bit step of ORT's output range, (max - min) / 255


class _RandomBatches(CalibrationDataReader):
    def __init__(self, shape, seed=42, count=4, name="x"):
        rng = np.random.default_rng(seed)
        self._batches = iter([{name: rng.standard_normal(shape, dtype=np.float32)} for _ in range(count)])

    def get_next(self):
        return next(self._batches, None)


def cnn_static_model(rng, size=56):
    """quantize_static (QOperator) of a small residual CNN with a Gemm head."""
    shape = (1, 3, size, size)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["c3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["y"], transB=1),
    ]
    inits = [
        _float_init(rng, "w1", [32, 3, 3, 3], 0.3),
        _float_init(rng, "b1", [32], 0.1),
        _float_init(rng, "w2", [32, 32, 3, 3], 0.06),
        _float_init(rng, "b2", [32], 0.1),
        _float_init(rng, "w3", [64, 32, 3, 3], 0.06),
        _float_init(rng, "b3", [64], 0.1),
        _float_init(rng, "wg", [10, 64], 0.2),
        _float_init(rng, "bg", [10], 0.1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn_static",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    quantized = _quantized(
        model,
        lambda src, dst: quantize_static(
            src,
            dst,
            _RandomBatches(shape),
            quant_format=QuantFormat.QOperator,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        ),
    )
    feeds = {"x": rng.standard_normal(shape, dtype=np.float32)}
    return quantized, feeds, None  # main takes one 8-bit step of ORT's output range, (max - min) / 255


def _corpus_model(name):
    """The newest cached torch-corpus export of `name` (model, input name, input shape)."""
    root = os.path.expanduser(FLAGS.corpus_dir)
    paths = sorted(glob.glob(os.path.join(root, "torch-*", FLAGS.corpus_exporter, f"{name}.onnx")))
    if not paths:
        raise app.UsageError(
            f"no {FLAGS.corpus_exporter} export of {name} under {root}: run "
            f"./bazelw run //tools:torch_corpus -- --models={name} --validate=false"
        )
    with open(paths[-1][: -len(".onnx")] + ".json") as f:
        spec = json.load(f)["settings"]["input"]
    return onnx.load(paths[-1]), spec["name"], tuple(spec["shape"])


def _resnet18_static(rng, quant_format):
    model, input_name, shape = _corpus_model("resnet18")
    batches = _RandomBatches(shape, count=FLAGS.calibration_batches, name=input_name)
    quantized = _quantized(
        model,
        lambda src, dst: quantize_static(
            src,
            dst,
            batches,
            quant_format=quant_format,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        ),
    )
    feeds = {input_name: rng.standard_normal(shape, dtype=np.float32)}
    return quantized, feeds, None  # main takes one 8-bit step of ORT's output range, (max - min) / 255


def resnet18_qoperator_model(rng):
    """quantize_static (QOperator: QLinearConv, QLinearAdd, ...) of the corpus ResNet-18."""
    return _resnet18_static(rng, QuantFormat.QOperator)


def resnet18_qdq_model(rng):
    """quantize_static (QDQ: QuantizeLinear/DequantizeLinear around float ops) of the corpus ResNet-18."""
    return _resnet18_static(rng, QuantFormat.QDQ)


CASES = {
    "qconv": qconv_model,
    "qlinear_matmul": qlinear_matmul_model,
    "matmul_integer": matmul_integer_model,
    "mlp_dynamic": mlp_dynamic_model,
    "cnn_static": cnn_static_model,
    "resnet18_qoperator": resnet18_qoperator_model,
    "resnet18_qdq": resnet18_qdq_model,
}


def main(argv):
    del argv
    doc = {
        "benchmark": "quantized_vs_ort",
        "conditions": conditions(
            repeats=FLAGS.repeats,
            warmup=FLAGS.warmup,
            **block_timing_conditions(FLAGS.ort_spinning, FLAGS.ort_pause_s),
        ),
    }
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
            theirs = ort_session(model, threads, spinning=FLAGS.ort_spinning)
            got = np.asarray(ours.run(None, feeds)[0]).astype(np.float64)
            want = np.asarray(theirs.run(None, feeds)[0]).astype(np.float64)
            case_step = step if step is not None else max(float(np.ptp(want)) / 255.0, np.finfo(np.float32).tiny)
            max_diff = float(np.max(np.abs(got - want)) / case_step)
            samples = paired_blocks(ours, theirs, feeds, FLAGS.warmup, FLAGS.repeats, FLAGS.ort_pause_s)
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
