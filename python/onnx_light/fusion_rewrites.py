"""Fusion rewrites into the epilogue kernels (ONNX Runtime's contrib ops, domain com.microsoft):

fuse_conv_add_activation: Conv -> Add(the Conv's output, another tensor of exactly the
    output's shape) [-> activation] becomes FusedConv with that tensor as Z (added before the
    activation), as ResNet's residual connections have it.
fuse_conv_activation: Conv -> activation becomes FusedConv, and so does Conv feeding both
    Sigmoid and Mul(the Conv output, that Sigmoid) (SiLU as EfficientNet exports write it).
fuse_gemm_activation: the same for Gemm into FusedGemm, Gelu included (FusedGemm only).
fuse_squeeze_excitation: a squeeze-and-excitation block, as MobileNetV3 and EfficientNet
    export it once the passes above have run: ReduceMean over every spatial axis (keepdims)
    or GlobalAveragePool -> Conv/FusedConv 1x1 -> Conv/FusedConv 1x1 (the gate) ->
    Mul(its input, the gate) becomes one ai.onnx_light SqueezeExcitation
    (native/kernels/conv/squeeze_excitation.cc), 6 small nodes (4 after the activation
    fusions) in one.

Activations: Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish and Swish (HardSwish,
for MobileNetV3, and Swish, for EfficientNet's SiLU, are extensions beyond ORT's FusedConv
list; FusedGemm takes all but Clip, and Gelu/FastGelu besides). The
native kernels apply them to each output block right after it is computed
(native/kernels/gemm/epilogue.h), with results equal to the unfused kernels' bit for bit.

Each pass is `(model, weights) -> model`, rewrites the top-level graph in place (as
graph_rewrites.fold_batch_norm_into_conv, after which these run) and fires only on float
Conv/Gemm whose intermediate result has one consumer and is not a graph output (nor read by
a subgraph). The fused node takes the place of the pattern's last node, where every input
it reads has been computed. PASSES lists them in the order to apply.
"""

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper

from onnx_light import _native
from onnx_light._model import weight_array
from onnx_light.graph_rewrites._graph import view_of

MS_DOMAIN = "com.microsoft"
OL_DOMAIN = "ai.onnx_light"  # onnx-light's own fused ops (no ONNX or ORT schema)
CONV_ACTIVATIONS = ("Relu", "Clip", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Swish")
GEMM_ACTIVATIONS = ("Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Swish")
_FLOAT_LIMIT = float(np.finfo(np.float32).max)

Weights = _native.LoadedModel | None


def _is_onnx(node: onnx.NodeProto, op_type: str) -> bool:
    return node.op_type == op_type and node.domain in ("", "ai.onnx")


class _Graph:
    """Consumers, constants and element types/shapes of a top-level graph: the round's shared
    index (graph_rewrites._graph.view_of), or, for a pass called on its own, a new index
    with shape inference of its own."""

    def __init__(self, model: onnx.ModelProto, weights: Weights) -> None:
        self.view = view_of(model, weights, infer_shapes=True)
        self.weights = weights
        self.constants = self.view.initializers
        self.consumers = self.view.consumers
        self.producer = self.view.producer
        self.in_subgraphs = self.view.pinned
        self.graph_outputs = self.view.outputs

    def single_use(self, name: str) -> onnx.NodeProto | None:
        """The one node reading `name`, when it is its only reader and not a graph output."""
        users = self.consumers.get(name, [])
        if len(users) != 1 or name in self.graph_outputs or name in self.in_subgraphs:
            return None
        return users[0]

    def is_float(self, name: str) -> bool:
        t = self.view.type_of(name)
        return t is not None and t.tensor_type.elem_type == onnx.TensorProto.FLOAT

    def same_shape(self, a: str, b: str) -> bool:
        """Both shapes known and equal dimension by dimension (equal values, or one symbol)."""
        ta, tb = self.view.type_of(a), self.view.type_of(b)
        if ta is None or tb is None or not ta.tensor_type.HasField("shape") or not tb.tensor_type.HasField("shape"):
            return False
        da, db = ta.tensor_type.shape.dim, tb.tensor_type.shape.dim
        if len(da) != len(db):
            return False
        for x, y in zip(da, db, strict=True):
            if x.HasField("dim_value") and y.HasField("dim_value"):
                if x.dim_value != y.dim_value:
                    return False
            elif not (x.HasField("dim_param") and y.HasField("dim_param") and x.dim_param == y.dim_param):
                return False
        return True

    def scalar(self, name: str) -> float | None:
        """A constant one-element tensor's value; None when `name` is not constant."""
        if name not in self.constants:
            return None
        value = weight_array(self.constants[name], self.weights)
        return float(value.reshape(-1)[0]) if value.size == 1 else None


def _attrs(node: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _activation(g: _Graph, node: onnx.NodeProto, allowed: tuple[str, ...]) -> tuple[str, list[float]] | None:
    """(activation, parameters) of an activation node the epilogue can take, else None."""
    if node.domain not in ("", "ai.onnx") or node.op_type not in allowed:
        return None
    attrs = _attrs(node)
    if node.op_type == "LeakyRelu":
        return "LeakyRelu", [float(attrs.get("alpha", 0.01))]
    if node.op_type == "Swish":
        return "Swish", [float(attrs.get("alpha", 1.0))]
    if node.op_type == "HardSigmoid":
        return "HardSigmoid", [float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5))]
    if node.op_type == "Clip":
        bounds = [float(attrs.get("min", -_FLOAT_LIMIT)), float(attrs.get("max", _FLOAT_LIMIT))]
        for i, name in enumerate(node.input[1:3]):
            if name:  # opset 11+: a bound given as an input must be a constant scalar
                value = g.scalar(name)
                if value is None:
                    return None
                bounds[i] = value
        return "Clip", bounds
    return node.op_type, []


