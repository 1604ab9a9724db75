"""Quantized models as ONNX Runtime's quantizer writes them, against ONNX Runtime.

Two tiny float models built here (a CNN: Conv-Relu-Conv with a residual Add, LeakyRelu,
AveragePool, Sigmoid, Mul, Concat, GlobalAveragePool, Gemm; an MLP: MatMul/Add/Relu with a
residual Add and a Sigmoid gate) are quantized with onnxruntime.quantization:
quantize_static in both formats (QOperator: com.microsoft QLinear* nodes; QDQ: float ops
between DequantizeLinear/QuantizeLinear, run after onnx_light.qdq_rewrites as integer
nodes), per tensor and per channel, calibrated on a few random batches; and
quantize_dynamic. The reference is ONNX Runtime with session.x64quantprecision=1 (its exact
u8s8 path: without it, AVX2 machines without VNNI may saturate the u8s8 products).

Tolerances: a static model's output is a DequantizeLinear of 8-bit values, so it lies on a
grid of the output scale. Our integer kernels and ORT's compute each node in float from
dequantized values and round once, but not always with the same float operation order
(ORT runs a per-channel QDQ Gemm as float Gemm + QuantizeLinear), so a value on a rounding
tie may land one step apart: outputs must agree within one output quantization step. A
dynamic model's output is float; both runtimes compute the same int32 products and differ
only in float rounding of the final scaling: rtol 1e-5.
"""

import numpy as np
import onnx
import onnx.reference
import onnx_light
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_light import qdq_rewrites
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

OPSET = 21  # ORT's QLinearMatMul takes uint8 activations with int8 weights from opset 21


