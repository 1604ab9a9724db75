"""QDQ recognition: DequantizeLinear -> op -> QuantizeLinear groups, as ONNX Runtime's
quantizer writes them (quantize_static with QuantFormat.QDQ), become integer nodes.

A QDQ model runs every quantized op in float between a DequantizeLinear of each input and a
QuantizeLinear of the output. When the inputs' quantization parameters are constant and
per-tensor (per-channel for weights, along the axis the integer op supports), the group is
one integer node reading the quantized tensors directly:

    Conv -> QLinearConv, MatMul -> QLinearMatMul (ai.onnx);
    Gemm -> QGemm, Add -> QLinearAdd, Mul -> QLinearMul, AveragePool -> QLinearAveragePool,
    GlobalAveragePool -> QLinearGlobalAveragePool, Sigmoid -> QLinearSigmoid,
    LeakyRelu -> QLinearLeakyRelu, Concat -> QLinearConcat (com.microsoft);
    MaxPool with the same parameters on both sides -> MaxPool on the 8-bit tensor.

A Gemm whose output is not quantized becomes a QGemm with float output. A Relu or Clip
between the op and its QuantizeLinear is dropped where the quantized range already clips
as it would (ONNX Runtime's rule): Relu when the zero point is the type's minimum, Clip when
[scale * (qmin - zp), scale * (qmax - zp)] lies inside [min, max]. Everything else keeps its
float path. The integer kernels compute in float from the dequantized values and round
once, so results agree with the QDQ float path to within one quantization step.

ONNX Runtime's dynamic quantization (quantize_dynamic) writes, for every MatMul,
DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, a_zp, w_zp) -> Cast(float) ->
Mul(a_scale * w_scale) (-> Add(bias)). Two passes fuse it as ONNX Runtime does at session
creation: MatMulInteger + Cast + Mul (+ Add) -> com.microsoft MatMulIntegerToFloat (the
scales and the bias in the integer GEMM's epilogue, the int32 product never stored), then,
when the DynamicQuantizeLinear feeds nothing else, that and its MatMulIntegerToFloat ->
com.microsoft DynamicQuantizeMatMul (A quantized inside the kernel). The fused kernels
compute what the chain computes, bit for bit (native/kernels/quantized/
matmul_integer_to_float_op.cc); a DynamicQuantizeLinear read by several MatMulIntegers (a
transformer's Q, K and V projections) stays, and each reader becomes a MatMulIntegerToFloat.

PASSES: the rewrites in order, each `(model, weights) -> model` on the model in place (the
caller copies), like graph_rewrites.fold_batch_norm_into_conv.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_light import _native
from onnx_light._model import weight_array
from onnx_light.graph_rewrites._graph import unique_name, view_of

MS_DOMAIN = "com.microsoft"
_EIGHT_BIT: dict[int, tuple[int, int]] = {onnx.TensorProto.UINT8: (0, 255), onnx.TensorProto.INT8: (-128, 127)}


def _is(node: onnx.NodeProto, op: str) -> bool:
    return node.op_type == op and node.domain in ("", "ai.onnx")


def _attrs(node: onnx.NodeProto) -> dict[str, object]:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


@dataclass
class _QParam:
    """A quantized tensor's parameters: names in the graph and constant values."""

    data: str  # the quantized tensor
    scale: str
    zero_point: str  # "" when absent (0 of uint8)
    scale_value: np.ndarray
    zp_value: np.ndarray
    elem_type: int  # TensorProto type of the quantized tensor
    axis: int | None  # None: per tensor

    @property
    def per_tensor(self) -> bool:
        return self.axis is None


