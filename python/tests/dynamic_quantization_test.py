"""ONNX Runtime's dynamic quantization chain (quantize_dynamic) fused at session creation:
qdq_rewrites.fuse_matmul_integer_to_float (MatMulInteger -> Cast -> Mul (-> Add) ->
com.microsoft MatMulIntegerToFloat) and qdq_rewrites.fuse_dynamic_quantize_matmul
(DynamicQuantizeLinear + MatMulIntegerToFloat -> com.microsoft DynamicQuantizeMatMul).

Oracles: the same model run unfused (level "basic": DynamicQuantizeLinear, MatMulInteger,
Cast, Mul, Add as separate kernels), which the fused kernels must match bit for bit (they
do the same float operations in the same order), and ONNX Runtime (its own fusion, with
session.x64quantprecision=1, its exact u8s8 path). Against ONNX Runtime the int32 products
are the same; its epilogue may round differently in the last place, and a DynamicQuantize-
Linear zero point or byte on a rounding tie may differ by one step: rtol 1e-5 plus an
absolute tolerance of a few output ulps scaled to the model's range (stated per test).
"""

import os
import sys

import numpy as np
import onnx
import onnx_light
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_light import qdq_rewrites
from onnxruntime.quantization import QuantType, quantize_dynamic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rewrite_checks import model, op_types, optimize_checking_index  # noqa: E402

MS = "com.microsoft"


def _session(m: onnx.ModelProto, level: str) -> onnx_light.InferenceSession:
    return onnx_light.InferenceSession(m.SerializeToString(), graph_optimization_level=level)


def _run(m: onnx.ModelProto, level: str, feeds: dict) -> list[np.ndarray]:
    return _session(m, level).run(None, feeds)


def _ort(m: onnx.ModelProto | str, feeds: dict) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.add_session_config_entry("session.x64quantprecision", "1")
    source = m if isinstance(m, str) else m.SerializeToString()
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"]).run(None, feeds)


def _expect_bit_identical(fused: list[np.ndarray], unfused: list[np.ndarray]) -> None:
    assert len(fused) == len(unfused)
    for got, want in zip(fused, unfused):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _const(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array, name)


def _chain(
    k: int = 24,
    n: int = 10,
    weight_type: type = np.int8,
    per_column: bool = False,
    bias_shape: tuple[int, ...] | None = (10,),
    dql_readers: int = 1,
    output_intermediate: str | None = None,
) -> onnx.ModelProto:
    """x [3, 4, k] -> DynamicQuantizeLinear -> `dql_readers` x (MatMulInteger(W_i) -> Cast ->
    Mul(x_scale * w_scale) (-> Add(bias))), as quantize_dynamic writes it."""
    rng = np.random.default_rng(5)
    lo, hi = (-128, 127) if weight_type == np.int8 else (0, 255)
    params = n if per_column else 1
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"])]
    inits, outputs = [], []
    for r in range(dql_readers):
        w = rng.integers(lo, hi + 1, (k, n)).astype(weight_type)
        ws = (rng.random(params) * 0.02 + 0.001).astype(np.float32).reshape((n,) if per_column else ())
        wzp = rng.integers(lo, hi + 1, params).astype(weight_type).reshape((n,) if per_column else ())
        inits += [_const(f"w{r}", w), _const(f"ws{r}", ws), _const(f"wzp{r}", wzp)]
        nodes += [
            helper.make_node("Mul", ["xs", f"ws{r}"], [f"s{r}"]),
            helper.make_node("MatMulInteger", ["xq", f"w{r}", "xzp", f"wzp{r}"], [f"i{r}"], name=f"mmi{r}"),
            helper.make_node("Cast", [f"i{r}"], [f"f{r}"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"f{r}", f"s{r}"], [f"m{r}"]),
        ]
        out = f"m{r}"
        if bias_shape is not None:
            inits.append(_const(f"b{r}", (rng.standard_normal(bias_shape)).astype(np.float32)))
            nodes.append(helper.make_node("Add", [out, f"b{r}"], [f"y{r}"]))
            out = f"y{r}"
        outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
    if output_intermediate is not None:
        elem = TensorProto.INT32 if output_intermediate.startswith("i") else TensorProto.FLOAT
        outputs.append(helper.make_tensor_value_info(output_intermediate, elem, None))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, k])
    return model(nodes, [x], outputs, inits, opset=17)


