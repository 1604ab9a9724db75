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
        ("SqueezeExcitation", "Relu", True),  # pool, 1x1 + Relu, 1x1 + HardSigmoid, Mul
        ("FusedConv", "", True),  # projection with the block input as Z
    ]
    se = fused.graph.node[2]
    assert (se.domain, list(se.input), list(se.output)) == (
        "ai.onnx_light",
        ["d_act", "se1_w", "se1_b", "se2_w", "se2_b"],
        ["se_out"],
    )
    assert _attr(se, "gate_activation").decode() == "HardSigmoid"
    np.testing.assert_allclose(_attr(se, "gate_activation_params"), [1.0 / 6, 0.5], rtol=1e-7)
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


# Squeeze-and-excitation blocks as exporters write them: the squeeze (ReduceMean with axes
# as an attribute before opset 18, as an input since; or GlobalAveragePool), 1x1 conv + the
# inner activation (MobileNetV3: Relu; EfficientNet: SiLU as Sigmoid and Mul; or none),
# 1x1 conv + the gate (HardSigmoid or Sigmoid), Mul of the block input by the gate.
SQUEEZES = ("ReduceMean-attribute", "ReduceMean-input", "GlobalAveragePool")


def _se_block(squeeze, inner, gate, x_shape=(2, 12, 5, 7), reduced=3, bias=True):
    channels = x_shape[1]
    opset = 18 if squeeze == "ReduceMean-input" else OPSET
    axes = list(range(2, len(x_shape)))
    inits = [_init("w1", (reduced, channels) + (1,) * len(axes)), _init("w2", (channels, reduced) + (1,) * len(axes))]
    if bias:
        inits += [_init("b1", (reduced,)), _init("b2", (channels,))]
    if squeeze == "GlobalAveragePool":
        nodes = [helper.make_node("GlobalAveragePool", ["x"], ["s"])]
    elif squeeze == "ReduceMean-attribute":
        nodes = [helper.make_node("ReduceMean", ["x"], ["s"], axes=axes, keepdims=1)]
    else:
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["s"])]
    nodes.append(helper.make_node("Conv", ["s", "w1"] + (["b1"] if bias else []), ["h" if inner == "none" else "h0"]))
    if inner == "Relu":
        nodes.append(helper.make_node("Relu", ["h0"], ["h"]))
    elif inner == "SiLU":
        nodes += [helper.make_node("Sigmoid", ["h0"], ["h0_sig"]), helper.make_node("Mul", ["h0", "h0_sig"], ["h"])]
    nodes.append(helper.make_node("Conv", ["h", "w2"] + (["b2"] if bias else []), ["g0"]))
    if gate == "HardSigmoid":
        nodes.append(helper.make_node("HardSigmoid", ["g0"], ["g"], alpha=1.0 / 6, beta=0.5))
    else:
        nodes.append(helper.make_node("Sigmoid", ["g0"], ["g"]))
    nodes.append(helper.make_node("Mul", ["g", "x"], ["y"]))
    return _model(nodes, inits, list(x_shape), opset=opset)


def _reference(model, feeds):
    from onnx.reference import ReferenceEvaluator  # noqa: PLC0415 (the oracle, only here)

    return ReferenceEvaluator(model).run(None, feeds)


@pytest.mark.parametrize("squeeze", SQUEEZES)
@pytest.mark.parametrize(("inner", "gate"), [("Relu", "HardSigmoid"), ("SiLU", "Sigmoid"), ("none", "Sigmoid")])
def test_squeeze_excitation_block_becomes_one_node(squeeze, inner, gate):
    model = _se_block(squeeze, inner, gate)
    fused = _fuse(model)
    (node,) = fused.graph.node
    assert (node.op_type, node.domain) == ("SqueezeExcitation", "ai.onnx_light")
    assert list(node.input) == ["x", "w1", "b1", "w2", "b2"] and list(node.output) == ["y"]
    expected_inner = {"Relu": "Relu", "SiLU": "Swish", "none": None}[inner]
    assert (_attr(node, "activation", b"") or b"").decode() == (expected_inner or "")
    assert _attr(node, "gate_activation").decode() == gate
    assert any(o.domain == "ai.onnx_light" and o.version == 1 for o in fused.opset_import)
    feeds = _x((2, 12, 5, 7))
    got = onnx_light.InferenceSession(fused, graph_optimizations=False).run(None, feeds)
    (want,) = _reference(model, feeds)
    np.testing.assert_allclose(got[0], want, rtol=RTOL, atol=ATOL)


