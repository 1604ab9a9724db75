"""Fusion rewrites into FusedConv/FusedGemm: each pass fires on its pattern, leaves the graph
alone where fusing would change what can be observed (a shared or output intermediate, a
broadcasting Add, a fed Clip bound, a non-float Conv), and the fused model run by onnx-light
gives the unfused model's outputs as ONNX Runtime computes them with every ORT optimisation
off (ORT_DISABLE_ALL). Blocks: a MobileNetV3 block (Conv-BN-HardSwish, depthwise, a
squeeze-and-excitation block, projection + residual) and ResNet basic blocks (Conv-BN-Relu,
Conv-BN + residual Add + Relu, with and without a strided 1x1 shortcut).

Tolerance: rtol 1e-4, atol 1e-5. The oracle sums each output's products (up to 8 x 9 x 8
terms of O(1) values here) in its own order; float32 reassociation of such sums moves the
result by a few ulp of the largest partial sum (~1e-6 relative), and the vectorised
Sigmoid/Tanh are within 2e-7 relative of the exact values. 1e-4 leaves a margin of 10x
and still catches any wrong activation parameter or a missing residual (errors >= 1e-2).
"""

import numpy as np
import onnx
import onnx_light
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_light import fusion_rewrites, graph_rewrites

RTOL, ATOL = 1e-4, 1e-5
OPSET = 17
RNG = np.random.default_rng(7)

# activation op -> (attributes, the extra Clip inputs, FusedConv activation_params expected)
ACTIVATIONS = {
    "Relu": ({}, [], []),
    "Clip": ({}, [-0.5, 0.75], [-0.5, 0.75]),
    "LeakyRelu": ({"alpha": 0.15}, [], [0.15]),
    "Sigmoid": ({}, [], []),
    "Tanh": ({}, [], []),
    "HardSigmoid": ({"alpha": 0.3, "beta": 0.4}, [], [0.3, 0.4]),
    "HardSwish": ({}, [], []),
    "Swish": ({"alpha": 0.7}, [], [0.7]),  # ONNX 24
}


def _init(name, shape, scale=0.5, dtype=np.float32):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(dtype), name)


def _model(nodes, inits, x_shape, outputs=("y",), extra_inputs=(), elem=TensorProto.FLOAT, opset=OPSET):
    inputs = [helper.make_tensor_value_info("x", elem, x_shape)] + list(extra_inputs)
    outs = [helper.make_tensor_value_info(o, elem, None) for o in outputs]
    graph = helper.make_graph(nodes, "g", inputs, outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _activation_node(op, x, y, prefix="act"):
    attrs, bounds, _ = ACTIVATIONS[op]
    inits, inputs = [], [x]
    for i, b in enumerate(bounds):
        name = f"{prefix}_bound{i}"
        inits.append(numpy_helper.from_array(np.array(b, np.float32), name))
        inputs.append(name)
    return helper.make_node(op, inputs, [y], **attrs), inits


def _fuse(model, bn_folding=False):
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    if bn_folding:
        copy = graph_rewrites.fold_batch_norm_into_conv(copy)
    for rewrite in fusion_rewrites.PASSES:
        copy = rewrite(copy, None)
    return copy


def _ort(model, feeds):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _check_same_results(original, fused, feeds):
    want = _ort(original, feeds)
    got = onnx_light.InferenceSession(fused, graph_optimizations=False).run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _x(shape):
    return {"x": RNG.standard_normal(shape).astype(np.float32)}


@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
def test_conv_then_activation_becomes_one_fused_conv(op):
    act, bound_inits = _activation_node(op, "c", "y")
    model = _model(
        [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]), act],
        [_init("W", (8, 4, 3, 3)), _init("B", (8,))] + bound_inits,
        [1, 4, 9, 9],
        opset=24 if op == "Swish" else OPSET,
    )
    fused = _fuse(model)
    (node,) = fused.graph.node
    assert (node.op_type, node.domain) == ("FusedConv", "com.microsoft")
    assert list(node.input) == ["x", "W", "B"] and list(node.output) == ["y"]
    assert _attr(node, "activation").decode() == op
    np.testing.assert_allclose(_attr(node, "activation_params", []), ACTIVATIONS[op][2], rtol=1e-7)
    assert _attr(node, "pads") == [1, 1, 1, 1]
    assert any(o.domain == "com.microsoft" for o in fused.opset_import)
    _check_same_results(model, fused, _x((1, 4, 9, 9)))