def _feeds(k: int = 24, seed: int = 0, shape: tuple[int, ...] | None = None) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": (rng.standard_normal(shape or (3, 4, k)) * 2).astype(np.float32)}


# ------------------------------------------------------------------ the passes one by one


@pytest.mark.parametrize("weight_type", [np.int8, np.uint8])
@pytest.mark.parametrize("per_column", [False, True])
def test_matmul_integer_cast_mul_add_becomes_matmul_integer_to_float(weight_type, per_column):
    m = _chain(weight_type=weight_type, per_column=per_column)
    fused = qdq_rewrites.fuse_matmul_integer_to_float(m)
    assert op_types(fused) == ["DynamicQuantizeLinear", "MatMulIntegerToFloat"]
    (node,) = [n for n in fused.graph.node if n.op_type == "MatMulIntegerToFloat"]
    assert node.domain == MS and list(node.input) == ["xq", "w0", "xs", "ws0", "xzp", "wzp0", "b0"]
    assert list(node.output) == ["y0"]


def test_dynamic_quantize_linear_read_once_becomes_dynamic_quantize_matmul():
    m = qdq_rewrites.fuse_matmul_integer_to_float(_chain())
    fused = qdq_rewrites.fuse_dynamic_quantize_matmul(m)
    assert op_types(fused) == ["DynamicQuantizeMatMul"]
    (node,) = fused.graph.node
    assert node.domain == MS and list(node.input) == ["x", "w0", "ws0", "wzp0", "b0"]


def test_a_shared_dynamic_quantize_linear_stays_and_each_reader_becomes_matmul_integer_to_float():
    # A transformer's Q, K and V projections read one quantized input: it is quantized once.
    rewritten = optimize_checking_index(_chain(dql_readers=3), level="extended")
    assert op_types(rewritten) == ["DynamicQuantizeLinear"] + ["MatMulIntegerToFloat"] * 3


def test_without_bias_the_chain_ends_at_the_mul():
    rewritten = optimize_checking_index(_chain(bias_shape=None), level="extended")
    assert op_types(rewritten) == ["DynamicQuantizeMatMul"]
    assert len(rewritten.graph.node[0].input) == 4


@pytest.mark.parametrize("bias_shape", [(1,), (4, 10), ()])
def test_a_bias_that_is_not_one_value_per_column_stays_a_float_add(bias_shape):
    rewritten = optimize_checking_index(_chain(bias_shape=bias_shape), level="extended")
    assert op_types(rewritten) == ["DynamicQuantizeMatMul", "Add"]


@pytest.mark.parametrize(
    ("seen", "expected"),
    [
        ("i0", ["DynamicQuantizeLinear", "Mul", "MatMulInteger", "Cast", "Mul", "Add"]),
        ("f0", ["DynamicQuantizeLinear", "Mul", "MatMulInteger", "Cast", "Mul", "Add"]),
        ("m0", ["DynamicQuantizeMatMul", "Add"]),  # fused up to the Mul, whose output stays seen
    ],
)
def test_the_chain_stops_before_an_intermediate_that_is_a_graph_output(seen, expected):
    m = _chain(output_intermediate=seen)
    rewritten = optimize_checking_index(m, level="extended")
    assert op_types(rewritten) == expected
    feeds = _feeds()
    _expect_bit_identical(_run(m, "all", feeds), _run(m, "disabled", feeds))


def test_a_zero_point_per_row_of_a_is_not_fused():
    k, n = 6, 5
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("MatMulInteger", ["a", "w", "azp"], ["i"]),
        helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["f", "s"], ["y"]),
    ]
    inits = [
        _const("w", rng.integers(-128, 128, (k, n)).astype(np.int8)),
        _const("azp", np.arange(4, dtype=np.uint8)),
        _const("s", np.float32(0.5).reshape(())),
    ]
    m = model(
        nodes,
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [4, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, n])],
        inits,
    )
    assert op_types(optimize_checking_index(m, level="extended")) == ["MatMulInteger", "Cast", "Mul"]