def _activation_after(g: _Graph, name: str, allowed: tuple[str, ...]) -> tuple[onnx.NodeProto, str, list[float]] | None:
    """(node, activation, parameters) of the activation that is the one reader of `name`
    (as its data input), when the epilogue can take it."""
    node = g.single_use(name)
    if node is None or not node.input or node.input[0] != name:
        return None
    found = _activation(g, node, allowed)
    return None if found is None else (node, found[0], found[1])


def _silu_after(g: _Graph, name: str) -> tuple[onnx.NodeProto, onnx.NodeProto] | None:
    """(Sigmoid, Mul) when `name` is read by exactly Sigmoid(name) and Mul(name, that Sigmoid):
    name * sigmoid(name), which the epilogue computes as Swish with alpha 1."""
    users = g.consumers.get(name, [])
    if len(users) != 2 or name in g.graph_outputs or name in g.in_subgraphs:
        return None
    sigmoid = next((u for u in users if _is_onnx(u, "Sigmoid")), None)
    mul = next((u for u in users if _is_onnx(u, "Mul")), None)
    if sigmoid is None or mul is None or id(g.single_use(sigmoid.output[0])) != id(mul):
        return None
    if sorted(mul.input) != sorted([name, sigmoid.output[0]]):
        return None
    return sigmoid, mul


def _epilogue_after(
    g: _Graph, name: str, allowed: tuple[str, ...]
) -> tuple[onnx.NodeProto, list[onnx.NodeProto], str, list[float]] | None:
    """(the last node, the other nodes it replaces, activation, parameters) of what follows a
    Conv/Gemm output `name`: one activation, or Sigmoid and Mul (SiLU)."""
    after = _activation_after(g, name, allowed)
    if after is not None:
        return after[0], [], after[1], after[2]
    silu = _silu_after(g, name)
    if silu is not None:
        return silu[1], [silu[0]], "Swish", [1.0]
    return None


def _ensure_ms_opset(model: onnx.ModelProto) -> None:
    if not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))