class _Graph:
    """What the rewrites consult, over the round's shared index of the top-level graph
    (graph_rewrites._graph.view_of), which every edit here keeps up to date."""

    def __init__(self, model: onnx.ModelProto, weights: _native.LoadedModel | None) -> None:
        self.model = model
        self.graph = model.graph
        self.weights = weights
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        self.view = view_of(model, weights)
        self.constants = self.view.initializers
        self.producer = self.view.producer
        self.consumers = self.view.consumers
        self.outputs = self.view.outputs

    def value(self, name: str) -> np.ndarray | None:
        t = self.constants.get(name)
        return None if t is None else weight_array(t, self.weights)

    def unique(self, name: str) -> str:
        return unique_name(name, self.view.taken_names())

    def add_initializer(self, array: np.ndarray, name: str) -> str:
        name = self.unique(name)
        self.view.add_initializer(numpy_helper.from_array(array, name))
        return name

    def elem_type(self, name: str) -> int | None:
        """The element type of `name`, looked up in the index (O(1))."""
        t = self.constants.get(name)
        if t is not None:
            return t.data_type
        producer = self.producer.get(name)
        if producer is not None and _is(producer, "QuantizeLinear") and len(producer.input) > 2:
            return self.elem_type(producer.input[2])
        if producer is not None and producer.domain == MS_DOMAIN and producer.op_type.startswith("QLinear"):
            return None  # the rewritten node's output: its type is its zero point's, read below
        return self.view.elem_type(name)

    def dequantized(self, name: str) -> _QParam | None:
        """The parameters of the DequantizeLinear producing `name`, when they are constant."""
        dq = self.producer.get(name)
        if dq is None or not _is(dq, "DequantizeLinear") or len(dq.input) < 2:
            return None
        attrs = _attrs(dq)
        if attrs.get("block_size", 0):
            return None
        scale = self.value(dq.input[1])
        zp_name = dq.input[2] if len(dq.input) > 2 else ""
        zp = self.value(zp_name) if zp_name else None
        if scale is None or scale.dtype != np.float32 or (zp_name and (zp is None or zp.shape != scale.shape)):
            return None
        if zp is None:
            zp = np.zeros(scale.shape, np.uint8)
        elem_type = self.constants[zp_name].data_type if zp_name else onnx.TensorProto.UINT8
        if elem_type not in _EIGHT_BIT:
            return None
        data_type = self.elem_type(dq.input[0])
        if data_type is not None and data_type != elem_type:
            return None
        axis: int | None = None
        if scale.size != 1 or scale.ndim > 1:
            if scale.ndim != 1:
                return None
            axis = int(attrs.get("axis", 1))  # type: ignore[call-overload]
        return _QParam(dq.input[0], dq.input[1], zp_name, scale.reshape(-1), zp.reshape(-1), elem_type, axis)

    def quantized_output(self, name: str) -> tuple[onnx.NodeProto, _QParam] | None:
        """The QuantizeLinear that is the only reader of `name` (per tensor, constant params)."""
        users = self.consumers.get(name, [])
        if name in self.outputs or len(users) != 1:
            return None
        q = users[0]
        if not _is(q, "QuantizeLinear") or len(q.input) < 3 or q.input[0] != name or not q.input[2]:
            return None
        attrs = _attrs(q)
        if attrs.get("block_size", 0) or attrs.get("saturate", 1) != 1:
            return None
        scale, zp = self.value(q.input[1]), self.value(q.input[2])
        if scale is None or zp is None or scale.size != 1 or zp.size != 1 or scale.dtype != np.float32:
            return None
        elem_type = self.constants[q.input[2]].data_type
        if elem_type not in _EIGHT_BIT:
            return None
        return q, _QParam(q.output[0], q.input[1], q.input[2], scale.reshape(-1), zp.reshape(-1), elem_type, None)

    def replace(self, removed: Sequence[onnx.NodeProto], new: onnx.NodeProto) -> None:
        """Puts `new` where the first of `removed` was, drops the others; the index follows."""
        ids = {id(n) for n in removed}
        first = next(n for n in self.graph.node if id(n) in ids)
        self.view.replace_nodes(ids, {id(first): [new]})


def _ms_opset(model: onnx.ModelProto) -> None:
    if not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))


def _remove_dead(g: _Graph) -> None:
    """Drops nodes none of whose outputs is read (DequantizeLinear/QuantizeLinear left
    behind), then initializers nothing reads (a subgraph's reads count)."""
    view = g.view
    while True:
        dead = {
            id(n)
            for n in g.graph.node
            if not any(o and (view.consumers.get(o) or o in view.outputs or o in view.pinned) for o in n.output)
        }
        if not dead:
            break
        view.replace_nodes(dead)
    read = set(view.consumers) | view.outputs | view.pinned | view.inputs
    view.drop_initializers({t.name for t in g.graph.initializer if t.name not in read})


# ------------------------------------------------------------------ Relu / Clip folding