def test_a_folded_constant_multiplier_becomes_b_scale_with_a_scale_one():
    # Quantized A fed directly and the scale product already a constant: a_scale = 1.0 (exact).
    k, n = 8, 6
    rng = np.random.default_rng(2)
    nodes = [
        helper.make_node("MatMulInteger", ["a", "w", "azp"], ["i"]),
        helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["s", "f"], ["y"]),
    ]
    inits = [
        _const("w", rng.integers(-128, 128, (k, n)).astype(np.int8)),
        _const("azp", np.uint8(3).reshape(())),
        _const("s", (rng.random(n) * 0.1).astype(np.float32)),
    ]
    m = model(
        nodes,
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [2, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])],
        inits,
    )
    rewritten = optimize_checking_index(m, level="extended")
    assert op_types(rewritten) == ["MatMulIntegerToFloat"]
    feeds = {"a": rng.integers(0, 256, (2, k)).astype(np.uint8)}
    _expect_bit_identical(_run(m, "all", feeds), _run(m, "disabled", feeds))
    np.testing.assert_allclose(_run(m, "all", feeds)[0], _ort(m, feeds)[0], rtol=1e-6)


@pytest.mark.parametrize("level", ["disabled", "basic"])
def test_the_chain_is_not_fused_below_extended(level):
    rewritten = optimize_checking_index(_chain(), level=level)
    assert "MatMulInteger" in op_types(rewritten)


# ------------------------------------------------------------------ fused against unfused and ORT


@pytest.mark.parametrize("weight_type", [np.int8, np.uint8])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("readers", [1, 3])
def test_fused_chain_gives_the_unfused_results_bit_for_bit(weight_type, per_column, readers):
    m = _chain(weight_type=weight_type, per_column=per_column, dql_readers=readers)
    for seed in range(3):
        feeds = _feeds(seed=seed)
        fused = _run(m, "all", feeds)
        _expect_bit_identical(fused, _run(m, "basic", feeds))
        for got, want in zip(fused, _ort(m, feeds)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h2"]),
        helper.make_node("Relu", ["h2"], ["h3"]),
        helper.make_node("MatMul", ["h3", "w2"], ["h4"]),
        helper.make_node("Add", ["h4", "b2"], ["y"]),
    ]
    inits = [
        _const("w1", (rng.standard_normal((64, 256)) * 0.1).astype(np.float32)),
        _const("b1", (rng.standard_normal(256) * 0.1).astype(np.float32)),
        _const("w2", (rng.standard_normal((256, 32)) * 0.1).astype(np.float32)),
        _const("b2", (rng.standard_normal(32) * 0.1).astype(np.float32)),
    ]
    return model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 32])],
        inits,
    )


def _encoder_block(batch: int = 2, seq: int = 16, hidden: int = 128, heads: int = 4, ffn: int = 512) -> onnx.ModelProto:
    """A BERT-style encoder layer (self-attention, residual + LayerNormalization, GELU
    feed-forward, residual + LayerNormalization), scaled down."""
    rng = np.random.default_rng(4)
    d = hidden // heads

    def w(name: str, shape: tuple[int, ...], scale: float = 0.08) -> onnx.TensorProto:
        return _const(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    inits = [w(f"w{p}", (hidden, hidden)) for p in "qkvo"] + [w(f"b{p}", (hidden,), 0.02) for p in "qkvo"]
    inits += [w("w1", (hidden, ffn)), w("b1", (ffn,), 0.02), w("w2", (ffn, hidden)), w("b2", (hidden,), 0.02)]
    inits += [_const("g1", np.ones(hidden, np.float32)), _const("be1", np.zeros(hidden, np.float32))]
    inits += [_const("g2", np.ones(hidden, np.float32)), _const("be2", np.zeros(hidden, np.float32))]
    inits += [
        _const("heads_shape", np.array([batch, seq, heads, d], np.int64)),
        _const("merged_shape", np.array([batch, seq, hidden], np.int64)),
        _const("inv_sqrt_d", np.float32(1.0 / np.sqrt(d)).reshape(())),
        _const("sqrt2", np.float32(np.sqrt(2.0)).reshape(())),
        _const("one", np.float32(1.0).reshape(())),
        _const("half", np.float32(0.5).reshape(())),
    ]
    nodes = []
    for p in "qkv":
        nodes += [
            helper.make_node("MatMul", ["x", f"w{p}"], [f"{p}0"]),
            helper.make_node("Add", [f"{p}0", f"b{p}"], [f"{p}1"]),
            helper.make_node("Reshape", [f"{p}1", "heads_shape"], [f"{p}2"]),
        ]
    nodes += [
        helper.make_node("Transpose", ["q2"], ["q3"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k2"], ["k3"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v2"], ["v3"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q3", "k3"], ["scores0"]),
        helper.make_node("Mul", ["scores0", "inv_sqrt_d"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "v3"], ["ctx0"]),
        helper.make_node("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx1", "merged_shape"], ["ctx"]),
        helper.make_node("MatMul", ["ctx", "wo"], ["o0"]),
        helper.make_node("Add", ["o0", "bo"], ["o1"]),
        helper.make_node("Add", ["o1", "x"], ["r1"]),
        helper.make_node("LayerNormalization", ["r1", "g1", "be1"], ["n1"], axis=-1),
        helper.make_node("MatMul", ["n1", "w1"], ["f0"]),
        helper.make_node("Add", ["f0", "b1"], ["f1"]),
        helper.make_node("Div", ["f1", "sqrt2"], ["g0"]),
        helper.make_node("Erf", ["g0"], ["g1_"]),
        helper.make_node("Add", ["g1_", "one"], ["g2_"]),
        helper.make_node("Mul", ["f1", "g2_"], ["g3"]),
        helper.make_node("Mul", ["g3", "half"], ["gelu"]),
        helper.make_node("MatMul", ["gelu", "w2"], ["f2"]),
        helper.make_node("Add", ["f2", "b2"], ["f3"]),
        helper.make_node("Add", ["f3", "n1"], ["r2"]),
        helper.make_node("LayerNormalization", ["r2", "g2", "be2"], ["y"], axis=-1),
    ]
    return model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, hidden])],
        inits,
    )