def _replace(g: _Graph, replaced: dict[int, onnx.NodeProto], removed: set[int]) -> onnx.ModelProto:
    """Nodes in `removed` dropped, each node in `replaced` (by id) swapped for its fused node."""
    model = g.view.model
    if not replaced:
        return model
    g.view.replace_nodes(removed | set(replaced), {key: [node] for key, node in replaced.items()})
    _ensure_ms_opset(model)
    return model


def _fused_conv(
    conv: onnx.NodeProto, z: str | None, activation: str, params: list[float], output: str
) -> onnx.NodeProto:
    inputs = list(conv.input) + ([""] * (3 - len(conv.input)) if z else [])
    if z:
        inputs.append(z)
    node = helper.make_node("FusedConv", inputs, [output], name=conv.name, domain=MS_DOMAIN)
    node.attribute.extend(a for a in conv.attribute)
    if activation:
        node.attribute.append(helper.make_attribute("activation", activation))
    if params:
        node.attribute.append(helper.make_attribute("activation_params", params))
    return node


def _float_conv(g: _Graph, node: onnx.NodeProto) -> bool:
    return _is_onnx(node, "Conv") and len(node.input) >= 2 and g.is_float(node.input[1])


def fuse_conv_add_activation(model: onnx.ModelProto, weights: Weights = None) -> onnx.ModelProto:
    """Conv -> Add(residual of the Conv output's shape) [-> activation] -> FusedConv with Z."""
    g = _Graph(model, weights)
    replaced: dict[int, onnx.NodeProto] = {}
    removed: set[int] = set()
    for add in model.graph.node:
        if not _is_onnx(add, "Add") or len(add.input) != 2 or id(add) in removed:
            continue
        add_output = add.output[0]
        for side in (0, 1):
            conv_out, z = add.input[side], add.input[1 - side]
            conv = g.producer.get(conv_out)
            if (
                conv is None
                or id(conv) in removed
                or id(conv) in replaced
                or not _float_conv(g, conv)
                or id(g.single_use(conv_out)) != id(add)
                or conv_out == z
                or not g.same_shape(conv_out, z)
            ):
                continue
            after = _activation_after(g, add_output, CONV_ACTIVATIONS)
            last = add if after is None else after[0]
            activation, params = ("", []) if after is None else after[1:]
            replaced[id(last)] = _fused_conv(conv, z, activation, params, last.output[0])
            removed.add(id(conv))
            if after is not None:
                removed.add(id(add))
            break
    return _replace(g, replaced, removed)


def fuse_conv_activation(model: onnx.ModelProto, weights: Weights = None) -> onnx.ModelProto:
    """Conv -> activation -> FusedConv."""
    g = _Graph(model, weights)
    replaced: dict[int, onnx.NodeProto] = {}
    removed: set[int] = set()
    for conv in model.graph.node:
        if not _float_conv(g, conv):
            continue
        after = _epilogue_after(g, conv.output[0], CONV_ACTIVATIONS)
        if after is None:
            continue
        act, others, activation, params = after
        replaced[id(act)] = _fused_conv(conv, None, activation, params, act.output[0])
        removed.add(id(conv))
        removed.update(id(n) for n in others)
    return _replace(g, replaced, removed)


def _activation_free_fused_gemm(node: onnx.NodeProto) -> bool:
    """A FusedGemm with no activation yet (MatMul + Add over an A of rank > 2 becomes one:
    graph_rewrites.extended.fuse_matmul_add_into_gemm)."""
    return (
        node.op_type == "FusedGemm"
        and node.domain == MS_DOMAIN
        and not any(a.name == "activation" and a.s for a in node.attribute)
    )