def test_squeeze_excitation_without_biases_and_over_a_volume():
    model = _se_block("ReduceMean-input", "Relu", "HardSigmoid", x_shape=(1, 6, 3, 4, 5), reduced=2, bias=False)
    fused = _fuse(model)
    (node,) = fused.graph.node
    assert node.op_type == "SqueezeExcitation" and list(node.input) == ["x", "w1", "", "w2", ""]
    feeds = _x((1, 6, 3, 4, 5))
    got = onnx_light.InferenceSession(fused, graph_optimizations=False).run(None, feeds)
    np.testing.assert_allclose(got[0], _reference(model, feeds)[0], rtol=RTOL, atol=ATOL)


def _leaves_the_block(model):
    ops = [n.op_type for n in _fuse(model).graph.node]
    assert "SqueezeExcitation" not in ops, ops


def test_squeeze_excitation_is_left_alone_where_the_block_is_not_one():
    # The squeeze over one spatial axis only: a [N, C, 1, W] tensor, not a channel vector.
    model = _se_block("ReduceMean-attribute", "Relu", "Sigmoid")
    model.graph.node[0].attribute[0].ints[:] = [2]
    _leaves_the_block(model)
    # keepdims=0: the Conv would not even accept it; nothing to fuse.
    model = _se_block("ReduceMean-attribute", "Relu", "Sigmoid")
    model.graph.node[0].attribute[1].i = 0
    _leaves_the_block(model)
    # The hidden activation is also a graph output.
    model = _se_block("GlobalAveragePool", "Relu", "Sigmoid")
    model.graph.output.append(helper.make_tensor_value_info("h", TensorProto.FLOAT, None))
    _leaves_the_block(model)
    # The gate scales another tensor than the one squeezed.
    model = _se_block("GlobalAveragePool", "Relu", "Sigmoid")
    model.graph.input.append(helper.make_tensor_value_info("other", TensorProto.FLOAT, [2, 12, 5, 7]))
    model.graph.node[-1].input[1] = "other"
    _leaves_the_block(model)
    # A grouped second convolution.
    model = _se_block("GlobalAveragePool", "Relu", "Sigmoid", reduced=4)
    for init in model.graph.initializer:
        if init.name == "w2":
            init.CopyFrom(_init("w2", (12, 2, 1, 1)))
    model.graph.node[3].attribute.append(helper.make_attribute("group", 2))
    _leaves_the_block(model)
    # No gate activation (the product of a plain 1x1 conv is not a gate).
    model = _se_block("GlobalAveragePool", "Relu", "Sigmoid")
    del model.graph.node[4]
    model.graph.node[-1].input[0] = "g0"
    _leaves_the_block(model)


def test_squeeze_excitation_at_level_all_matches_the_unoptimised_graph():
    model = _se_block("ReduceMean-input", "SiLU", "Sigmoid", x_shape=(3, 16, 6, 6), reduced=4)
    feeds = _x((3, 16, 6, 6))
    session = onnx_light.InferenceSession(model)  # the default level, all
    want = onnx_light.InferenceSession(model, graph_optimizations=False).run(None, feeds)
    np.testing.assert_allclose(session.run(None, feeds)[0], want[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(want[0], _reference(model, feeds)[0], rtol=RTOL, atol=ATOL)