@pytest.mark.parametrize("op", sorted(set(ACTIVATIONS) - {"Clip"}))
def test_gemm_then_activation_becomes_one_fused_gemm(op):
    act, _ = _activation_node(op, "g", "y")
    model = _model(
        [helper.make_node("Gemm", ["x", "W", "C"], ["g"], transB=1, alpha=0.75, beta=1.5), act],
        [_init("W", (24, 40)), _init("C", (24,))],
        [5, 40],
        opset=24 if op == "Swish" else OPSET,
    )
    fused = _fuse(model)
    (node,) = fused.graph.node
    assert (node.op_type, node.domain) == ("FusedGemm", "com.microsoft")
    assert _attr(node, "activation").decode() == op and _attr(node, "transB") == 1
    expected = ACTIVATIONS[op][2]
    got = [_attr(node, n) for n in ("activation_alpha", "activation_beta")[: len(expected)]]
    np.testing.assert_allclose(got, expected, rtol=1e-7)
    _check_same_results(model, fused, _x((5, 40)))


def test_gemm_then_clip_is_left_alone():
    act, inits = _activation_node("Clip", "g", "y")
    model = _model([helper.make_node("Gemm", ["x", "W"], ["g"]), act], [_init("W", (6, 3))] + inits, [2, 6])
    assert [n.op_type for n in _fuse(model).graph.node] == ["Gemm", "Clip"]


@pytest.mark.parametrize("with_relu", [True, False])
def test_conv_add_residual_becomes_fused_conv_with_z(with_relu):
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["r", "c"], ["s" if with_relu else "y"]),  # the conv output on either side
    ]
    if with_relu:
        nodes.append(helper.make_node("Relu", ["s"], ["y"]))
    residual = helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 8, 9, 9])
    model = _model(nodes, [_init("W", (8, 4, 3, 3)), _init("B", (8,))], [1, 4, 9, 9], extra_inputs=[residual])
    fused = _fuse(model)
    (node,) = fused.graph.node
    assert node.op_type == "FusedConv" and list(node.input) == ["x", "W", "B", "r"] and list(node.output) == ["y"]
    assert _attr(node, "activation", b"").decode() == ("Relu" if with_relu else "")
    feeds = _x((1, 4, 9, 9)) | {"r": RNG.standard_normal((1, 8, 9, 9)).astype(np.float32)}
    _check_same_results(model, fused, feeds)