def _gelu_after(g: _Graph, name: str) -> tuple[onnx.NodeProto, str] | None:
    """(node, FusedGemm activation) of the Gelu that is the one reader of `name`: ai.onnx Gelu
    ("Gelu", or "FastGelu" for approximate="tanh"), com.microsoft Gelu, or com.microsoft
    FastGelu without its bias input (what graph_rewrites.extended.fuse_gelu makes of the
    decomposed forms)."""
    node = g.single_use(name)
    if node is None or not node.input or node.input[0] != name:
        return None
    if _is_onnx(node, "Gelu"):
        approximate = _attrs(node).get("approximate", b"none")
        approximate = approximate.decode() if isinstance(approximate, bytes) else approximate
        return (node, "FastGelu" if approximate == "tanh" else "Gelu") if approximate in ("none", "tanh") else None
    if node.domain == MS_DOMAIN and node.op_type == "Gelu":
        return node, "Gelu"
    if node.domain == MS_DOMAIN and node.op_type == "FastGelu" and len([i for i in node.input if i]) == 1:
        return node, "FastGelu"
    return None


def fuse_gemm_activation(model: onnx.ModelProto, weights: Weights = None) -> onnx.ModelProto:
    """Gemm (or a FusedGemm without activation) -> activation -> FusedGemm
    (activation_alpha/beta as ORT's FusedGemm takes them). Gelu too (erf or tanh form, the
    feed-forward projection of a transformer): an extension beyond ORT's FusedGemm."""
    g = _Graph(model, weights)
    replaced: dict[int, onnx.NodeProto] = {}
    removed: set[int] = set()
    for gemm in model.graph.node:
        if not (_is_onnx(gemm, "Gemm") or _activation_free_fused_gemm(gemm)) or len(gemm.input) < 2:
            continue
        if not g.is_float(gemm.input[1]):
            continue
        after = _epilogue_after(g, gemm.output[0], GEMM_ACTIVATIONS)
        gelu = _gelu_after(g, gemm.output[0]) if after is None else None
        if gelu is not None:
            after = (gelu[0], [], gelu[1], [])
        if after is None:
            continue
        act, others, activation, params = after
        node = helper.make_node("FusedGemm", list(gemm.input), [act.output[0]], name=gemm.name, domain=MS_DOMAIN)
        node.attribute.extend(a for a in gemm.attribute if not a.name.startswith("activation"))
        node.attribute.append(helper.make_attribute("activation", activation))
        for name, value in zip(("activation_alpha", "activation_beta"), params, strict=False):
            node.attribute.append(helper.make_attribute(name, value))
        replaced[id(act)] = node
        removed.add(id(gemm))
        removed.update(id(n) for n in others)
    return _replace(g, replaced, removed)


def _pointwise_conv(g: _Graph, node: onnx.NodeProto | None) -> tuple[list[int], str, list[float]] | None:
    """(weight shape, activation, activation parameters) of a Conv or FusedConv that is a
    plain 1x1 product over channels (group 1, unit kernel and strides, no padding, no
    residual) with a constant float weight; None otherwise."""
    if node is None:
        return None
    fused = node.op_type == "FusedConv" and node.domain == MS_DOMAIN
    if not (fused or _is_onnx(node, "Conv")) or len(node.input) < 2 or len(node.input) > 3:
        return None
    weight = g.constants.get(node.input[1])
    if weight is None or weight.data_type != onnx.TensorProto.FLOAT or len(weight.dims) < 3:
        return None
    if len(node.input) == 3 and node.input[2] and node.input[2] not in g.constants:
        return None
    attrs = _attrs(node)
    ones = [1] * (len(weight.dims) - 2)
    if (
        attrs.get("group", 1) != 1
        or list(weight.dims[2:]) != ones
        or list(attrs.get("kernel_shape", ones)) != ones
        or list(attrs.get("strides", ones)) != ones
        or any(attrs.get("pads", []))
        or attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", b"VALID", "NOTSET", "VALID")
    ):
        return None
    activation = attrs.get("activation", b"") if fused else b""
    activation = activation.decode() if isinstance(activation, bytes) else activation
    if activation and activation not in CONV_ACTIVATIONS:
        return None
    return list(weight.dims), activation, [float(v) for v in attrs.get("activation_params", [])]


def _channels(g: _Graph, name: str) -> int | None:
    t = g.view.type_of(name)
    if t is None or not t.tensor_type.HasField("shape") or len(t.tensor_type.shape.dim) < 2:
        return None
    dim = t.tensor_type.shape.dim[1]
    return dim.dim_value if dim.HasField("dim_value") else None