def _init(rng: np.random.Generator, name: str, shape: list[int], scale: float = 0.3) -> onnx.TensorProto:
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def cnn_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["a1"]),
        helper.make_node("LeakyRelu", ["a1"], ["l1"], alpha=0.1),
        helper.make_node("AveragePool", ["l1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Sigmoid", ["p1"], ["s1"]),
        helper.make_node("Mul", ["p1", "s1"], ["m1"]),
        helper.make_node("Concat", ["m1", "p1"], ["cat"], axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["y"], transB=1),
    ]
    inits = [
        _init(rng, "w1", [8, 3, 3, 3]),
        _init(rng, "b1", [8], 0.1),
        _init(rng, "w2", [8, 8, 3, 3], 0.2),
        _init(rng, "b2", [8], 0.1),
        _init(rng, "wg", [5, 16]),
        _init(rng, "bg", [5], 0.1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def mlp_model() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h2"]),
        helper.make_node("Relu", ["h2"], ["h3"]),
        helper.make_node("MatMul", ["h3", "w2"], ["h4"]),
        helper.make_node("Add", ["h4", "b2"], ["h5"]),
        helper.make_node("Add", ["h5", "x"], ["h6"]),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Mul", ["h6", "s"], ["y"]),
    ]
    inits = [
        _init(rng, "w1", [16, 32]),
        _init(rng, "b1", [32], 0.1),
        _init(rng, "w2", [32, 16]),
        _init(rng, "b2", [16], 0.1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


MODELS = {"cnn": (cnn_model, (1, 3, 8, 8)), "mlp": (mlp_model, (4, 16))}


class RandomBatches(CalibrationDataReader):
    """A few standard-normal batches, the same for every quantization of a model."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        rng = np.random.default_rng(42)
        self._batches = iter([{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(4)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._batches, None)


def _ort_run(path: str, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.add_session_config_entry("session.x64quantprecision", "1")
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _inputs(shape: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]


def _output_step(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear that produces the graph output."""
    out = model.graph.output[0].name
    (dq,) = [n for n in model.graph.node if n.output[0] == out]
    assert dq.op_type == "DequantizeLinear"
    (scale,) = [t for t in model.graph.initializer if t.name == dq.input[1]]
    return float(numpy_helper.to_array(scale))


def _quantize_static(tmp_path, name: str, fmt: QuantFormat, per_channel: bool) -> str:
    build, shape = MODELS[name]
    float_path, out = str(tmp_path / f"{name}.onnx"), str(tmp_path / f"{name}_{fmt.name}_{per_channel}.onnx")
    onnx.save(build(), float_path)
    quantize_static(
        float_path,
        out,
        RandomBatches(shape),
        quant_format=fmt,
        per_channel=per_channel,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    return out


STATIC_CASES = [(name, pc) for name in MODELS for pc in (False, True)]


@pytest.mark.parametrize(("name", "per_channel"), STATIC_CASES)
def test_qoperator_model_loads_and_matches_ort(tmp_path, name, per_channel):
    path = _quantize_static(tmp_path, name, QuantFormat.QOperator, per_channel)
    model = onnx.load(path)
    ms_ops = {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    assert ms_ops, "the quantizer should write com.microsoft QLinear* nodes"
    session = onnx_light.InferenceSession(path)
    step = _output_step(model)
    for x in _inputs(MODELS[name][1]):
        (got,) = session.run(None, {"x": x})
        np.testing.assert_allclose(got, _ort_run(path, x), rtol=0, atol=step * 1.001)


EXPECTED_INTEGER_OPS = {
    "cnn": {
        "QLinearConv",
        "QLinearAdd",
        "QLinearLeakyRelu",
        "QLinearAveragePool",
        "QLinearSigmoid",
        "QLinearMul",
        "QLinearConcat",
        "QLinearGlobalAveragePool",
        "QGemm",
    },
    "mlp": {"QLinearMatMul", "QLinearAdd", "QLinearSigmoid", "QLinearMul"},
}


@pytest.mark.parametrize(("name", "per_channel"), STATIC_CASES)
def test_qdq_model_runs_as_integer_nodes_and_matches_ort(tmp_path, name, per_channel):
    path = _quantize_static(tmp_path, name, QuantFormat.QDQ, per_channel)
    model = onnx.load(path)
    rewritten = qdq_rewrites.apply(model)
    ops = [n.op_type for n in rewritten.graph.node]
    assert EXPECTED_INTEGER_OPS[name] <= set(ops), ops
    float_ops = {"Conv", "MatMul", "Gemm", "Add", "Mul", "AveragePool", "Sigmoid", "LeakyRelu", "Concat"}
    assert not float_ops & set(ops), ops  # every such op of these models has an integer kernel
    if name == "cnn":
        assert "Flatten" in ops  # no integer kernel: its float path stays, between DQ and Q
    assert [n.op_type for n in model.graph.node] == [n.op_type for n in onnx.load(path).graph.node]  # input untouched
    session = onnx_light.InferenceSession(rewritten)
    step = _output_step(model)
    for x in _inputs(MODELS[name][1]):
        (got,) = session.run(None, {"x": x})
        np.testing.assert_allclose(got, _ort_run(path, x), rtol=0, atol=step * 1.001)


@pytest.mark.parametrize("name", list(MODELS))
def test_dynamically_quantized_model_matches_ort(tmp_path, name):
    build, shape = MODELS[name]
    float_path, out = str(tmp_path / f"{name}.onnx"), str(tmp_path / f"{name}_dynamic.onnx")
    onnx.save(build(), float_path)
    quantize_dynamic(float_path, out, weight_type=QuantType.QInt8)
    assert any(n.op_type in ("MatMulInteger", "ConvInteger") for n in onnx.load(out).graph.node)
    session = onnx_light.InferenceSession(out)
    for x in _inputs(shape):
        (got,) = session.run(None, {"x": x})
        np.testing.assert_allclose(got, _ort_run(out, x), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ the pass on hand-built groups


def _qdq_conv(activation: str, out_zero_point: int, clip: tuple[float, float] = (0.0, 6.0)) -> onnx.ModelProto:
    """x -> Q -> DQ -> Conv (int8 weights behind a DQ) -> activation -> Q -> DQ -> y."""
    rng = np.random.default_rng(3)
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
        numpy_helper.from_array(np.array(128, np.uint8), "xz"),
        numpy_helper.from_array(rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8), "wq"),
        numpy_helper.from_array(np.array([0.01, 0.02, 0.015, 0.005], np.float32), "ws"),
        numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
        numpy_helper.from_array(np.array(0.04, np.float32), "ys"),
        numpy_helper.from_array(np.array(out_zero_point, np.uint8), "yz"),
        numpy_helper.from_array(np.array(clip[0], np.float32), "lo"),
        numpy_helper.from_array(np.array(clip[1], np.float32), "hi"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
    ]
    last = "c"
    if activation == "Relu":
        nodes.append(helper.make_node("Relu", ["c"], ["a"]))
        last = "a"
    elif activation == "Clip":
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["a"]))
        last = "a"
    nodes += [
        helper.make_node("QuantizeLinear", [last, "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    return onnx_light.InferenceSession(model).run(None, {"x": x})[0]


@pytest.mark.parametrize(
    ("activation", "zero_point", "clip", "folds"),
    [
        ("Relu", 0, (0.0, 6.0), True),  # the uint8 range [0, 255 * 0.04] already clips at 0
        ("Relu", 100, (0.0, 6.0), False),  # the range goes below 0: Relu still clips
        ("Clip", 0, (0.0, 20.0), True),  # [0, 10.2] lies inside [0, 20]
        ("Clip", 0, (0.0, 6.0), False),  # Clip cuts at 6 inside the range
    ],
)
def test_relu_and_clip_fold_only_where_the_quantized_range_clips(activation, zero_point, clip, folds):
    model = _qdq_conv(activation, zero_point, clip)
    rewritten = qdq_rewrites.apply(model)
    ops = [n.op_type for n in rewritten.graph.node]
    if folds:
        assert ops == ["QuantizeLinear", "QLinearConv", "DequantizeLinear"], ops
    else:
        assert activation in ops and "Conv" in ops and "QLinearConv" not in ops, ops
    x = np.random.default_rng(4).standard_normal((1, 2, 5, 5)).astype(np.float32) * 3
    # The float QDQ path (ONNX Runtime with its optimizations off) is the reference: one
    # output step apart at most (the integer node rounds once, float Conv then Quantize too).
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(
        None, {"x": x}
    )[0]
    np.testing.assert_allclose(_run(rewritten, x), want, rtol=0, atol=0.04 * 1.001)


def test_plain_conv_group_becomes_qlinear_conv_with_per_channel_weights():
    model = _qdq_conv("", 128)
    rewritten = qdq_rewrites.apply(model)
    (conv,) = [n for n in rewritten.graph.node if n.op_type == "QLinearConv"]
    assert list(conv.input[3:6]) == ["wq", "ws", "wz"]  # the quantized weights, read directly
    x = np.random.default_rng(5).standard_normal((1, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(_run(rewritten, x), _run(model, x), rtol=0, atol=0.04 * 1.001)


def test_nothing_is_rewritten_where_a_quantization_parameter_can_be_fed():
    model = _qdq_conv("", 128)
    model.graph.input.append(helper.make_tensor_value_info("ys", TensorProto.FLOAT, []))
    assert "QLinearConv" not in [n.op_type for n in qdq_rewrites.apply(model).graph.node]


def test_gemm_without_quantized_output_becomes_float_output_qgemm():
    rng = np.random.default_rng(6)
    inits = [
        numpy_helper.from_array(np.array(0.02, np.float32), "as"),
        numpy_helper.from_array(np.array(10, np.uint8), "az"),
        numpy_helper.from_array(rng.integers(-127, 128, (3, 6)).astype(np.int8), "bq"),
        numpy_helper.from_array(np.array([0.01, 0.03, 0.02], np.float32), "bs"),
        numpy_helper.from_array(np.zeros(3, np.int8), "bz"),
        numpy_helper.from_array(np.array([0.5, -0.25, 1.0], np.float32), "c"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "as", "az"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "as", "az"], ["xd"]),
        helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["bd"], axis=0),
        helper.make_node("Gemm", ["xd", "bd", "c"], ["y"], transB=1, alpha=0.5),
    ]
    graph = helper.make_graph(
        nodes,
        "qgemm_float",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    rewritten = qdq_rewrites.apply(model)
    assert [n.op_type for n in rewritten.graph.node] == ["QuantizeLinear", "QGemm"]
    x = rng.uniform(-2, 2, (2, 6)).astype(np.float32)
    # numpy reference: the dequantized operands in float64; the bias is requantized to the
    # accumulator scale alpha * a_scale * b_scale (so it may move by half a step of that).
    xq = np.clip(np.rint(x / 0.02) + 10, 0, 255)
    a = (xq - 10) * 0.02
    b = numpy_helper.to_array(inits[2]).astype(np.float64) * np.array([0.01, 0.03, 0.02])[:, None]
    want = 0.5 * a @ b.T + np.array([0.5, -0.25, 1.0])
    acc_scale = 0.5 * 0.02 * np.array([0.01, 0.03, 0.02])
    np.testing.assert_allclose(_run(rewritten, x), want, rtol=1e-5, atol=float(acc_scale.max()) * 0.5 + 1e-5)


def _qdq_max_pool(out_scale: float, out_zero_point: int) -> onnx.ModelProto:
    """x (uint8) -> DequantizeLinear(0.05, 120) -> MaxPool 3x3 stride 2 pad 1 -> QuantizeLinear."""
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "s_in", "z_in"], ["xf"]),
        helper.make_node("MaxPool", ["xf"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["p", "s_out", "z_out"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "s_in"),
        numpy_helper.from_array(np.array(120, np.uint8), "z_in"),
        numpy_helper.from_array(np.array(out_scale, np.float32), "s_out"),
        numpy_helper.from_array(np.array(out_zero_point, np.uint8), "z_out"),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_max_pool",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 11, 10])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


@pytest.mark.parametrize(
    ("out_scale", "out_zero_point", "folds"),
    [(0.05, 120, True), (0.06, 120, False), (0.05, 121, False)],
    ids=["same_parameters", "other_scale", "other_zero_point"],
)
def test_qdq_max_pool_runs_on_8_bit_values_only_with_its_input_parameters(out_scale, out_zero_point, folds):
    model = _qdq_max_pool(out_scale, out_zero_point)
    ops = [n.op_type for n in qdq_rewrites.apply(model).graph.node]
    assert ops == (["MaxPool"] if folds else ["DequantizeLinear", "MaxPool", "QuantizeLinear"]), ops
    x = np.random.default_rng(5).integers(0, 256, size=(1, 4, 11, 10)).astype(np.uint8)
    want = onnx.reference.ReferenceEvaluator(model).run(None, {"x": x})[0]  # the float QDQ path
    (got,) = onnx_light.InferenceSession(model).run(None, {"x": x})
    np.testing.assert_array_equal(got, want)