def fold_activations_into_quantize(
    model: onnx.ModelProto, weights: _native.LoadedModel | None = None
) -> onnx.ModelProto:
    """Relu or Clip whose only reader is a QuantizeLinear whose range already clips the same
    way is dropped (the QuantizeLinear reads the activation's input): the quantized result
    is the same, and the op before it is left with a QDQ group the next pass recognises."""
    g = _Graph(model, weights)
    for act in list(g.graph.node):  # one pass: a fold removes only the activation and its Q
        if not (_is(act, "Relu") or _is(act, "Clip")) or not act.input or not act.input[0]:
            continue
        found = g.quantized_output(act.output[0])
        if found is None:
            continue
        q, out = found
        lo_q, hi_q = _EIGHT_BIT[out.elem_type]
        scale, zp = float(out.scale_value[0]), int(out.zp_value[0])
        low, high = scale * (lo_q - zp), scale * (hi_q - zp)
        if _is(act, "Relu"):
            redundant = zp == lo_q
        else:
            bounds = _clip_bounds(g, act)
            redundant = bounds is not None and bounds[0] <= low and high <= bounds[1]
        producer = g.producer.get(act.input[0])
        if not redundant or producer is None or len(g.consumers[act.input[0]]) != 1:
            continue
        new_q = onnx.NodeProto()
        new_q.CopyFrom(q)
        new_q.input[0] = act.input[0]
        g.replace([act, q], new_q)
    return model


def _clip_bounds(g: _Graph, clip: onnx.NodeProto) -> tuple[float, float] | None:
    attrs = _attrs(clip)
    if g.opset < 11:
        return float(attrs.get("min", -np.inf)), float(attrs.get("max", np.inf))  # type: ignore[arg-type]
    bounds = []
    for k, default in ((1, -np.inf), (2, np.inf)):
        if len(clip.input) <= k or not clip.input[k]:
            bounds.append(default)
            continue
        v = g.value(clip.input[k])
        if v is None or v.size != 1:
            return None
        bounds.append(float(v.reshape(-1)[0]))
    return bounds[0], bounds[1]


# ------------------------------------------------------------------ QDQ -> integer nodes


def _constant_value(g: _Graph, name: str) -> np.ndarray | None:
    """A float constant, or a constant behind a DequantizeLinear (any integer type, as
    quantize_static stores int32 biases) dequantized, in float64; None otherwise."""
    dq = g.producer.get(name)
    if dq is None:
        v = g.value(name)
        return None if v is None or v.dtype != np.float32 else v.astype(np.float64)
    if not _is(dq, "DequantizeLinear") or _attrs(dq).get("block_size", 0):
        return None
    data, scale = g.value(dq.input[0]), g.value(dq.input[1])
    zp = g.value(dq.input[2]) if len(dq.input) > 2 and dq.input[2] else np.zeros_like(scale)
    if data is None or scale is None or zp is None or data.ndim == 0 and scale.size != 1:
        return None
    shape = [1] * data.ndim
    if scale.size != 1:
        axis = int(_attrs(dq).get("axis", 1)) % data.ndim  # type: ignore[call-overload]
        shape[axis] = -1
    return (data.astype(np.float64) - zp.astype(np.float64).reshape(shape)) * scale.astype(np.float64).reshape(shape)


def _bias_int32(g: _Graph, bias_name: str, scale: np.ndarray, channels: int) -> str | None:
    """The bias (float constant, or constant behind a DequantizeLinear) requantized to int32
    with `scale` (input scale x weight scale, per channel): the integer ops' bias."""
    values = _constant_value(g, bias_name)
    if values is None:
        return None
    if values.shape != (channels,):
        return None
    q = np.rint(values / scale.astype(np.float64))
    if np.any(np.abs(q) > 2**31 - 1):
        return None
    return g.add_initializer(q.astype(np.int32), bias_name + "_int32")


def _weight_per_axis(p: _QParam, axis: int, rank: int, channels: int) -> bool:
    """Per-tensor, or per-channel along `axis` with one value per channel."""
    if p.per_tensor:
        return True
    assert p.axis is not None
    return (p.axis % rank if rank else p.axis) == axis and p.scale_value.size == channels