def _spatial_mean_of(g: _Graph, node: onnx.NodeProto | None, rank: int) -> str | None:
    """The input X of ReduceMean(X) over every spatial axis with keepdims, or of
    GlobalAveragePool(X), for X of `rank` (that of the 1x1 weights that read the mean: X's
    rank and element type are theirs, which holds when shape inference cannot see X, as
    behind a FusedConv); None for anything else."""
    if node is None or not node.input:
        return None
    x = node.input[0]
    if _is_onnx(node, "GlobalAveragePool"):
        return x
    if not _is_onnx(node, "ReduceMean"):
        return None
    attrs = _attrs(node)
    if attrs.get("keepdims", 1) != 1:
        return None
    axes = attrs.get("axes")
    if len(node.input) > 1 and node.input[1]:  # opset 18+: axes as a constant input
        if node.input[1] not in g.constants:
            return None
        axes = weight_array(g.constants[node.input[1]], g.weights).reshape(-1).tolist()
    if axes is None or sorted(int(a) % rank for a in axes) != list(range(2, rank)):
        return None
    return x


def fuse_squeeze_excitation(model: onnx.ModelProto, weights: Weights = None) -> onnx.ModelProto:
    """ReduceMean/GlobalAveragePool -> 1x1 conv -> 1x1 conv (gate) -> Mul -> SqueezeExcitation."""
    g = _Graph(model, weights)
    replaced: dict[int, onnx.NodeProto] = {}
    removed: set[int] = set()
    for mul in model.graph.node:
        if not _is_onnx(mul, "Mul") or len(mul.input) != 2:
            continue
        for side in (0, 1):
            gate_out, x = mul.input[side], mul.input[1 - side]
            gate = g.producer.get(gate_out)
            if gate is None or id(g.single_use(gate_out)) != id(mul):
                continue
            second = _pointwise_conv(g, gate)
            hidden = g.producer.get(gate.input[0])
            first = _pointwise_conv(g, hidden)
            if second is None or first is None or hidden is None or id(g.single_use(gate.input[0])) != id(gate):
                continue
            (w1, activation, params), (w2, gate_activation, gate_params) = first, second
            squeeze = g.producer.get(hidden.input[0])
            if id(g.single_use(hidden.input[0])) != id(hidden) or _spatial_mean_of(g, squeeze, len(w1)) != x:
                continue
            channels = _channels(g, x)
            if (
                not gate_activation
                or len(w2) != len(w1)
                or w1[1] != w2[0]
                or w2[1] != w1[0]
                or (channels is not None and channels != w1[1])
            ):
                continue
            bias = [c.input[2] if len(c.input) > 2 else "" for c in (hidden, gate)]
            node = helper.make_node(
                "SqueezeExcitation",
                [x, hidden.input[1], bias[0], gate.input[1], bias[1]],
                [mul.output[0]],
                name=mul.name or gate.name,
                domain=OL_DOMAIN,
            )
            if activation:
                node.attribute.append(helper.make_attribute("activation", activation))
            if params:
                node.attribute.append(helper.make_attribute("activation_params", params))
            node.attribute.append(helper.make_attribute("gate_activation", gate_activation))
            if gate_params:
                node.attribute.append(helper.make_attribute("gate_activation_params", gate_params))
            replaced[id(mul)] = node
            removed.update({id(squeeze), id(hidden), id(gate)})
            break
    if replaced and not any(o.domain == OL_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(OL_DOMAIN, 1))
    return _replace(g, replaced, removed)


# In order: the residual pattern first (its Conv feeds an Add, which the plain activation
# pattern would not take anyway), then Conv and Gemm with an activation.
PASSES: list[Callable[[onnx.ModelProto, Weights], onnx.ModelProto]] = [
    fuse_conv_add_activation,
    fuse_conv_activation,
    fuse_gemm_activation,
    # Last: it reads the FusedConv nodes the passes above make of the block's convolutions.
    fuse_squeeze_excitation,
]