def test_nothing_fuses_where_the_intermediate_is_seen_or_the_add_broadcasts():
    conv = helper.make_node("Conv", ["x", "W"], ["c"])
    inits = [_init("W", (8, 4, 1, 1))]
    # The conv output is a graph output.
    seen = _model([conv, helper.make_node("Relu", ["c"], ["y"])], inits, [1, 4, 5, 5], outputs=("y", "c"))
    # The conv output has a second reader.
    shared = _model(
        [conv, helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Add", ["r", "c"], ["y"])], inits, [1, 4, 5, 5]
    )
    # Add broadcasts a per-channel tensor: not a residual of the output's shape.
    broadcast = _model(
        [conv, helper.make_node("Add", ["c", "per_channel"], ["y"])],
        inits + [_init("per_channel", (8, 1, 1))],
        [1, 4, 5, 5],
    )
    # Clip's bound is a feed, not a constant.
    fed_bound = _model(
        [conv, helper.make_node("Clip", ["c", "lo"], ["y"])],
        inits,
        [1, 4, 5, 5],
        extra_inputs=[helper.make_tensor_value_info("lo", TensorProto.FLOAT, [])],
    )
    for model, ops in (
        (seen, ["Conv", "Relu"]),
        (shared, ["Conv", "Relu", "Add"]),
        (broadcast, ["Conv", "Add"]),
        (fed_bound, ["Conv", "Clip"]),
    ):
        assert [n.op_type for n in _fuse(model).graph.node] == ops


def test_a_double_conv_is_left_alone():
    model = _model(
        [helper.make_node("Conv", ["x", "W"], ["c"]), helper.make_node("Relu", ["c"], ["y"])],
        [_init("W", (8, 4, 1, 1), dtype=np.float64)],
        [1, 4, 5, 5],
        elem=TensorProto.DOUBLE,
    )
    assert [n.op_type for n in _fuse(model).graph.node] == ["Conv", "Relu"]


def _conv_bn(prefix, x, y, in_ch, out_ch, kernel, stride=1, group=1):
    """Conv (no bias) -> BatchNormalization, as exporters write a conv layer."""
    pad = kernel // 2
    inits = [
        _init(f"{prefix}_w", (out_ch, in_ch // group, kernel, kernel)),
        numpy_helper.from_array(RNG.uniform(0.5, 1.5, out_ch).astype(np.float32), f"{prefix}_scale"),
        _init(f"{prefix}_shift", (out_ch,), 0.1),
        _init(f"{prefix}_mean", (out_ch,), 0.1),
        numpy_helper.from_array(RNG.uniform(0.5, 2.0, out_ch).astype(np.float32), f"{prefix}_var"),
    ]
    nodes = [
        helper.make_node(
            "Conv",
            [x, f"{prefix}_w"],
            [f"{prefix}_c"],
            pads=[pad] * 4,
            strides=[stride, stride],
            group=group,
        ),
        helper.make_node(
            "BatchNormalization",
            [f"{prefix}_c"] + [f"{prefix}_{p}" for p in ("scale", "shift", "mean", "var")],
            [y],
        ),
    ]
    return nodes, inits


def _op_summary(model):
    return [(n.op_type, _attr(n, "activation", b"").decode(), len(n.input) > 3) for n in model.graph.node]


def test_mobilenet_v3_block():
    # Expand 1x1 + HardSwish, depthwise 3x3 + HardSwish, squeeze-and-excitation (pool, 1x1 +
    # Relu, 1x1 + HardSigmoid, Mul), projection 1x1 + residual Add.
    nodes, inits = [], []
    for part in (
        _conv_bn("expand", "x", "e", 8, 16, 1),
        _conv_bn("dw", "e_act", "d", 16, 16, 3, group=16),
        _conv_bn("project", "se_out", "p", 16, 8, 1),
    ):
        nodes += part[0]
        inits += part[1]
    se_inits = [
        _init("se1_w", (4, 16, 1, 1)),
        _init("se1_b", (4,)),
        _init("se2_w", (16, 4, 1, 1)),
        _init("se2_b", (16,)),
    ]
    nodes[2:2] = [helper.make_node("HardSwish", ["e"], ["e_act"])]
    nodes[5:5] = [
        helper.make_node("HardSwish", ["d"], ["d_act"]),
        helper.make_node("GlobalAveragePool", ["d_act"], ["pooled"]),
        helper.make_node("Conv", ["pooled", "se1_w", "se1_b"], ["se1"]),
        helper.make_node("Relu", ["se1"], ["se1_act"]),
        helper.make_node("Conv", ["se1_act", "se2_w", "se2_b"], ["se2"]),
        helper.make_node("HardSigmoid", ["se2"], ["gate"], alpha=1.0 / 6, beta=0.5),
        helper.make_node("Mul", ["d_act", "gate"], ["se_out"]),
    ]
    nodes.append(helper.make_node("Add", ["x", "p"], ["y"]))
    model = _model(nodes, inits + se_inits, [1, 8, 12, 12])
    fused = _fuse(model, bn_folding=True)
    assert _op_summary(fused) == [
        ("FusedConv", "HardSwish", False),
        ("FusedConv", "HardSwish", False),
        ("GlobalAveragePool", "", False),
        ("FusedConv", "Relu", False),
        ("FusedConv", "HardSigmoid", False),
        ("Mul", "", False),
        ("FusedConv", "", True),  # projection with the block input as Z
    ]
    _check_same_results(model, fused, _x((1, 8, 12, 12)))


@pytest.mark.parametrize("downsample", [False, True])
def test_resnet_basic_block(downsample):
    out_ch, stride = (16, 2) if downsample else (8, 1)
    nodes, inits = [], []
    for part in (
        _conv_bn("conv1", "x", "b1", 8, out_ch, 3, stride=stride),
        _conv_bn("conv2", "r1", "b2", out_ch, out_ch, 3),
    ):
        nodes += part[0]
        inits += part[1]
    nodes[2:2] = [helper.make_node("Relu", ["b1"], ["r1"])]
    shortcut = "x"
    if downsample:
        short_nodes, short_inits = _conv_bn("short", "x", "s", 8, out_ch, 1, stride=stride)
        nodes += short_nodes
        inits += short_inits
        shortcut = "s"
    nodes += [helper.make_node("Add", ["b2", shortcut], ["sum"]), helper.make_node("Relu", ["sum"], ["y"])]
    model = _model(nodes, inits, [1, 8, 10, 10])
    fused = _fuse(model, bn_folding=True)
    summary = _op_summary(fused)
    assert summary[0] == ("FusedConv", "Relu", False)
    assert ("FusedConv", "Relu", True) in summary  # conv2 + residual + Relu
    assert len(summary) == (3 if downsample else 2)  # the shortcut conv stays a plain Conv (its output is Z)
    assert all(op != "Add" and op != "Relu" for op, _, _ in summary)
    _check_same_results(model, fused, _x((1, 8, 10, 10)))


def test_a_residual_with_a_symbolic_batch_fuses_and_an_intermediate_a_subgraph_reads_does_not():
    # Batch "N" on both Add inputs: the same symbol is the same size.
    residual = helper.make_tensor_value_info("r", TensorProto.FLOAT, ["N", 8, 5, 5])
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"]), helper.make_node("Add", ["c", "r"], ["y"])]
    model = _model(nodes, [_init("W", (8, 4, 1, 1))], ["N", 4, 5, 5], extra_inputs=[residual])
    fused = _fuse(model)
    assert [(n.op_type, list(n.input)) for n in fused.graph.node] == [("FusedConv", ["x", "W", "", "r"])]
    feeds = _x((2, 4, 5, 5)) | {"r": RNG.standard_normal((2, 8, 5, 5)).astype(np.float32)}
    _check_same_results(model, fused, feeds)

    # An If branch reads the conv output from the outer scope: it is not the Relu's alone.
    branch_out = helper.make_tensor_value_info("b", TensorProto.FLOAT, None)
    branch = helper.make_graph([helper.make_node("Identity", ["c"], ["b"])], "branch", [], [branch_out])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["c"]),
        helper.make_node("Relu", ["c"], ["y"]),
        helper.make_node("If", ["cond"], ["z"], then_branch=branch, else_branch=branch),
    ]
    model = _model(nodes, [_init("W", (8, 4, 1, 1))], [1, 4, 5, 5], outputs=("y", "z"), extra_inputs=[cond])
    assert [n.op_type for n in _fuse(model).graph.node] == ["Conv", "Relu", "If"]


@pytest.mark.parametrize("producer", ["Conv", "Gemm"])
def test_sigmoid_times_input_becomes_swish(producer):
    # SiLU as exporters write it: c * Sigmoid(c), c read by both.
    if producer == "Conv":
        first, w, shape = helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]), (8, 4, 3, 3), [1, 4, 7, 7]
    else:
        first, w, shape = helper.make_node("Gemm", ["x", "W"], ["c"]), (6, 10), [3, 6]
    nodes = [first, helper.make_node("Sigmoid", ["c"], ["s"]), helper.make_node("Mul", ["s", "c"], ["y"])]
    model = _model(nodes, [_init("W", w)], shape)
    fused = _fuse(model)
    (node,) = fused.graph.node
    assert node.op_type == f"Fused{producer}" and list(node.output) == ["y"]
    assert _attr(node, "activation").decode() == "Swish"
    assert _attr(node, "activation_params" if producer == "Conv" else "activation_alpha") in ([1.0], 1.0)
    _check_same_results(model, fused, _x(shape))
    # The sigmoid read elsewhere too (a graph output): no fusion.
    seen = _model(nodes, [_init("W", w)], shape, outputs=("y", "s"))
    assert [n.op_type for n in _fuse(seen).graph.node] == [producer, "Sigmoid", "Mul"]