def _rewrite_one(g: _Graph, node: onnx.NodeProto) -> bool:
    """Rewrites the QDQ group around `node`; False when it does not qualify."""
    op = node.op_type
    inputs = [i for i in node.input]
    found = g.quantized_output(node.output[0]) if node.output else None
    if op == "Gemm":
        return _rewrite_gemm(g, node, found)
    if found is None:
        return False
    q, out = found
    if op == "MaxPool":
        return _rewrite_max_pool(g, node, q, out)
    if op in ("Add", "Mul", "AveragePool", "GlobalAveragePool", "Sigmoid", "LeakyRelu", "Concat"):
        data_inputs = inputs if op in ("Add", "Mul", "Concat") else inputs[:1]
        params = [g.dequantized(i) for i in data_inputs]
        if not params or any(p is None or not p.per_tensor or p.elem_type != out.elem_type for p in params):
            return False
        ps = [p for p in params if p is not None]
        attrs = _attrs(node)
        name = node.name or op
        if op in ("Add", "Mul"):
            (a, b) = ps
            new = helper.make_node(
                "QLinear" + op,
                [a.data, a.scale, a.zero_point, b.data, b.scale, b.zero_point, out.scale, out.zero_point],
                [out.data],
                name=name,
                domain=MS_DOMAIN,
            )
        elif op == "Concat":
            if any(not p.zero_point for p in ps):
                return False
            flat = [v for p in ps for v in (p.data, p.scale, p.zero_point)]
            new = helper.make_node(
                "QLinearConcat",
                [out.scale, out.zero_point, *flat],
                [out.data],
                name=name,
                domain=MS_DOMAIN,
                axis=attrs["axis"],
            )
        else:
            (x,) = ps
            kept: dict[str, Any] = {}
            if op == "AveragePool":
                if any(d != 1 for d in attrs.get("dilations", [])):  # type: ignore[attr-defined]
                    return False
                kept = {
                    k: v
                    for k, v in attrs.items()
                    if k in ("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides")
                }
            elif op == "LeakyRelu":
                kept = {"alpha": attrs.get("alpha", 0.01)}
            new = helper.make_node(
                "QLinear" + op,
                [x.data, x.scale, x.zero_point, out.scale, out.zero_point],
                [out.data],
                name=name,
                domain=MS_DOMAIN,
                **kept,
            )
        _ms_opset(g.model)
        g.replace([node, q], new)
        return True
    if op == "Conv":
        return _rewrite_conv(g, node, q, out)
    if op == "MatMul":
        return _rewrite_matmul(g, node, q, out)
    return False


def _rewrite_max_pool(g: _Graph, node: onnx.NodeProto, q: onnx.NodeProto, out: _QParam) -> bool:
    """DequantizeLinear -> MaxPool -> QuantizeLinear with the same per-tensor scale and zero
    point (ONNX Runtime's quantizer gives MaxPool its input's parameters) -> MaxPool on the
    8-bit tensor (ai.onnx from opset 12): dequantisation is increasing, so the maximum
    commutes with it, padding is never selected, and quantising a dequantised value with its
    own parameters gives it back exactly. Without this the pool ran in float between a
    DequantizeLinear and a QuantizeLinear (ResNet-18: 802,816 values dequantised, pooled in
    float, requantised)."""
    x = g.dequantized(node.input[0]) if node.input and node.input[0] else None
    if (
        x is None
        or g.opset < 12
        or len([o for o in node.output if o]) != 1
        or not x.per_tensor
        or x.elem_type != out.elem_type
        or float(x.scale_value[0]) != float(out.scale_value[0])
        or int(x.zp_value[0]) != int(out.zp_value[0])
    ):
        return False
    attrs: dict[str, Any] = _attrs(node)
    new = helper.make_node("MaxPool", [x.data], [out.data], name=node.name or "MaxPool", **attrs)
    g.replace([node, q], new)
    return True


