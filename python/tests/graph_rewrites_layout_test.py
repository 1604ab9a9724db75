"""The layout pass (graph_rewrites/layout.py): CNN stretches in the blocked-channel layout
NCHW16c of native/kernels/nchwc/README.md.

The blocked kernels live in native/kernels/nchwc; where the registry lacks them, the
rewritten graphs run here on onnx.reference with numpy implementations of the contract's
five ops (and of the com.microsoft FusedConv / ai.onnx_light SqueezeExcitation that the
extended level leaves outside stretches), and are compared with the original model, run
by onnx.reference as exported (the independent oracle). Every implementation below checks
that the pad lanes it reads are zero, so a standard op kept on blocked tensors that would
write anything else there fails the test.
"""

import collections
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx_light
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun
from onnx_light import graph_rewrites
from onnx_light._model import load_model_and_weights, prepare_model, with_weights
from onnx_light.graph_rewrites import layout

sys.path.insert(0, os.path.dirname(__file__))
from rewrite_checks import optimize_checking_index, ort_unoptimized  # noqa: E402

BLOCK = 16
RTOL = 1e-5  # the brief's: rewritten vs original; sums run in another order (and in float64 here)
ATOL = 1e-5

# ---------------------------------------------------------------- numpy implementations


def to_blocked(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    cb = -(-c // BLOCK)
    padded = np.zeros((n, cb * BLOCK, h, w), x.dtype)
    padded[:, :c] = x
    return np.ascontiguousarray(padded.reshape(n, cb, BLOCK, h, w).transpose(0, 1, 3, 4, 2))


def from_blocked(x: np.ndarray, channels: int, what: str) -> np.ndarray:
    """The NCHW tensor of a blocked one, after checking its shape and its pad lanes."""
    assert x.ndim == 5 and x.shape[4] == BLOCK, f"{what}: not blocked: {x.shape}"
    n, cb, h, w, _ = x.shape
    assert cb == -(-channels // BLOCK), f"{what}: {cb} blocks for {channels} channels"
    full = x.transpose(0, 1, 4, 2, 3).reshape(n, cb * BLOCK, h, w)
    pads = full[:, channels:]
    assert not np.any(pads), f"{what}: pad lanes are not zero (max |.| {np.abs(pads).max()})"
    return full[:, :channels]


def activation(y: np.ndarray, name, params) -> np.ndarray:
    name = name.decode() if isinstance(name, bytes) else (name or "")
    params = list(params or [])
    if not name:
        return y
    if name == "Relu":
        return np.maximum(y, 0)
    if name == "Clip":
        low, high = (params + [-np.inf, np.inf][len(params) :])[:2]
        return np.clip(y, low, high)
    if name == "LeakyRelu":
        alpha = params[0] if params else 0.01
        return np.where(y < 0, alpha * y, y)
    if name == "Sigmoid":
        return 1 / (1 + np.exp(-y))
    if name == "Tanh":
        return np.tanh(y)
    if name == "HardSigmoid":
        alpha, beta = (params + [0.2, 0.5][len(params) :])[:2]
        return np.clip(alpha * y + beta, 0, 1)
    if name == "HardSwish":
        return y * np.clip(y / 6 + 0.5, 0, 1)
    if name == "Swish":
        alpha = params[0] if params else 1.0
        return y / (1 + np.exp(-alpha * y))
    raise AssertionError(f"unknown activation {name}")


def conv2d(x, w, b, group=1, strides=None, pads=None, dilations=None, auto_pad="NOTSET", kernel_shape=None):
    """Grouped 2-D convolution in float64."""
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    sh, sw = strides or (1, 1)
    dh, dw = dilations or (1, 1)
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = []
        for size, s, k in ((h, sh, ekh), (wd, sw, ekw)):
            total = max((-(-size // s) - 1) * s + k - size, 0)
            small = total // 2
            pads.append((small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small))
        pads = [pads[0][0], pads[1][0], pads[0][1], pads[1][1]]
    elif auto_pad == "VALID" or pads is None:
        pads = [0, 0, 0, 0]
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - ekh) // sh + 1
    ow = (xp.shape[3] - ekw) // sw + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg : (g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw]
                out[:, g * mg : (g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, w[g * mg : (g + 1) * mg, :, i, j])
    if b is not None:
        out += b.astype(np.float64).reshape(1, -1, 1, 1)
    return out


def squeeze_excitation(x, w1, b1, w2, b2, act, act_params, gate, gate_params):
    mean = x.astype(np.float64).mean(axis=(2, 3))
    hidden = mean @ w1.reshape(w1.shape[0], -1).T.astype(np.float64)
    if b1 is not None:
        hidden += b1
    hidden = activation(hidden, act, act_params)
    g = hidden @ w2.reshape(w2.shape[0], -1).T.astype(np.float64)
    if b2 is not None:
        g += b2
    g = activation(g, gate, gate_params)
    return (x * g[:, :, None, None]).astype(np.float32)


def _conv_attrs(**kw):
    return {k: kw[k] for k in ("group", "strides", "pads", "dilations", "auto_pad", "kernel_shape") if k in kw}


class ReorderInput(OpRun):
    op_domain = "ai.onnx_light"

    def _run(self, x):
        assert x.ndim == 4, f"ReorderInput of {x.shape}"
        return (to_blocked(x),)


class ReorderOutput(OpRun):
    op_domain = "ai.onnx_light"

    def _run(self, x, channels=None):
        assert channels is not None
        assert (x.shape[1] - 1) * BLOCK < channels <= x.shape[1] * BLOCK, (x.shape, channels)
        return (np.ascontiguousarray(from_blocked(x, channels, "ReorderOutput")),)


class NchwcConv(OpRun):
    op_domain = "ai.onnx_light"

    def _run(
        self,
        x,
        w,
        b=None,
        z=None,
        auto_pad=None,
        dilations=None,
        group=None,
        kernel_shape=None,
        pads=None,
        strides=None,
        activation=None,
        activation_params=None,
    ):
        assert group in (None, 1), "NchwcConv takes group 1 only"
        c, m = w.shape[1], w.shape[0]
        if x.ndim == 4:
            assert x.shape[1] == c and c < BLOCK, f"NchwcConv: rank-4 X {x.shape} is for stems only"
        else:
            x = from_blocked(x, c, "NchwcConv X")
        y = conv2d(x, w, b, 1, strides, pads, dilations, auto_pad or "NOTSET")
        if z is not None:
            y += from_blocked(z, m, "NchwcConv Z")
        return (to_blocked(globals()["activation"](y, activation, activation_params).astype(np.float32)),)


class NchwcDepthwiseConv(OpRun):
    op_domain = "ai.onnx_light"

    def _run(
        self,
        x,
        w,
        b=None,
        auto_pad=None,
        dilations=None,
        group=None,
        kernel_shape=None,
        pads=None,
        strides=None,
        activation=None,
        activation_params=None,
    ):
        c = w.shape[0]
        assert group == c and w.shape[1] == 1, (group, w.shape)
        y = conv2d(from_blocked(x, c, "NchwcDepthwiseConv X"), w, b, c, strides, pads, dilations, auto_pad or "NOTSET")
        return (to_blocked(globals()["activation"](y, activation, activation_params).astype(np.float32)),)


class NchwcSqueezeExcitation(OpRun):
    op_domain = "ai.onnx_light"

    def _run(
        self,
        x,
        w1,
        b1=None,
        w2=None,
        b2=None,
        activation=None,
        activation_params=None,
        gate_activation=None,
        gate_activation_params=None,
    ):
        c = w1.shape[1]
        plain = from_blocked(x, c, "NchwcSqueezeExcitation X")
        y = squeeze_excitation(
            plain, w1, b1, w2, b2, activation, activation_params, gate_activation, gate_activation_params
        )
        return (to_blocked(y),)


class FusedConv(OpRun):
    op_domain = "com.microsoft"

    def _run(
        self,
        x,
        w,
        b=None,
        z=None,
        auto_pad=None,
        dilations=None,
        group=None,
        kernel_shape=None,
        pads=None,
        strides=None,
        activation=None,
        activation_params=None,
    ):
        y = conv2d(x, w, b, group or 1, strides, pads, dilations, auto_pad or "NOTSET")
        if z is not None:
            y += z
        return (globals()["activation"](y, activation, activation_params).astype(np.float32),)


class FusedGemm(OpRun):
    op_domain = "com.microsoft"

    def _run(
        self,
        a,
        b,
        c=None,
        transA=0,
        transB=0,
        alpha=1.0,
        beta=1.0,
        activation=None,
        activation_alpha=None,
        activation_beta=None,
    ):
        a, b = (a.T if transA else a), (b.T if transB else b)
        y = alpha * (a.astype(np.float64) @ b) + (beta * c if c is not None else 0)
        params = [p for p in (activation_alpha, activation_beta) if p is not None]
        return (globals()["activation"](y, activation, params).astype(np.float32),)


class SqueezeExcitation(OpRun):
    op_domain = "ai.onnx_light"

    def _run(
        self,
        x,
        w1,
        b1=None,
        w2=None,
        b2=None,
        activation=None,
        activation_params=None,
        gate_activation=None,
        gate_activation_params=None,
    ):
        return (
            squeeze_excitation(
                x, w1, b1, w2, b2, activation, activation_params, gate_activation, gate_activation_params
            ),
        )


NEW_OPS = [
    ReorderInput,
    ReorderOutput,
    NchwcConv,
    NchwcDepthwiseConv,
    NchwcSqueezeExcitation,
    FusedConv,
    FusedGemm,
    SqueezeExcitation,
]

# ---------------------------------------------------------------- model building


class Builder:
    """A small CNN, node by node, with random weights (BatchNormalization as exporters
    write it: the basic level folds it into the conv). With `bn` False (models below opset
    14, where onnx.reference's BatchNormalization-9 disagrees with ONNX Runtime and ours by
    up to 0.06 here) every conv takes a bias instead."""

    def __init__(self, seed=0, bn=True):
        self.rng = np.random.default_rng(seed)
        self.bn = bn
        self.nodes, self.inits, self.k = [], [], 0

    def name(self, base):
        self.k += 1
        return f"{base}{self.k}"

    def const(self, array, base="w"):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def node(self, op, inputs, domain="", **attrs):
        out = self.name(op.lower() + "_")
        self.nodes.append(helper.make_node(op, inputs, [out], name=self.name(op), domain=domain, **attrs))
        return out

    def conv(self, x, c, m, k=3, stride=1, group=1, bias=True, bn=True):
        bn = bn and self.bn
        w = self.const(self.rng.standard_normal((m, c // group, k, k)) / np.sqrt(c // group * k * k))
        inputs = [x, w] + ([self.const(self.rng.standard_normal(m) * 0.1, "b")] if bias else [])
        y = self.node("Conv", inputs, kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=group)
        if bn:
            params = [
                self.rng.uniform(0.5, 1.5, m),
                self.rng.standard_normal(m) * 0.1,
                self.rng.standard_normal(m) * 0.1,
                self.rng.uniform(0.5, 1.5, m),
            ]
            y = self.node("BatchNormalization", [y, *[self.const(p, "bn") for p in params]], epsilon=1e-5)
        return y

    def const_axes(self, axes):
        name = self.name("axes")
        self.inits.append(numpy_helper.from_array(np.array(axes, np.int64), name))
        return name

    def silu(self, x):
        return self.node("Mul", [x, self.node("Sigmoid", [x])])

    def se(self, x, c, r, inner="Relu", gate="Sigmoid"):
        s = self.node("ReduceMean", [x, self.const_axes([2, 3])], keepdims=1)
        h = self.conv(s, c, r, k=1, bn=False)
        h = self.silu(h) if inner == "SiLU" else self.node(inner, [h])
        g = self.node(gate, [self.conv(h, r, c, k=1, bn=False)])
        return self.node("Mul", [x, g])

    def model(self, inputs, outputs, opset=20):
        graph = helper.make_graph(
            self.nodes,
            "cnn",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
            self.inits,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def resnet_blocks(with_pool=False):
    """A ResNet stem (3 channels) and two basic blocks: one with an identity shortcut, one
    downsampling with a 1x1 conv shortcut (conv-bn-relu, residual Add, Relu)."""
    b = Builder(1)
    x = b.node("Relu", [b.conv("x", 3, 32, k=3, stride=1)])
    if with_pool:
        x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = b.node("Relu", [b.conv(x, 32, 32)])
    x = b.node("Relu", [b.node("Add", [b.conv(y, 32, 32), x])])
    y = b.node("Relu", [b.conv(x, 32, 40, stride=2)])
    short = b.conv(x, 32, 40, k=1, stride=2)
    out = b.node("Relu", [b.node("Add", [b.conv(y, 40, 40), short])])
    return b.model([("x", [1, 3, 16, 16])], [out]), out


def mobilenet_v3_block():
    """MobileNetV3's inverted residual: 1x1 expand (HardSwish), depthwise 3x3 (HardSwish),
    SE (Relu, HardSigmoid gate), 1x1 project, residual; 24 and 72 channels (pad lanes)."""
    b = Builder(2)
    x = "x"
    y = b.node("HardSwish", [b.conv(x, 24, 72, k=1)])
    y = b.node("HardSwish", [b.conv(y, 72, 72, k=3, group=72)])
    y = b.se(y, 72, 24, inner="Relu", gate="HardSigmoid")
    y = b.conv(y, 72, 24, k=1)
    out = b.node("Add", [y, x])
    return b.model([("x", [1, 24, 12, 12])], [out]), out


def efficientnet_mbconv():
    """EfficientNet's MBConv: 1x1 expand (SiLU), depthwise 5x5 (SiLU), SE (SiLU, Sigmoid),
    1x1 project, residual; 40 channels."""
    b = Builder(3)
    x = "x"
    y = b.silu(b.conv(x, 40, 240, k=1))
    y = b.silu(b.conv(y, 240, 240, k=5, group=240))
    y = b.se(y, 240, 10, inner="SiLU", gate="Sigmoid")
    y = b.conv(y, 240, 40, k=1)
    out = b.node("Add", [y, x])
    return b.model([("x", [1, 40, 10, 10])], [out]), out


# ---------------------------------------------------------------- checking


@pytest.fixture
def kernels(monkeypatch):
    """The pass as it runs once the registry has all five blocked ops."""
    monkeypatch.setattr(layout, "available_ops", lambda: layout.ALL_OPS)


def ops(m):
    return [n.op_type for n in m.graph.node]


def count(m, op):
    return ops(m).count(op)


def feeds_for(m, seed=5):
    """Random inputs (a symbolic dimension is 3)."""
    rng = np.random.default_rng(seed)
    out = {}
    for vi in m.graph.input:
        if vi.name in {t.name for t in m.graph.initializer}:
            continue
        shape = [d.dim_value if d.HasField("dim_value") else 3 for d in vi.type.tensor_type.shape.dim]
        out[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def check_layout(m, level="all"):
    """The model rewritten at `level` (index checked after every pass), with the original's
    outputs (onnx.reference on the model as written) within RTOL/ATOL."""
    rewritten = optimize_checking_index(m, level=level)
    onnx.checker.check_model(rewritten)  # topological order, names, opset imports
    assert [o.name for o in rewritten.graph.output] == [o.name for o in m.graph.output]
    feeds = feeds_for(m)
    expected = ReferenceEvaluator(m).run(None, feeds)
    got = ReferenceEvaluator(rewritten, new_ops=NEW_OPS).run(None, feeds)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)
    return rewritten


def produced_by(m, name):
    return next(n for n in m.graph.node if name in n.output)


# ---------------------------------------------------------------- small graphs


def test_resnet_blocks_run_blocked_from_the_stem_to_one_reorder_output(kernels):
    m, out = resnet_blocks()
    r = check_layout(m)
    assert ops(r) == ["NchwcConv"] * 6 + ["ReorderOutput"]
    stem = r.graph.node[0]
    assert stem.input[0] == "x"  # 3 channels: the stem reads the rank-4 input, no ReorderInput
    reorder = produced_by(r, out)
    assert reorder.op_type == "ReorderOutput" and helper.get_attribute_value(reorder.attribute[0]) == 40
    # The residual Adds went into the convs as Z, the shortcut read blocked.
    assert sum(1 for n in r.graph.node if n.op_type == "NchwcConv" and len(n.input) == 4) == 2


def test_mobilenet_v3_block_has_one_reorder_each_way(kernels):
    m, _ = mobilenet_v3_block()
    r = check_layout(m)
    assert collections.Counter(ops(r)) == {
        "ReorderInput": 1,
        "NchwcConv": 2,
        "NchwcDepthwiseConv": 1,
        "NchwcSqueezeExcitation": 1,
        "ReorderOutput": 1,
    }
    # One ReorderInput of x, read by the expanding conv and as the projection's residual Z.
    reorder = next(n for n in r.graph.node if n.op_type == "ReorderInput")
    readers = [n for n in r.graph.node if reorder.output[0] in n.input]
    assert len(readers) == 2 and all(n.op_type == "NchwcConv" for n in readers)


def test_efficientnet_mbconv_with_swish_se_and_depthwise_5x5(kernels):
    m, _ = efficientnet_mbconv()
    r = check_layout(m)
    assert collections.Counter(ops(r)) == {
        "ReorderInput": 1,
        "NchwcConv": 2,
        "NchwcDepthwiseConv": 1,
        "NchwcSqueezeExcitation": 1,
        "ReorderOutput": 1,
    }
    dw = next(n for n in r.graph.node if n.op_type == "NchwcDepthwiseConv")
    attrs = {a.name: helper.get_attribute_value(a) for a in dw.attribute}
    assert attrs["group"] == 240 and attrs["kernel_shape"] == [5, 5] and attrs["activation"] == b"Swish"


@pytest.mark.parametrize("channels", [24, 40, 16, 33])
def test_channel_counts_with_pad_lanes(kernels, channels):
    b = Builder(4)
    y = b.node("Relu", [b.conv("x", channels, channels)])
    y = b.node("Mul", [b.conv(y, channels, channels), b.const(b.rng.standard_normal((1, channels, 1, 1)))])
    y = b.node("HardSwish", [b.node("LeakyRelu", [y], alpha=0.1)])
    m = b.model([("x", [2, channels, 7, 5])], [y])
    r = check_layout(m)
    assert ops(r) == ["ReorderInput", "NchwcConv", "NchwcConv", "Mul", "LeakyRelu", "HardSwish", "ReorderOutput"]


def test_stem_with_three_channels_reads_the_nchw_input(kernels):
    b = Builder(5, bn=False)  # opset 10: Clip's bounds as attributes
    y = b.node("Relu", [b.conv("x", 3, 16, stride=2)])
    y = b.node("Clip", [b.conv(y, 16, 24)], min=0.0, max=6.0)
    m = b.model([("x", [1, 3, 17, 17])], [y], opset=10)
    r = check_layout(m)
    assert ops(r) == ["NchwcConv", "NchwcConv", "ReorderOutput"]
    assert r.graph.node[0].input[0] == "x"


def test_graph_output_inside_a_stretch_keeps_its_name(kernels):
    b = Builder(6)
    mid = b.node("Relu", [b.conv("x", 16, 32)])
    y = b.conv(mid, 32, 32)
    m = b.model([("x", [1, 16, 8, 8])], [mid, y])
    r = check_layout(m)
    assert [o.name for o in r.graph.output] == [mid, y]
    assert produced_by(r, mid).op_type == "ReorderOutput"
    assert produced_by(r, y).op_type == "ReorderOutput"
    assert count(r, "ReorderOutput") == 2


def test_tensor_with_readers_on_both_sides_gets_one_shared_reorder_output(kernels):
    b = Builder(7)
    t = b.node("Relu", [b.conv("x", 16, 24)])
    y = b.conv(t, 24, 24)
    side1 = b.node("Sigmoid", [t])  # NCHW readers of t
    side2 = b.node("Transpose", [t], perm=[0, 2, 3, 1])
    m = b.model([("x", [1, 16, 6, 6])], [y, side1, side2])
    r = check_layout(m)
    assert count(r, "ReorderOutput") == 2  # t (shared by Sigmoid and Transpose) and y
    assert produced_by(r, t).op_type == "ReorderOutput"
    conv2 = produced_by(r, produced_by(r, y).input[0])
    assert conv2.op_type == "NchwcConv" and conv2.input[0] != t  # reads t blocked


def test_lone_conv_stays_nchw(kernels):
    """A patch embedding (ViT): one conv in a transformer's graph."""
    b = Builder(8)
    y = b.conv("x", 3, 32, k=4, bn=False)
    shape = b.name("shape")
    b.inits.append(numpy_helper.from_array(np.array([1, 32, -1], np.int64), shape))
    y = b.node("Transpose", [b.node("Reshape", [y, shape])], perm=[0, 2, 1])
    m = b.model([("x", [1, 3, 8, 8])], [y])
    assert ops(check_layout(m)) == ops(graph_rewrites.optimize(m, level="extended"))
    assert not any(n.domain == "ai.onnx_light" for n in check_layout(m).graph.node)


def test_symbolic_batch_and_conv_attributes_carry_over(kernels):
    """A batch dimension by name, auto_pad SAME_UPPER with dilations 2, strides 2: the
    blocked convs keep every Conv attribute (the kernels apply them as Conv does)."""
    b = Builder(15)
    w = b.const(b.rng.standard_normal((24, 16, 3, 3)) / 12)
    y = b.node("Conv", ["x", w], auto_pad="SAME_UPPER", dilations=[2, 2], strides=[2, 2], kernel_shape=[3, 3])
    y = b.node("Relu", [b.conv(y, 24, 24)])
    m = b.model([("x", ["N", 16, 11, 9])], [y])
    r = check_layout(m)
    assert ops(r) == ["ReorderInput", "NchwcConv", "NchwcConv", "ReorderOutput"]
    attrs = {a.name: helper.get_attribute_value(a) for a in r.graph.node[1].attribute}
    assert attrs == {"auto_pad": b"SAME_UPPER", "dilations": [2, 2], "strides": [2, 2], "kernel_shape": [3, 3]}


def test_two_convs_in_separate_stretches_stay_nchw(kernels):
    """Each conv alone in its stretch (a Softmax between them ends the stretch)."""
    b = Builder(9)
    y = b.node("Softmax", [b.conv("x", 16, 16)], axis=1)
    y = b.conv(y, 16, 16)
    m = b.model([("x", [1, 16, 6, 6])], [y])
    r = check_layout(m)
    assert "NchwcConv" not in ops(r) and "ReorderInput" not in ops(r)


def test_elementwise_ops_with_broadcast_operands_keep_pad_lanes_zero(kernels):
    """Add of a scalar, Mul by [1, C, 1, 1], Sub of [C, 1, 1] (constants made blocked), Sub
    of a computed [N, C, 1, 1] (a ReorderInput), Clip(-1, 6), Add of a tensor to itself:
    all blocked; a Clip whose bounds exclude 0 (it would write the pad lanes) is not."""
    b = Builder(10)
    rng = b.rng
    y = b.conv("x", 16, 24)
    y = b.node("Add", [y, b.const(np.float32(0.75), "s")])
    y = b.node("Mul", [b.const(rng.standard_normal((1, 24, 1, 1)), "m"), y])
    y = b.node("Sub", [y, b.const(rng.standard_normal((24, 1, 1)), "c")])
    y = b.node("Clip", [y, b.const(np.float32(-1), "lo"), b.const(np.float32(6), "hi")])
    gate = b.node("Sigmoid", [b.node("ReduceMax", ["g", b.const_axes([2, 3])], keepdims=1)])  # NCHW [1, 24, 1, 1]
    y = b.node("Sub", [gate, y])
    y = b.conv(y, 24, 24)
    y = b.node("Add", [y, y])
    clipped = b.node("Clip", [y, b.const(np.float32(0.5), "lo"), b.const(np.float32(6), "hi")])
    m = b.model([("x", [1, 16, 5, 5]), ("g", [1, 24, 4, 4])], [clipped])
    r = check_layout(m)
    assert ops(r) == [
        "ReorderInput",
        "NchwcConv",
        "Add",
        "Mul",
        "Sub",
        "Clip",
        "ReduceMax",
        "Sigmoid",
        "ReorderInput",
        "Sub",
        "NchwcConv",
        "Add",
        "ReorderOutput",
        "Clip",
    ]


def test_channel_broadcast_between_blocked_tensors_runs_nchw(kernels):
    """Add of a 1-channel tensor (broadcast over the channels) to a 24-channel one: in the
    blocked layout the lanes would not line up, so the Add reads both as NCHW."""
    b = Builder(14)
    x = b.node("Relu", [b.conv("x", 16, 16)])
    y = b.node("Add", [b.conv(x, 16, 1), b.conv(x, 16, 24)])
    m = b.model([("x", [1, 16, 6, 6])], [y])
    r = check_layout(m)
    assert ops(r)[-5:] == ["NchwcConv", "ReorderOutput", "NchwcConv", "ReorderOutput", "Add"]


def test_operand_of_unknown_shape_stays_nchw(kernels):
    b = Builder(11)
    y = b.conv(b.conv("x", 16, 16), 16, 16)
    z = b.node("Add", [y, "other"])  # "other" has no shape: Add runs NCHW
    m = b.model([("x", [1, 16, 4, 4])], [z])
    m.graph.input.append(helper.make_tensor_value_info("other", TensorProto.FLOAT, None))
    rewritten = optimize_checking_index(m, level="all")
    assert ops(rewritten) == ["ReorderInput", "NchwcConv", "NchwcConv", "ReorderOutput", "Add"]


def test_global_pool_and_classifier_read_one_reorder_output(kernels):
    """The CNN tail: GlobalAveragePool becomes ReduceMean over axes [2, 3] of the blocked
    tensor, and the classifier (Flatten, Gemm) reads its ReorderOutput."""
    b = Builder(12, bn=False)  # opset 13: ReduceMean's axes as an attribute
    y = b.node("Relu", [b.conv(b.conv("x", 3, 24), 24, 40)])
    pooled = b.node("GlobalAveragePool", [y])
    flat = b.node("Flatten", [pooled])
    logits = b.node("Gemm", [flat, b.const(b.rng.standard_normal((5, 40)))], transB=1)
    for opset in (13, 18):
        m = b.model([("x", [2, 3, 6, 6])], [logits], opset=opset)
        r = check_layout(m)
        assert ops(r) == ["NchwcConv", "NchwcConv", "ReduceMean", "ReorderOutput", "Flatten", "Gemm"]
        assert produced_by(r, pooled).op_type == "ReorderOutput"


def test_blocked_pools_are_the_3d_pool_when_enabled(kernels, monkeypatch):
    m, _ = resnet_blocks(with_pool=True)
    default = check_layout(m)  # BLOCKED_POOLS off: the stem and the pool stay NCHW
    assert ops(default)[:3] == ["FusedConv", "MaxPool", "ReorderInput"]
    monkeypatch.setattr(layout, "BLOCKED_POOLS", True)
    r = check_layout(m)
    assert ops(r)[:2] == ["NchwcConv", "MaxPool"] and "ReorderInput" not in ops(r)
    pool = r.graph.node[1]
    attrs = {a.name: helper.get_attribute_value(a) for a in pool.attribute}
    assert attrs == {"kernel_shape": [3, 3, 1], "strides": [2, 2, 1], "pads": [1, 1, 0, 1, 1, 0]}


def test_value_read_by_a_subgraph_stays_available_as_nchw(kernels):
    b = Builder(13)
    t = b.node("Relu", [b.conv("x", 16, 16)])
    y = b.conv(t, 16, 16)
    branch = helper.make_graph(
        [helper.make_node("Sigmoid", [t], ["branch_out"])],
        "then",
        [],
        [helper.make_tensor_value_info("branch_out", TensorProto.FLOAT, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Neg", [t], ["other_out"])],
        "else",
        [],
        [helper.make_tensor_value_info("other_out", TensorProto.FLOAT, None)],
    )
    b.nodes.append(helper.make_node("If", ["cond"], ["chosen"], then_branch=branch, else_branch=other))
    m = b.model([("x", [1, 16, 4, 4])], [y, "chosen"])
    m.graph.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    rewritten = optimize_checking_index(m, level="all")
    assert produced_by(rewritten, t).op_type == "ReorderOutput"
    if_node = next(n for n in rewritten.graph.node if n.op_type == "If")
    assert if_node.attribute[0].g.node[0].input[0] == t  # the branch as it was
    for cond in (True, False):
        feeds = {"x": feeds_for(m)["x"], "cond": np.array(cond)}
        expected = ReferenceEvaluator(m).run(None, feeds)
        got = ReferenceEvaluator(rewritten, new_ops=NEW_OPS).run(None, feeds)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


def test_only_the_ops_the_registry_has(monkeypatch):
    m, _ = mobilenet_v3_block()
    monkeypatch.setattr(layout, "available_ops", lambda: frozenset(layout.REQUIRED_OPS))
    r = check_layout(m)  # no blocked depthwise: the depthwise conv ends the stretches
    assert "NchwcDepthwiseConv" not in ops(r) and "NchwcSqueezeExcitation" not in ops(r)
    monkeypatch.setattr(layout, "available_ops", lambda: frozenset(["NchwcConv", "ReorderOutput"]))
    assert not any(n.domain == "ai.onnx_light" and n.op_type != "SqueezeExcitation" for n in check_layout(m).graph.node)


def test_level_extended_turns_the_layout_off(kernels):
    m, _ = efficientnet_mbconv()
    extended = optimize_checking_index(m, level="extended")
    assert not any(op.startswith(("Nchwc", "Reorder")) for op in ops(extended))
    assert any(op.startswith("Nchwc") for op in ops(optimize_checking_index(m, level="all")))


# ---------------------------------------------------------------- the native session


def _registry_has_blocked_kernels():
    return all(op in layout.available_ops() for op in layout.ALL_OPS)


def test_session_without_blocked_kernels_runs_every_level_as_before():
    """While the registry lacks the blocked kernels, level "all" is "extended" exactly (the
    pass writes nothing it cannot run); the levels below never hold a blocked op."""
    m, out = efficientnet_mbconv()
    feeds = feeds_for(m)
    (expected,) = ReferenceEvaluator(m).run(None, feeds)
    results = {}
    for level in ("disabled", "basic", "extended", "all"):
        rewritten = graph_rewrites.optimize(m, level=level)
        if level != "all" or not _registry_has_blocked_kernels():
            assert not any(op.startswith(("Nchwc", "Reorder")) for op in ops(rewritten)), level
        (results[level],) = onnx_light.InferenceSession(m, graph_optimization_level=level).run(None, feeds)
        np.testing.assert_allclose(results[level], expected, rtol=1e-4, atol=1e-4)
    if not _registry_has_blocked_kernels():
        assert ops(graph_rewrites.optimize(m, level="all")) == ops(graph_rewrites.optimize(m, level="extended"))
        assert np.array_equal(results["all"], results["extended"])


def corpus_like_cnn():
    """A small CNN with the corpus's shapes of block: a ResNet stem and basic block, an
    EfficientNet MBConv (SiLU, depthwise 5x5, SE), a MobileNetV3 block (HardSwish,
    depthwise 3x3 stride 2, SE with a HardSigmoid gate), global pooling and a classifier;
    a graph output inside the stretch."""
    b = Builder(20)
    y = b.node("Relu", [b.conv("x", 3, 24, stride=2)])
    y = b.node("Relu", [b.node("Add", [b.conv(b.node("Relu", [b.conv(y, 24, 24)]), 24, 24), y])])
    e = b.silu(b.conv(y, 24, 96, k=1))
    e = b.silu(b.conv(e, 96, 96, k=5, group=96))
    e = b.se(e, 96, 8, inner="SiLU", gate="Sigmoid")
    y = b.node("Add", [b.conv(e, 96, 24, k=1), y])
    e = b.node("HardSwish", [b.conv(y, 24, 40, k=1)])
    e = b.node("HardSwish", [b.conv(e, 40, 40, k=3, group=40, stride=2)])
    e = b.se(e, 40, 16, inner="Relu", gate="HardSigmoid")
    y = b.conv(e, 40, 40, k=1)
    flat = b.node("Flatten", [b.node("GlobalAveragePool", [y])])
    logits = b.node("Gemm", [flat, b.const(b.rng.standard_normal((10, 40)))], transB=1)
    return b.model([("x", [2, 3, 32, 32])], [logits, y])


CORPUS_LIKE_OPS = {
    "NchwcConv": 7,
    "NchwcDepthwiseConv": 2,
    "NchwcSqueezeExcitation": 2,
    "ReduceMean": 1,
    "ReorderOutput": 2,  # the graph output y and the pooled tensor
    "Flatten": 1,
    "Gemm": 1,
}


def test_corpus_like_cnn_on_the_reference(kernels):
    r = check_layout(corpus_like_cnn())
    assert collections.Counter(ops(r)) == CORPUS_LIKE_OPS


def test_rewriting_a_rewritten_model_changes_nothing(kernels):
    once = optimize_checking_index(corpus_like_cnn(), level="all")
    twice = optimize_checking_index(once, level="all")
    assert [(n.op_type, list(n.input), list(n.output)) for n in twice.graph.node] == [
        (n.op_type, list(n.input), list(n.output)) for n in once.graph.node
    ]


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_native_pools_on_blocked_tensors_equal_the_2d_pools(op):
    """What BLOCKED_POOLS relies on: our Pool kernels take the 3-D pool with kernel
    [kh, kw, 1] on a blocked tensor and give the 2-D pool's values, pad lanes zero."""
    rng = np.random.default_rng(21)
    x = rng.standard_normal((2, 24, 13, 11)).astype(np.float32)

    def pool(shape, kernel, strides, pads):
        node = helper.make_node(op, ["x"], ["y"], kernel_shape=kernel, strides=strides, pads=pads)
        graph = helper.make_graph(
            [node],
            "pool",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)

    (plain,) = onnx_light.InferenceSession(pool(list(x.shape), [3, 3], [2, 2], [1, 1, 1, 1])).run(None, {"x": x})
    blocked_model = pool([2, 2, 13, 11, BLOCK], [3, 3, 1], [2, 2, 1], [1, 1, 0, 1, 1, 0])
    (blocked,) = onnx_light.InferenceSession(blocked_model).run(None, {"x": to_blocked(x)})
    np.testing.assert_array_equal(from_blocked(blocked, 24, op), plain)


def compare_levels(threads: int) -> None:
    """corpus_like_cnn through InferenceSession at "all" (blocked) and "extended" (NCHW):
    the blocked graph as expected, the results within 1e-4 (sums in another order)."""
    m = corpus_like_cnn()
    feeds = feeds_for(m)
    policy = onnx_light.CpuExecutionPolicy(num_threads=threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "all.onnx")
        blocked = onnx_light.InferenceSession(
            m, cpu_execution=policy, graph_optimization_level="all", optimized_model_filepath=path
        )
        assert collections.Counter(ops(onnx.load(path))) == CORPUS_LIKE_OPS
    plain = onnx_light.InferenceSession(m, cpu_execution=policy, graph_optimization_level="extended")
    for got, want in zip(blocked.run(None, feeds), plain.run(None, feeds), strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(
    not _registry_has_blocked_kernels(),
    reason="the registry has no blocked-layout kernels (native/kernels/nchwc: "
    + ", ".join(sorted(layout.ALL_OPS - layout.available_ops()))
    + " missing), so level 'all' does not rewrite",
)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("isa", [None, "avx2", "portable"])
def test_native_blocked_layout_matches_extended(isa, threads):
    """compare_levels in this process (the host's ISA), and in a process whose kernels are
    capped at AVX2 or portable code (ONNX_LIGHT_MAX_ISA is fixed at a process's first use)."""
    if isa is None:
        compare_levels(threads)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    code = (
        f"import sys; sys.path.insert(0, {here!r}); import graph_rewrites_layout_test as t; t.compare_levels({threads})"
    )
    env = dict(os.environ, ONNX_LIGHT_MAX_ISA=isa, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]


# ---------------------------------------------------------------- the torch corpus

CORPUS = pathlib.Path(os.path.expanduser("~/.cache/onnx-light/corpus"))  # tools/onnx_light_dev/torch_corpus.py's
CNNS = ["efficientnet_b0", "mobilenet_v3_small", "resnet18", "resnet50"]


def corpus_model(exporter, name):
    found = sorted(CORPUS.glob(f"torch-*/{exporter}/{name}.onnx"))
    if not found:
        pytest.skip(f"no {exporter}/{name}.onnx under {CORPUS} (tools/torch_corpus writes it)")
    proto, weights = load_model_and_weights(str(found[-1]), [])
    return prepare_model(proto), weights


@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
@pytest.mark.parametrize("name", CNNS)
def test_corpus_cnns_need_at_most_one_reorder_input_and_one_reorder_output(kernels, exporter, name):
    proto, weights = corpus_model(exporter, name)
    r = graph_rewrites.optimize(proto, weights, "all", in_place=True, shapes_inferred=True)
    found = collections.Counter(ops(r))
    assert found["ReorderInput"] <= 1 and found["ReorderOutput"] == 1, found
    # The ReorderOutput feeds the classifier (Flatten/Reshape -> Gemm).
    (reorder,) = [n for n in r.graph.node if n.op_type == "ReorderOutput"]
    (reader,) = [n for n in r.graph.node if reorder.output[0] in n.input]
    assert reader.op_type in ("Flatten", "Reshape")
    # Every conv but ResNet's stem (before its MaxPool, which ends the stretch) is blocked.
    nchw_convs = found["Conv"] + found["FusedConv"]
    assert nchw_convs == (1 if name.startswith("resnet") else 0), found
    assert found["ReorderInput"] == (1 if name.startswith("resnet") else 0), found


@pytest.mark.parametrize("name", CNNS)
def test_corpus_cnns_rewritten_give_the_original_results(kernels, name):
    """The rewritten dynamo export on onnx.reference (the contract's ops in numpy) against
    ONNX Runtime on the model as exported, on one random image; relative to the output's
    scale (the corpus's random weights make MobileNetV3's logits ~1e-9)."""
    proto, weights = corpus_model("dynamo", name)
    r = with_weights(graph_rewrites.optimize(proto, weights, "all", in_place=True, shapes_inferred=True), weights)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    feeds = {r.graph.input[0].name: x}
    (got,) = ReferenceEvaluator(r, new_ops=NEW_OPS).run(None, feeds)
    (path,) = sorted(CORPUS.glob(f"torch-*/dynamo/{name}.onnx"))[-1:]
    (want,) = ort_unoptimized(onnx.load(str(path)), feeds)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= RTOL * np.abs(want).max()


@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
@pytest.mark.parametrize("name", ["vit_b_16", "bert_base_encoder"])
def test_corpus_transformers_are_untouched(kernels, exporter, name):
    proto, weights = corpus_model(exporter, name)
    r = graph_rewrites.optimize(proto, weights, "all", in_place=True, shapes_inferred=True)
    assert not any(n.domain == "ai.onnx_light" for n in r.graph.node), collections.Counter(ops(r))