def _without_dynamic_fusions(m: onnx.ModelProto, monkeypatch) -> onnx.ModelProto:
    """`m` optimised at "all" with every pass but the two under test: the unfused oracle, whose
    other fusions (Gelu, ...) round exactly as in the fused model."""
    from onnx_light import graph_rewrites

    ours = (qdq_rewrites.fuse_matmul_integer_to_float, qdq_rewrites.fuse_dynamic_quantize_matmul)
    with monkeypatch.context() as patch:
        patch.setattr(graph_rewrites, "EXTENDED_PASSES", [p for p in graph_rewrites.EXTENDED_PASSES if p not in ours])
        return optimize_checking_index(m, level="all")


@pytest.mark.parametrize("name", ["mlp", "encoder"])
@pytest.mark.parametrize("weight_type", [QuantType.QInt8, QuantType.QUInt8])
def test_quantize_dynamic_models_fuse_and_match_unfused_and_ort(tmp_path, monkeypatch, name, weight_type):
    build = {"mlp": _mlp, "encoder": _encoder_block}[name]
    float_path, path = str(tmp_path / f"{name}.onnx"), str(tmp_path / f"{name}_dynamic.onnx")
    onnx.save(build(), float_path)
    quantize_dynamic(float_path, path, weight_type=weight_type, per_channel=name == "encoder")
    quantized = onnx.load(path)
    assert "MatMulInteger" in op_types(quantized)
    rewritten = optimize_checking_index(quantized, level="all")
    ops = op_types(rewritten)
    assert "MatMulInteger" not in ops and "Cast" not in ops, ops
    if name == "mlp":
        assert ops.count("DynamicQuantizeMatMul") == 2, ops
    else:
        # Q, K, V share one quantized input; the attention products have both operands dynamic.
        assert ops.count("MatMulIntegerToFloat") >= 3 and ops.count("DynamicQuantizeMatMul") >= 3, ops
    shape = tuple(d.dim_value for d in quantized.graph.input[0].type.tensor_type.shape.dim)
    unfused = _without_dynamic_fusions(quantized, monkeypatch)
    assert "MatMulInteger" in op_types(unfused)
    fused_session, unfused_session = _session(rewritten, "disabled"), _session(unfused, "disabled")
    for seed in range(3):
        feeds = _feeds(seed=seed, shape=shape)
        fused = fused_session.run(None, feeds)
        _expect_bit_identical(fused, unfused_session.run(None, feeds))
        # ORT fuses the same chain itself; a tie rounded differently may move an activation by
        # one quantization step, which the LayerNormalization of the encoder keeps small.
        np.testing.assert_allclose(fused[0], _ort(path, feeds)[0], rtol=1e-4, atol=2e-3)