def _rewrite_conv(g: _Graph, node: onnx.NodeProto, q: onnx.NodeProto, out: _QParam) -> bool:
    x = g.dequantized(node.input[0])
    w = g.dequantized(node.input[1]) if len(node.input) > 1 else None
    if x is None or w is None or not x.per_tensor or not w.zero_point or not x.zero_point:
        return False
    w_value = g.value(w.data)
    if w_value is None or w_value.ndim < 3:
        return False
    channels = w_value.shape[0]
    if not _weight_per_axis(w, 0, w_value.ndim, channels):
        return False
    inputs = [x.data, x.scale, x.zero_point, w.data, w.scale, w.zero_point, out.scale, out.zero_point]
    if len(node.input) > 2 and node.input[2]:
        scale = np.float32(x.scale_value[0]) * w.scale_value.astype(np.float32)
        bias = _bias_int32(g, node.input[2], np.broadcast_to(scale, (channels,)), channels)
        if bias is None:
            return False
        inputs.append(bias)
    new = helper.make_node("QLinearConv", inputs, [out.data], name=node.name or "Conv")
    new.attribute.extend(node.attribute)
    g.replace([node, q], new)
    return True


def _rewrite_matmul(g: _Graph, node: onnx.NodeProto, q: onnx.NodeProto, out: _QParam) -> bool:
    a, b = g.dequantized(node.input[0]), g.dequantized(node.input[1])
    if a is None or b is None or not a.per_tensor or not a.zero_point or not b.zero_point:
        return False
    if not b.per_tensor:
        b_value = g.value(b.data)
        if b_value is None or b_value.ndim != 2 or not _weight_per_axis(b, 1, 2, b_value.shape[1]):
            return False
    new = helper.make_node(
        "QLinearMatMul",
        [a.data, a.scale, a.zero_point, b.data, b.scale, b.zero_point, out.scale, out.zero_point],
        [out.data],
        name=node.name or "MatMul",
    )
    g.replace([node, q], new)
    return True


def _rewrite_gemm(g: _Graph, node: onnx.NodeProto, found: tuple[onnx.NodeProto, _QParam] | None) -> bool:
    attrs = _attrs(node)
    a, b = g.dequantized(node.input[0]), g.dequantized(node.input[1])
    if a is None or b is None or not a.per_tensor or not a.zero_point or not b.zero_point:
        return False
    if float(attrs.get("beta", 1.0)) != 1.0:  # type: ignore[arg-type]
        return False
    trans_b = int(attrs.get("transB", 0))  # type: ignore[call-overload]
    b_value = g.value(b.data)
    if b_value is None or b_value.ndim != 2:
        return False
    n = b_value.shape[0] if trans_b else b_value.shape[1]
    if not _weight_per_axis(b, 0 if trans_b else 1, 2, n):
        return False
    alpha = float(attrs.get("alpha", 1.0))  # type: ignore[arg-type]
    inputs = [a.data, a.scale, a.zero_point, b.data, b.scale, b.zero_point]
    if len(node.input) > 2 and node.input[2]:
        scale = np.float32(alpha) * np.float32(a.scale_value[0]) * b.scale_value.astype(np.float32)
        bias = _bias_int32(g, node.input[2], np.broadcast_to(scale, (n,)), n)
        if bias is None:
            return False
        inputs.append(bias)
    else:
        inputs.append("")
    removed = [node]
    outputs = list(node.output)
    if found is not None:
        q, out = found
        inputs += [out.scale, out.zero_point]
        outputs = [out.data]
        removed.append(q)  # else: float output, read as before
    while inputs and inputs[-1] == "":
        inputs.pop()
    new = helper.make_node(
        "QGemm",
        inputs,
        outputs,
        name=node.name or "Gemm",
        domain=MS_DOMAIN,
        alpha=alpha,
        transA=int(attrs.get("transA", 0)),  # type: ignore[call-overload]
        transB=trans_b,
    )
    _ms_opset(g.model)
    g.replace(removed, new)
    return True


_TARGETS = (
    "Conv",
    "MatMul",
    "Gemm",
    "Add",
    "Mul",
    "AveragePool",
    "GlobalAveragePool",
    "Sigmoid",
    "LeakyRelu",
    "Concat",
    "MaxPool",
)


