"""The extended level's fusions, each on the subgraph exporters emit: the fused op replaces
it (ai.onnx where the opset allows, ONNX Runtime's com.microsoft ops below for Gelu), the
results stay ONNX Runtime's on the unfused graph, and nothing fuses where the pattern is
not exact (another constant, an intermediate seen outside, a symbolic rank, an old opset)."""

import math
import os
import sys

import numpy as np
import onnx_light
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_light import graph_rewrites

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rewrite_checks import check_rewrite, model, op_types, ort_unoptimized  # noqa: E402

F = TensorProto.FLOAT
RNG = np.random.default_rng(1)


def tensor(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def scalar(name, value):
    return init(name, np.float32(value))


# ------------------------------------------------------------------------- MatMul + Add -> Gemm


def matmul_add(a_shape, bias_shape=(5,), b_fed=False, b_shape=(4, 5), after=()):
    """MatMul(a, b) + bias [-> `after` nodes reading "y", the last writing "out"]."""
    inputs = [tensor("a", list(a_shape) if a_shape is not None else None)]
    inputs += [tensor("b", list(b_shape))] if b_fed else []
    inits = [init("bias", RNG.standard_normal(bias_shape).astype(np.float32))]
    if not b_fed:
        inits.append(init("b", RNG.standard_normal(b_shape).astype(np.float32)))
    return model(
        [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Add", ["bias", "p"], ["y"]), *after],
        inputs,
        [tensor("out" if after else "y", None)],
        inits,
    )


def test_matmul_plus_constant_bias_becomes_gemm():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    # Gemm sums the same products in its own order: float rounding of a 4-term dot product.
    rewritten = check_rewrite(matmul_add((3, 4)), {"a": a}, "extended", ["Gemm"], rtol=1e-5, atol=1e-6)
    assert list(rewritten.graph.node[0].input) == ["a", "b", "bias"]


@pytest.mark.parametrize(
    "a_shape,bias_shape",
    [((2, 3, 4), (5,)), (("batch", 3, 4), (1, 5)), ((2, 3, 4), (1, 1, 5)), ((2, 2, 3, 4), (5,)), ((2, 3, 4), ())],
)
def test_matmul_of_a_higher_rank_a_plus_a_row_bias_becomes_fused_gemm(a_shape, bias_shape):
    """The transformer's projection [batch, seq, hidden] x [hidden, out] + bias [out]: one
    com.microsoft FusedGemm reading A flattened to [batch * seq, hidden] in place, the bias in
    its epilogue (MatMul then Add bit for bit: fused_gemm_test.cc); a symbolic batch too."""
    dims = [2 if isinstance(d, str) else d for d in a_shape]
    a = RNG.standard_normal(dims).astype(np.float32)
    rewritten = check_rewrite(matmul_add(a_shape, bias_shape), {"a": a}, "extended", ["FusedGemm"])
    (node,) = rewritten.graph.node
    assert (node.domain, list(node.input), list(node.output)) == ("com.microsoft", ["a", "b", "bias"], ["y"])
    assert ("com.microsoft", 1) in {(o.domain, o.version) for o in rewritten.opset_import}


@pytest.mark.parametrize("activation", ["Relu", "Sigmoid", "Tanh"])
def test_matmul_add_activation_on_a_3d_a_becomes_one_fused_gemm_with_the_activation(activation):
    m = matmul_add((2, 3, 4), after=[helper.make_node(activation, ["y"], ["out"])])
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    # The epilogue's Sigmoid/Tanh are simd/math.h's (~2e-7 relative), as the separate kernels.
    rewritten = check_rewrite(m, {"a": a}, "extended", ["FusedGemm"], rtol=1e-6, atol=1e-6)
    attributes = {a.name: helper.get_attribute_value(a) for a in rewritten.graph.node[0].attribute}
    assert attributes == {"activation": activation.encode()}
    assert list(rewritten.graph.node[0].output) == ["out"]


@pytest.mark.parametrize(
    "gelu,opset,activation",
    [
        (helper.make_node("Gelu", ["y"], ["out"]), 20, b"Gelu"),
        (helper.make_node("Gelu", ["y"], ["out"], approximate="tanh"), 20, b"FastGelu"),
        (helper.make_node("Gelu", ["y"], ["out"], domain="com.microsoft"), 17, b"Gelu"),
        (helper.make_node("FastGelu", ["y"], ["out"], domain="com.microsoft"), 17, b"FastGelu"),
    ],
)
def test_matmul_add_gelu_becomes_one_fused_gemm_with_gelu_in_its_epilogue(gelu, opset, activation):
    """BERT's feed-forward: MatMul + Add + Gelu (ai.onnx from opset 20, ORT's contrib Gelu
    and FastGelu below): one FusedGemm whose epilogue runs the Gelu kernel's vector code."""
    m = matmul_add((2, 3, 4), after=[gelu])
    m.opset_import[0].version = opset
    if gelu.domain:  # onnx infers nothing through contrib ops: the output declares its shape
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        m.graph.output[0].CopyFrom(tensor("out", [2, 3, 5]))
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    # simd/math.h's Gelu forms, as the separate kernel's: within 3e-6 relative of the exact.
    rewritten = check_rewrite(m, {"a": a}, "all", ["FusedGemm"], rtol=1e-5, atol=1e-6)
    attributes = {a.name: helper.get_attribute_value(a) for a in rewritten.graph.node[0].attribute}
    assert attributes == {"activation": activation}


def test_gelu_with_a_bias_input_stays_after_the_fused_projection():
    m = matmul_add(
        (2, 3, 4),
        after=[helper.make_node("FastGelu", ["y", "gelu_bias"], ["out"], domain="com.microsoft")],
    )
    m.graph.initializer.append(init("gelu_bias", np.ones(5, np.float32)))
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    assert op_types(graph_rewrites.optimize(m, level="all")) == ["FusedGemm", "FastGelu"]


@pytest.mark.parametrize(
    "a_shape,bias_shape,b_fed,b_shape",
    [
        ((3, 4), (3, 5), False, (4, 5)),  # 2-D, the bias broadcasts over rows
        ((3, 4), (5,), True, (4, 5)),  # B not constant
        ((2, 3, 4), (5,), True, (4, 5)),  # B not constant, 3-D A
        ((2, 3, 4), (3, 5), False, (4, 5)),  # the bias varies along the sequence axis
        ((2, 3, 4), (2, 1, 5), False, (4, 5)),  # the bias varies along the batch axis
        ((2, 3, 4), (1, 1, 1, 5), False, (4, 5)),  # the bias enlarges the product's rank
        ((2, 3, 4), (5,), False, (2, 4, 5)),  # B with batch dims
        ((2, 1, 3, 4), (5,), False, (2, 4, 5)),  # A 4-D broadcasting its batch against B's
        (None, (5,), False, (4, 5)),  # A of unknown rank
    ],
)
def test_matmul_add_stays_unless_b_is_a_constant_matrix_and_the_bias_one_row(a_shape, bias_shape, b_fed, b_shape):
    m = matmul_add(a_shape, bias_shape, b_fed, b_shape)
    assert op_types(graph_rewrites.optimize(m, level="extended")) == ["MatMul", "Add"]


def test_matmul_add_is_not_fused_at_the_basic_level():
    assert op_types(graph_rewrites.optimize(matmul_add((3, 4)), level="basic")) == ["MatMul", "Add"]


# ------------------------------------------------------------------------------------- Gelu

X = (RNG.standard_normal((2, 8, 16)) * 3).astype(np.float32)


ROOT2 = math.sqrt(2)


def gelu_erf(order, opset, divisor=ROOT2):
    """0.5 * x * (1 + erf(x / sqrt 2)) in the orders PyTorch and TensorFlow exporters emit."""
    head = [
        helper.make_node("Div", ["x", "root2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["s"]),
    ]
    tails = {
        "x*s*0.5": [helper.make_node("Mul", ["x", "s"], ["m"]), helper.make_node("Mul", ["m", "half"], ["y"])],
        "s*0.5*x": [helper.make_node("Mul", ["half", "s"], ["m"]), helper.make_node("Mul", ["m", "x"], ["y"])],
        "(x*0.5)*s": [helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Mul", ["h", "s"], ["y"])],
    }
    return model(
        head + tails[order],
        [tensor("x", [2, 8, 16])],
        [tensor("y", None)],
        [scalar("root2", divisor), scalar("one", 1), scalar("half", 0.5)],
        opset=opset,
    )


# Our Gelu multiplies by 1/sqrt(2) where the graph divides by sqrt(2), and uses its own erf:
# a few float ulps.
GELU_RTOL, GELU_ATOL = 1e-5, 1e-6


@pytest.mark.parametrize("order", ["x*s*0.5", "s*0.5*x", "(x*0.5)*s"])
def test_erf_gelu_becomes_gelu_from_opset_20(order):
    rewritten = check_rewrite(gelu_erf(order, 20), {"x": X}, "extended", ["Gelu"], GELU_RTOL, GELU_ATOL)
    assert rewritten.graph.node[0].domain == "" and not rewritten.graph.node[0].attribute


def test_erf_gelu_becomes_microsoft_gelu_before_opset_20():
    rewritten = check_rewrite(gelu_erf("x*s*0.5", 17), {"x": X}, "extended", ["Gelu"], GELU_RTOL, GELU_ATOL)
    assert rewritten.graph.node[0].domain == "com.microsoft"
    assert {(o.domain, o.version) for o in rewritten.opset_import} == {("", 17), ("com.microsoft", 1)}


def test_gelu_stays_when_a_constant_differs_or_an_intermediate_is_seen():
    assert op_types(graph_rewrites.optimize(gelu_erf("x*s*0.5", 20, divisor=2.0), level="extended")) == [
        "Div",
        "Erf",
        "Add",
        "Mul",
        "Mul",
    ]
    seen = gelu_erf("x*s*0.5", 20)
    seen.graph.output.append(tensor("e", None))
    check_rewrite(seen, {"x": X}, "extended", ["Div", "Erf", "Add", "Mul", "Mul"])


def gelu_tanh(opset, cube="pow"):
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""
    cubes = {
        "pow": [helper.make_node("Pow", ["x", "three"], ["c"])],
        "mul": [helper.make_node("Mul", ["x", "x"], ["sq"]), helper.make_node("Mul", ["x", "sq"], ["c"])],
    }
    return model(
        cubes[cube]
        + [
            helper.make_node("Mul", ["c", "k"], ["kc"]),
            helper.make_node("Add", ["x", "kc"], ["inner"]),
            helper.make_node("Mul", ["root2pi", "inner"], ["arg"]),
            helper.make_node("Tanh", ["arg"], ["t"]),
            helper.make_node("Add", ["one", "t"], ["s"]),
            helper.make_node("Mul", ["x", "s"], ["m"]),
            helper.make_node("Mul", ["m", "half"], ["y"]),
        ],
        [tensor("x", [2, 8, 16])],
        [tensor("y", None)],
        [
            scalar("three", 3),
            scalar("k", 0.044715),
            scalar("root2pi", math.sqrt(2 / math.pi)),
            scalar("one", 1),
            scalar("half", 0.5),
        ],
        opset=opset,
    )


@pytest.mark.parametrize("cube", ["pow", "mul"])
def test_tanh_gelu_becomes_gelu_tanh_from_opset_20(cube):
    rewritten = check_rewrite(gelu_tanh(20, cube), {"x": X}, "extended", ["Gelu"], GELU_RTOL, GELU_ATOL)
    assert helper.get_attribute_value(rewritten.graph.node[0].attribute[0]) == b"tanh"


def test_tanh_gelu_becomes_microsoft_fast_gelu_before_opset_20():
    rewritten = check_rewrite(gelu_tanh(13), {"x": X}, "extended", ["FastGelu"], GELU_RTOL, GELU_ATOL)
    assert rewritten.graph.node[0].domain == "com.microsoft"


# ------------------------------------------------------------------------ LayerNormalization


def layer_norm(opset, square="pow", beta=True, axes=(-1,)):
    """What PyTorch exports for nn.LayerNorm below opset 17 (and HF BERT's own LayerNorm)."""
    mean_args = {"axes": list(axes)} if opset < 18 else {}
    extra = [] if opset < 18 else ["axes"]
    sq = (
        helper.make_node("Pow", ["d", "two"], ["sq"])
        if square == "pow"
        else helper.make_node("Mul", ["d", "d"], ["sq"])
    )
    nodes = [
        helper.make_node("ReduceMean", ["x", *extra], ["mean"], **mean_args),
        helper.make_node("Sub", ["x", "mean"], ["d"]),
        sq,
        helper.make_node("ReduceMean", ["sq", *extra], ["var"], **mean_args),
        helper.make_node("Add", ["var", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["d", "sd"], ["n"]),
        helper.make_node("Mul", ["n", "gamma"], ["g" if beta else "y"]),
    ] + ([helper.make_node("Add", ["g", "beta"], ["y"])] if beta else [])
    inits = [
        scalar("two", 2),
        scalar("eps", 1e-5),
        init("gamma", RNG.uniform(0.5, 1.5, 16).astype(np.float32)),
        init("beta", RNG.standard_normal(16).astype(np.float32)),
    ] + ([init("axes", np.array(axes, np.int64))] if opset >= 18 else [])
    return model(nodes, [tensor("x", [2, 8, 16])], [tensor("y", None)], inits, opset=opset)


# One fused normalisation against nine float ops: float rounding of a 16-element mean and
# variance, relative to values of order 1.
NORM_RTOL, NORM_ATOL = 1e-5, 1e-5


@pytest.mark.parametrize(
    "opset,square,beta", [(17, "pow", True), (18, "pow", True), (17, "mul", True), (17, "pow", False)]
)
def test_decomposed_layer_norm_becomes_layer_normalization(opset, square, beta):
    rewritten = check_rewrite(
        layer_norm(opset, square, beta), {"x": X}, "extended", ["LayerNormalization"], NORM_RTOL, NORM_ATOL
    )
    attrs = {a.name: helper.get_attribute_value(a) for a in rewritten.graph.node[0].attribute}
    assert attrs["axis"] == -1 and attrs["epsilon"] == pytest.approx(1e-5)
    assert len(rewritten.graph.node[0].input) == (3 if beta else 2)


def test_layer_norm_over_two_trailing_axes_fuses_with_axis_minus_two():
    m = layer_norm(17, axes=(-2, -1))
    for t in m.graph.initializer:
        if t.name in ("gamma", "beta"):
            t.CopyFrom(init(t.name, RNG.uniform(0.5, 1.5, (8, 16)).astype(np.float32)))
    rewritten = check_rewrite(m, {"x": X}, "extended", ["LayerNormalization"], NORM_RTOL, NORM_ATOL)
    assert helper.get_attribute_value(rewritten.graph.node[0].attribute[0]) == -2


def test_layer_norm_stays_decomposed_before_opset_17_or_over_leading_axes():
    assert "LayerNormalization" not in op_types(graph_rewrites.optimize(layer_norm(16), level="extended"))
    assert "LayerNormalization" not in op_types(graph_rewrites.optimize(layer_norm(17, axes=(1,)), level="extended"))


# -------------------------------------------------------------------------- RMSNormalization


def rms_norm(opset, form="div"):
    """x * gamma / sqrt(mean(x^2) + eps), as LLaMA-style models export it."""
    tail = {
        "div": [helper.make_node("Div", ["x", "sd"], ["n"])],
        "reciprocal": [helper.make_node("Reciprocal", ["sd"], ["r"]), helper.make_node("Mul", ["x", "r"], ["n"])],
        "one_over": [helper.make_node("Div", ["one", "sd"], ["r"]), helper.make_node("Mul", ["r", "x"], ["n"])],
    }
    return model(
        [
            helper.make_node("Pow", ["x", "two"], ["sq"]),
            helper.make_node("ReduceMean", ["sq", "axes"], ["ms"]),
            helper.make_node("Add", ["ms", "eps"], ["mse"]),
            helper.make_node("Sqrt", ["mse"], ["sd"]),
            *tail[form],
            helper.make_node("Mul", ["gamma", "n"], ["y"]),
        ],
        [tensor("x", [2, 8, 16])],
        [tensor("y", None)],
        [
            scalar("two", 2),
            init("axes", np.array([-1], np.int64)),
            scalar("eps", 1e-6),
            scalar("one", 1),
            init("gamma", RNG.uniform(0.5, 1.5, 16).astype(np.float32)),
        ],
        opset=opset,
    )


@pytest.mark.parametrize("form", ["div", "reciprocal", "one_over"])
def test_decomposed_rms_norm_becomes_rms_normalization_from_opset_23(form):
    rewritten = check_rewrite(rms_norm(23, form), {"x": X}, "extended", ["RMSNormalization"], NORM_RTOL, NORM_ATOL)
    assert list(rewritten.graph.node[0].input)[0] == "x"


def test_rms_norm_stays_decomposed_before_opset_23():
    assert op_types(graph_rewrites.optimize(rms_norm(22), level="extended")) == [
        "Pow",
        "ReduceMean",
        "Add",
        "Sqrt",
        "Div",
        "Mul",
    ]


# ------------------------------------------- the fusion and QDQ passes run at extended and all


def conv_relu_and_qdq_conv_model():
    """A float Conv -> Relu (fuses into com.microsoft FusedConv) beside a QDQ group
    DequantizeLinear -> Conv -> QuantizeLinear with constant quantization parameters
    (becomes QLinearConv)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w")
    wq = numpy_helper.from_array(rng.integers(-20, 20, size=(4, 3, 3, 3)).astype(np.int8), "wq")
    scalars = [
        numpy_helper.from_array(np.float32(0.05), "x_scale"),
        numpy_helper.from_array(np.uint8(128), "x_zp"),
        numpy_helper.from_array(np.float32(0.01), "w_scale"),
        numpy_helper.from_array(np.int8(0), "w_zp"),
        numpy_helper.from_array(np.float32(0.1), "y_scale"),
        numpy_helper.from_array(np.uint8(128), "y_zp"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
        helper.make_node("DequantizeLinear", ["q", "x_scale", "x_zp"], ["qf"]),
        helper.make_node("DequantizeLinear", ["wq", "w_scale", "w_zp"], ["wf"]),
        helper.make_node("Conv", ["qf", "wf"], ["qc"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["qc", "y_scale", "y_zp"], ["qy"]),
    ]
    return model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
            helper.make_tensor_value_info("q", TensorProto.UINT8, [1, 3, 8, 8]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8]),
            helper.make_tensor_value_info("qy", TensorProto.UINT8, [1, 4, 8, 8]),
        ],
        [w, wq, *scalars],
        opset=21,
    )


@pytest.mark.parametrize(
    "level,expected",
    [
        ("basic", ["Conv", "Relu", "DequantizeLinear", "DequantizeLinear", "Conv", "QuantizeLinear"]),
        ("extended", ["FusedConv", "QLinearConv"]),
        ("all", ["FusedConv", "QLinearConv"]),
    ],
)
def test_fusions_and_qdq_groups_are_rewritten_at_extended_and_all_only(level, expected):
    m = conv_relu_and_qdq_conv_model()
    rewritten = graph_rewrites.optimize(m, level=level)
    assert sorted(op_types(rewritten)) == sorted(expected)
    rng = np.random.default_rng(1)
    feeds = {
        "x": rng.normal(size=(1, 3, 8, 8)).astype(np.float32),
        "q": rng.integers(0, 256, size=(1, 3, 8, 8)).astype(np.uint8),
    }
    y, qy = onnx_light.InferenceSession(m, graph_optimization_level=level).run(None, feeds)
    want_y, want_qy = ort_unoptimized(m, feeds)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)  # float32 Conv, another summation order
    # The float reference rounds the float Conv's result; the integer kernel rounds the exact
    # integer sum: at most one quantization step apart where the float sum lands on a tie.
    assert np.max(np.abs(qy.astype(np.int32) - want_qy.astype(np.int32))) <= 1


# --------------------------------------------------------------------------------- attention

HEADS, SEQ, HIDDEN = 2, 8, 16
HEAD = HIDDEN // HEADS


def attention_block(opset, key_form="transpose", scaling="div", mask="input", batch=1, extra=()):
    """A BERT-like self-attention block as PyTorch exports it: Q, K, V projections, the head
    split (Reshape + Transpose), MatMul(Q, K^T) scaled, + mask, Softmax, MatMul(., V), the
    head merge and the output projection. key_form "transpose": K^T = Transpose(K heads,
    [0, 1, 3, 2]); "reshape": K^T = Reshape(Transpose(3-D), [B, H, D, L]) (nn.MultiheadAttention
    under dynamo). scaling "div": scores / sqrt(D); "both": Q and K^T each * D**-0.25."""
    rng = np.random.default_rng(3)
    inits = [init(f"w{p}", rng.standard_normal((HIDDEN, HIDDEN)).astype(np.float32) * 0.3) for p in "qkvo"]
    inits += [
        init("heads_shape", np.array([batch, SEQ, HEADS, HEAD], np.int64)),
        init("merged_shape", np.array([batch, SEQ, HIDDEN], np.int64)),
        init("k3_shape", np.array([SEQ, batch * HEADS, HEAD], np.int64)),
        init("kt_shape", np.array([batch, HEADS, HEAD, SEQ], np.int64)),
        scalar("root_d", math.sqrt(HEAD)),
        scalar("quarter", HEAD**-0.25),
    ]
    nodes = []
    for p in "qv":
        nodes += [
            helper.make_node("MatMul", ["x", f"w{p}"], [f"{p}_proj"]),
            helper.make_node("Reshape", [f"{p}_proj", "heads_shape"], [f"{p}_split"]),
            helper.make_node("Transpose", [f"{p}_split"], [f"{p}_heads"], perm=[0, 2, 1, 3]),
        ]
    nodes.append(helper.make_node("MatMul", ["x", "wk"], ["k_proj"]))
    if key_form == "transpose":
        nodes += [
            helper.make_node("Reshape", ["k_proj", "heads_shape"], ["k_split"]),
            helper.make_node("Transpose", ["k_split"], ["k_heads"], perm=[0, 2, 1, 3]),
            helper.make_node("Transpose", ["k_heads"], ["kt"], perm=[0, 1, 3, 2]),
        ]
    else:  # batch 1: [S, 1, E] -> [S, H, D] -> [H, D, S] -> [1, H, D, S]
        nodes += [
            helper.make_node("Reshape", ["k_proj", "k3_shape"], ["k3"]),
            helper.make_node("Transpose", ["k3"], ["k3t"], perm=[1, 2, 0]),
            helper.make_node("Reshape", ["k3t", "kt_shape"], ["kt"]),
        ]
    if scaling == "div":
        nodes += [
            helper.make_node("MatMul", ["q_heads", "kt"], ["qk"]),
            helper.make_node("Div", ["qk", "root_d"], ["scores"]),
        ]
    else:
        nodes += [
            helper.make_node("Mul", ["q_heads", "quarter"], ["q_scaled"]),
            helper.make_node("Mul", ["kt", "quarter"], ["kt_scaled"]),
            helper.make_node("MatMul", ["q_scaled", "kt_scaled"], ["scores"]),
        ]
    inputs = [tensor("x", [batch, SEQ, HIDDEN])]
    if mask is None:
        nodes.append(helper.make_node("Softmax", ["scores"], ["probs"], axis=-1))
    else:
        nodes += [
            helper.make_node("Add", ["scores", "mask"], ["masked"]),
            helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        ]
        inputs.append(tensor("mask", [batch, 1, 1, SEQ]))
    nodes += [
        helper.make_node("MatMul", ["probs", "v_heads"], ["context"]),
        helper.make_node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["context_t", "merged_shape"], ["merged"]),
        helper.make_node("MatMul", ["merged", "wo"], ["y"]),
        *extra,
    ]
    return model(nodes, inputs, [tensor("y", [batch, SEQ, HIDDEN])], inits, opset=opset)


def attention_feeds(batch=1):
    rng = np.random.default_rng(4)
    mask = np.zeros((batch, 1, 1, SEQ), np.float32)
    mask[..., -2:] = -10000.0  # the last two keys padded, as a BERT mask writes it
    return {"x": rng.standard_normal((batch, SEQ, HIDDEN)).astype(np.float32), "mask": mask}


def reference_outputs(m, feeds):
    from onnx.reference import ReferenceEvaluator

    wanted = {i.name for i in m.graph.input}
    return ReferenceEvaluator(m).run(None, {k: v for k, v in feeds.items() if k in wanted})


@pytest.mark.parametrize("opset", [23, 20])
@pytest.mark.parametrize("key_form", ["transpose", "reshape"])
@pytest.mark.parametrize("scaling,mask", [("div", "input"), ("both", None)])
def test_scaled_dot_product_attention_becomes_one_attention_node(opset, key_form, scaling, mask):
    m = attention_block(opset, key_form, scaling, mask)
    rewritten = graph_rewrites.optimize(m, level="extended")
    assert op_types(rewritten).count("Attention") == 1
    assert not {"Softmax", "Div"} & set(op_types(rewritten))
    assert op_types(rewritten).count("MatMul") == 4  # the projections only
    assert {(o.domain, o.version) for o in rewritten.opset_import} == {("", 23)}  # raised from 20
    feeds = attention_feeds()
    if mask is None:
        del feeds["mask"]
    (ours,) = onnx_light.InferenceSession(m, graph_optimization_level="extended").run(None, feeds)
    (want,) = reference_outputs(m, feeds)
    # One float32 softmax(QK^T * scale) V instead of the scaled matmul chain: the scale is
    # applied once and the sums run in another order, a few ulps on values of order 1.
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)


def test_attention_is_not_fused_for_symbolic_shapes_or_where_raising_the_opset_would_change_a_node():
    symbolic = attention_block(23)
    symbolic.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    heads_shape = next(t for t in symbolic.graph.initializer if t.name == "heads_shape")
    heads_shape.CopyFrom(init("heads_shape", np.array([0, SEQ, HEADS, HEAD], np.int64)))  # 0: the batch, symbolic
    assert "Attention" not in op_types(graph_rewrites.optimize(symbolic, level="extended"))

    group_norm = [
        helper.make_node("Reshape", ["y", "gn_shape"], ["y4"]),
        helper.make_node("GroupNormalization", ["y4", "gn_scale", "gn_bias"], ["gn"], num_groups=2),
    ]
    m = attention_block(20, extra=group_norm)
    m.graph.initializer.extend(
        [
            init("gn_shape", np.array([1, 4, SEQ, 4], np.int64)),
            init("gn_scale", np.ones(2, np.float32)),
            init("gn_bias", np.zeros(2, np.float32)),
        ]
    )
    m.graph.output.append(tensor("gn", [1, 4, SEQ, 4]))
    rewritten = graph_rewrites.optimize(m, level="extended")
    assert "Attention" not in op_types(rewritten) and "Softmax" in op_types(rewritten)
    assert {(o.domain, o.version) for o in rewritten.opset_import} == {("", 20)}


def test_attention_stays_when_the_probabilities_are_seen_or_the_mask_has_fewer_keys():
    seen = attention_block(23)
    seen.graph.output.append(tensor("probs", None))
    assert "Attention" not in op_types(graph_rewrites.optimize(seen, level="extended"))
    short_mask = attention_block(23)
    short_mask.graph.input[1].type.tensor_type.shape.dim[3].dim_value = 1  # broadcast over keys
    assert "Attention" not in op_types(graph_rewrites.optimize(short_mask, level="extended"))