def qdq_to_integer_ops(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Every recognised QDQ group of the top-level graph becomes one integer node (see the
    module docstring); DequantizeLinear/QuantizeLinear nodes left unread are removed."""
    if not any(_is(n, "DequantizeLinear") for n in model.graph.node):
        return model
    g = _Graph(model, weights)
    rewritten = False
    # One pass: a rewrite removes only its node and the QuantizeLinear after it (no target).
    for node in list(g.graph.node):
        if node.domain in ("", "ai.onnx") and node.op_type in _TARGETS:
            rewritten = _rewrite_one(g, node) or rewritten
    if rewritten:
        _remove_dead(g)
    return model


# ------------------------------------------------------------------ dynamic quantization


def _from_dql(g: _Graph, name: str) -> bool:
    """Whether `name` is DynamicQuantizeLinear's scale or zero point (scalars)."""
    producer = g.producer.get(name)
    return producer is not None and _is(producer, "DynamicQuantizeLinear") and name in producer.output[1:]


def _one_element(g: _Graph, name: str) -> bool:
    """Whether `name` holds exactly one element of rank <= 1: a constant, DynamicQuantizeLinear's
    scale or zero point (scalars), or a value of known shape [] or [1]."""
    value = g.view.constant(name)
    if value is not None:
        return value.size == 1 and value.ndim <= 1
    if _from_dql(g, name):
        return True
    shape = g.view.shape(name)
    return shape is not None and len(shape) <= 1 and all(d == 1 for d in shape)


def _float_constant(g: _Graph, name: str, n: int) -> np.ndarray | None:
    """A constant float32 of 1 or n elements and rank <= 1 (per tensor or per column)."""
    value = g.view.constant(name)
    if value is None or value.dtype != np.float32 or value.ndim > 1 or value.size not in (1, n):
        return None
    return value


def _one_float(g: _Graph, name: str) -> bool:
    """A float32 value of one element and rank <= 1 (constant or not)."""
    constant = g.view.constant(name)
    if constant is not None:
        return constant.dtype == np.float32 and constant.size == 1 and constant.ndim <= 1
    return (g.view.elem_type(name) == onnx.TensorProto.FLOAT or _from_dql(g, name)) and _one_element(g, name)


def _split_scale(
    g: _Graph, name: str, mul: onnx.NodeProto, n: int, a_dql: onnx.NodeProto | None
) -> tuple[str, str, onnx.NodeProto | None] | None:
    """The multiplier `name` of the int32 product as (a_scale, b_scale, the Mul forming it when
    only `mul` reads it): Mul(one-element float, one-element float or constant of 1 or n
    floats), as quantize_dynamic writes it (A's scale from A's DynamicQuantizeLinear `a_dql`
    first), or a constant of 1 or n floats (its scale Mul folded: a_scale 1.0, exact)."""
    producer = g.producer.get(name)
    if producer is not None and _is(producer, "Mul") and len(producer.input) == 2:
        # A's scale first when A comes from a DynamicQuantizeLinear (the next pass fuses it).
        pairs = [tuple(producer.input), tuple(reversed(producer.input))]
        if a_dql is not None and producer.input[1] == a_dql.output[1]:
            pairs.reverse()
        for a_scale, b_scale in pairs:
            if _one_float(g, a_scale) and (_float_constant(g, b_scale, n) is not None or _one_float(g, b_scale)):
                owned = producer if g.view.only_reader(name) is mul else None
                return a_scale, b_scale, owned
    if _float_constant(g, name, n) is not None:
        return g.add_initializer(np.array(1.0, np.float32), name + "_one"), name, None
    return None


def _fuse_integer_to_float(g: _Graph, mmi: onnx.NodeProto) -> bool:
    """MatMulInteger -> Cast(float) -> Mul(scale) (-> Add(bias)) at `mmi` -> MatMulIntegerToFloat."""
    view = g.view
    if len(mmi.input) < 2 or not mmi.output:
        return False
    cast = view.only_reader(mmi.output[0])
    if cast is None or not _is(cast, "Cast") or _attrs(cast).get("to") != onnx.TensorProto.FLOAT:
        return False
    mul = view.only_reader(cast.output[0])
    if mul is None or not _is(mul, "Mul") or len(mul.input) != 2:
        return False
    a, b = mmi.input[0], mmi.input[1]
    a_zp = mmi.input[2] if len(mmi.input) > 2 else ""
    b_zp = mmi.input[3] if len(mmi.input) > 3 else ""
    b_shape = view.shape(b)
    if b_shape is None or len(b_shape) < 2 or b_shape[-1] is None:
        return False  # N must be known to check the scale and bias
    n = b_shape[-1]
    if a_zp and not _one_element(g, a_zp):
        return False  # a zero point per row of A: MatMulIntegerToFloat's A is per tensor
    scale = mul.input[1] if mul.input[0] == cast.output[0] else mul.input[0]
    a_dql = g.producer.get(a)
    split = _split_scale(g, scale, mul, n, a_dql if a_dql is not None and _is(a_dql, "DynamicQuantizeLinear") else None)
    if split is None:
        return False
    a_scale, b_scale, scale_mul = split
    removed = [mmi, cast, mul] + ([scale_mul] if scale_mul is not None else [])
    out, bias = mul.output[0], ""
    add = view.only_reader(out)
    if add is not None and _is(add, "Add") and len(add.input) == 2:
        other = add.input[1] if add.input[0] == out else add.input[0]
        value = view.constant(other)
        if value is not None and value.dtype == np.float32 and value.shape == (n,):
            removed.append(add)
            out, bias = add.output[0], other
    inputs = [a, b, a_scale, b_scale, a_zp, b_zp, bias]
    while inputs[-1] == "":
        inputs.pop()
    new = helper.make_node(
        "MatMulIntegerToFloat", inputs, [out], name=mmi.name or "MatMulIntegerToFloat", domain=MS_DOMAIN
    )
    ids = {id(n) for n in removed}
    last = [n for n in g.graph.node if id(n) in ids][-1]
    g.view.replace_nodes(ids, {id(last): [new]})
    return True


def fuse_matmul_integer_to_float(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """MatMulInteger(A, B, a_zp, b_zp) -> Cast(to float) -> Mul(a_scale * b_scale) (-> Add(bias))
    becomes com.microsoft MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp, b_zp, bias), when
    every intermediate value is read by the chain alone, a_zp holds one value, the multiplier
    is a one-element float times a one-element float or a constant of 1 or N floats (or such
    a constant: the scale Mul folded), and the bias, if any, is a constant of N floats (N: B's
    last dimension, known; a bias of any other shape stays a float Add after the node).
    The same float operations in the same order: the output is unchanged, bit for bit."""
    if not any(_is(n, "MatMulInteger") for n in model.graph.node):
        return model
    g = _Graph(model, weights)
    fused = False
    for node in list(g.graph.node):
        if _is(node, "MatMulInteger"):
            fused = _fuse_integer_to_float(g, node) or fused
    if fused:
        _ms_opset(g.model)
        g.view.drop_unused_initializers()
    return model


def fuse_dynamic_quantize_matmul(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """DynamicQuantizeLinear(X) whose three outputs only one MatMulIntegerToFloat reads, as its
    A, a_scale and a_zero_point, becomes with it com.microsoft DynamicQuantizeMatMul(X, B,
    b_scale, b_zp, bias): the kernel quantizes X exactly as DynamicQuantizeLinear does."""
    g = _Graph(model, weights)
    removed: set[int] = set()
    inserted: dict[int, list[onnx.NodeProto]] = {}
    for node in list(g.graph.node):
        if node.op_type != "MatMulIntegerToFloat" or node.domain != MS_DOMAIN or len(node.input) < 5:
            continue
        dql = g.producer.get(node.input[0])
        if dql is None or not _is(dql, "DynamicQuantizeLinear") or len(dql.output) != 3:
            continue
        if [node.input[0], node.input[2], node.input[4]] != list(dql.output):
            continue
        if any(g.view.only_reader(o) is not node for o in dql.output):
            continue
        b_zp = node.input[5] if len(node.input) > 5 else ""
        bias = node.input[6] if len(node.input) > 6 else ""
        inputs = [dql.input[0], node.input[1], node.input[3], b_zp, bias]
        while inputs[-1] == "":
            inputs.pop()
        removed.update((id(dql), id(node)))
        inserted[id(node)] = [
            helper.make_node("DynamicQuantizeMatMul", inputs, list(node.output), name=node.name, domain=MS_DOMAIN)
        ]
    if removed:
        g.view.replace_nodes(removed, inserted)
    return model


PASSES: list[Callable[[onnx.ModelProto, _native.LoadedModel | None], onnx.ModelProto]] = [
    fold_activations_into_quantize,
    qdq_to_integer_ops,
    fuse_matmul_integer_to_float,
    fuse_dynamic_quantize_matmul,
]


def apply(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Every pass in order on a copy (the caller's model is left as it was)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for rewrite in PASSES:
        copy = rewrite(copy, weights)
    return copy
