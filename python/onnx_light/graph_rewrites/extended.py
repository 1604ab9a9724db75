"""Level "extended": subgraphs that exporters emit for one mathematical op, replaced by the
op onnx-light runs in one kernel (ONNX Runtime's extended level). Each pass is
`(model, weights) -> model` over the top-level graph; every intermediate value of a matched
pattern must be read by the pattern alone (not a graph output, not read by a subgraph).

A fused node must be valid under the model's opset imports: ai.onnx Gelu needs opset >= 20,
LayerNormalization >= 17, RMSNormalization >= 23. Under older opsets Gelu becomes ONNX
Runtime's contrib ops (com.microsoft Gelu, or FastGelu for the tanh form; version 1, the
import added), which onnx-light registers too; LayerNormalization and RMSNormalization are
left decomposed. Attention needs opset >= 23: fuse_attention raises an older ai.onnx import
to 23 when every op of the graph means the same there (PyTorch's exports at opset 20 do),
else leaves the attention decomposed."""

import math
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_light import _native
from onnx_light.graph_rewrites._graph import (
    GraphView,
    attribute,
    ensure_opset,
    is_op,
    unique_name,
    view_of,
)

MICROSOFT = "com.microsoft"

# (pattern nodes, the fused nodes, initializers to add)
Match = tuple[list[onnx.NodeProto], list[onnx.NodeProto], list[onnx.TensorProto]]


def _near(value: float | None, target: float, rtol: float = 1e-3) -> bool:
    return value is not None and abs(value - target) <= rtol * abs(target)


def _other(node: onnx.NodeProto, name: str) -> str | None:
    """The other input of a two-input node that reads `name`."""
    if len(node.input) != 2:
        return None
    if node.input[0] == name:
        return node.input[1]
    if node.input[1] == name:
        return node.input[0]
    return None


def _producer(view: GraphView, name: str, reader: onnx.NodeProto, *op_types: str) -> onnx.NodeProto | None:
    """The node of one of `op_types` producing `name`, when `reader` alone reads it."""
    node = view.producer.get(name)
    if not is_op(node, *op_types) or view.only_reader(name) is not reader:
        return None
    return node


def _reader(view: GraphView, name: str, *op_types: str) -> onnx.NodeProto | None:
    """The one node reading `name`, when it is one of `op_types` and nothing else sees `name`."""
    node = view.only_reader(name)
    return node if is_op(node, *op_types) else None


def _rewrite_all(
    model: onnx.ModelProto,
    weights: _native.LoadedModel | None,
    match: Callable[[GraphView, onnx.NodeProto, set[str]], Match | None],
) -> onnx.ModelProto:
    """Applies `match` at every node until nothing matches: each match's pattern nodes go
    and its fused nodes take the place of the last pattern node (where every input of the
    pattern is available). Matches of one sweep do not overlap."""
    view = view_of(model, weights)
    while True:
        taken = view.taken_names()
        removed: set[int] = set()
        inserted: dict[int, list[onnx.NodeProto]] = {}
        initializers: list[onnx.TensorProto] = []
        position = {id(n): i for i, n in enumerate(model.graph.node)}
        for node in model.graph.node:
            if id(node) in removed:
                continue
            found = match(view, node, taken)
            if found is None:
                continue
            pattern, fused, tensors = found
            if any(id(n) in removed for n in pattern):
                continue
            removed.update(id(n) for n in pattern)
            last = max(pattern, key=lambda n: position[id(n)])
            inserted[id(last)] = fused
            initializers.extend(tensors)
        if not removed:
            return model
        view.replace_nodes(removed, inserted)
        for tensor in initializers:
            view.add_initializer(tensor)
        view.drop_unused_initializers()


def _row_bias(bias: np.ndarray, n: int, rank: int) -> bool:
    """Whether adding `bias` to a product [..., n] of `rank` dims adds one value per column
    (or one value to all) and leaves the product's shape as it is: (), (1,), (n,), (1, n),
    (1, ..., 1, n) of at most `rank` dims."""
    if bias.ndim > rank or any(d != 1 for d in bias.shape[:-1]):
        return False
    return bias.ndim == 0 or bias.shape[-1] in (1, n)


def _match_matmul_add(view: GraphView, mm: onnx.NodeProto, taken: set[str]) -> Match | None:
    if not is_op(mm, "MatMul") or len(mm.input) != 2 or view.opsets.get("", 0) < 7:
        return None
    add = _reader(view, mm.output[0], "Add")
    if add is None:
        return None
    a, b = mm.input
    bias_name = _other(add, mm.output[0])
    if bias_name is None:
        return None
    a_shape = view.shape(a)
    weight, bias = view.constant(b), view.constant(bias_name)
    if a_shape is None or len(a_shape) < 2 or weight is None or bias is None or weight.ndim != 2:
        return None
    if view.elem_type(a) != TensorProto.FLOAT or weight.dtype != np.float32 or bias.dtype != np.float32:
        return None
    n = weight.shape[1]
    if not _row_bias(bias, n, len(a_shape)):
        return None  # a bias that broadcasts over the product's other axes, or enlarges it
    name = unique_name(add.name or "gemm", taken)
    if len(a_shape) == 2:
        gemm = helper.make_node("Gemm", [a, b, bias_name], [add.output[0]], name=name)
        return [mm, add], [gemm], []
    if view.opsets.get(MICROSOFT, 1) != 1:
        return None
    # A [..., K]: FusedGemm flattens the leading dims into M (a view) and adds the bias in
    # its epilogue (native/kernels/gemm/gemm_op.cc); fuse_gemm_activation adds what follows.
    fused = helper.make_node("FusedGemm", [a, b, bias_name], [add.output[0]], name=name, domain=MICROSOFT)
    return [mm, add], [fused], []


def fuse_matmul_add_into_gemm(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """MatMul(A, B) + bias, with B a constant 2-D float matrix [K, N] and bias a constant
    that adds one value per column (or one for all) without enlarging the product ([N],
    [1, N], [1, ..., 1, N], scalar), becomes one GEMM with the bias added in its epilogue:
    Gemm(A, B, bias) when A is 2-D, com.microsoft FusedGemm(A, B, bias) when A is [..., K]
    (the transformer's projections [batch, seq, hidden] x [hidden, out]: the kernel reads A
    as [batch * seq, hidden] in place). B with batch dims, a bias that broadcasts over the
    product's other axes, or a B that is not constant leave MatMul and Add as they are."""
    model = _rewrite_all(model, weights, _match_matmul_add)
    if any(n.op_type == "FusedGemm" and n.domain == MICROSOFT for n in model.graph.node):
        ensure_opset(model, MICROSOFT, 1)
    return model


def _gelu_tail(view: GraphView, x: str, one_plus: str) -> tuple[list[onnx.NodeProto], str] | None:
    """0.5 * x * one_plus, in the orders exporters write: ((x * s) * 0.5), ((s * 0.5) * x) or
    ((x * 0.5) * s). (pattern nodes, output name)."""
    m1 = _reader(view, one_plus, "Mul")
    if m1 is None:
        return None
    p = _other(m1, one_plus)
    if p is None:
        return None
    if p == x:
        m2 = _reader(view, m1.output[0], "Mul")
        if m2 is not None and _near(view.scalar(_other(m2, m1.output[0]) or ""), 0.5):
            return [m1, m2], m2.output[0]
        return None
    if _near(view.scalar(p), 0.5):
        m2 = _reader(view, m1.output[0], "Mul")
        if m2 is not None and _other(m2, m1.output[0]) == x:
            return [m1, m2], m2.output[0]
        return None
    half = _producer(view, p, m1, "Mul")
    if half is not None and _other(half, x) is not None and _near(view.scalar(_other(half, x) or ""), 0.5):
        return [half, m1], m1.output[0]
    return None


def _plus_one(view: GraphView, name: str) -> onnx.NodeProto | None:
    add = _reader(view, name, "Add")
    return add if add is not None and _near(view.scalar(_other(add, name) or ""), 1.0) else None


def _gelu_node(view: GraphView, x: str, out: str, tanh: bool, taken: set[str]) -> onnx.NodeProto | None:
    if view.elem_type(x) != TensorProto.FLOAT:
        return None
    name = unique_name(out + "_gelu", taken)
    if view.opsets.get("", 0) >= 20:
        return helper.make_node("Gelu", [x], [out], name=name, **({"approximate": "tanh"} if tanh else {}))
    if view.opsets.get(MICROSOFT, 1) != 1:
        return None
    return helper.make_node("FastGelu" if tanh else "Gelu", [x], [out], name=name, domain=MICROSOFT)


def _match_gelu_erf(view: GraphView, erf: onnx.NodeProto, taken: set[str]) -> Match | None:
    if not is_op(erf, "Erf"):
        return None
    scaled = _producer(view, erf.input[0], erf, "Div", "Mul")
    if scaled is None or len(scaled.input) != 2:
        return None
    if scaled.op_type == "Div":
        x = scaled.input[0]
        if not _near(view.scalar(scaled.input[1]), math.sqrt(2)):
            return None
    else:
        x = next((i for i in scaled.input if _near(view.scalar(_other(scaled, i) or ""), math.sqrt(0.5))), None)
        if x is None:
            return None
    add = _plus_one(view, erf.output[0])
    if add is None:
        return None
    tail = _gelu_tail(view, x, add.output[0])
    if tail is None:
        return None
    gelu = _gelu_node(view, x, tail[1], False, taken)
    return None if gelu is None else ([scaled, erf, add, *tail[0]], [gelu], [])


def _cube(view: GraphView, name: str, reader: onnx.NodeProto) -> tuple[str, list[onnx.NodeProto]] | None:
    """(x, nodes) when `name` is x**3: Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x)."""
    node = _producer(view, name, reader, "Pow", "Mul")
    if node is None or len(node.input) != 2:
        return None
    if node.op_type == "Pow":
        return (node.input[0], [node]) if _near(view.scalar(node.input[1]), 3.0) else None
    for i in range(2):
        square = _producer(view, node.input[i], node, "Mul")
        x = node.input[1 - i]
        if square is not None and list(square.input) == [x, x]:
            return x, [node, square]
    return None


def _match_gelu_tanh(view: GraphView, tanh: onnx.NodeProto, taken: set[str]) -> Match | None:
    if not is_op(tanh, "Tanh"):
        return None
    scaled = _producer(view, tanh.input[0], tanh, "Mul")
    if scaled is None:
        return None
    inner = next((i for i in scaled.input if _near(view.scalar(_other(scaled, i) or ""), math.sqrt(2 / math.pi))), None)
    total = _producer(view, inner, scaled, "Add") if inner else None
    if total is None or len(total.input) != 2:
        return None
    for x in total.input:
        term = _producer(view, _other(total, x) or "", total, "Mul")
        if term is None:
            continue
        cubed = next((i for i in term.input if _near(view.scalar(_other(term, i) or ""), 0.044715)), None)
        cube = _cube(view, cubed, term) if cubed else None
        if cube is None or cube[0] != x:
            continue
        add = _plus_one(view, tanh.output[0])
        tail = _gelu_tail(view, x, add.output[0]) if add is not None else None
        if add is None or tail is None:
            return None
        gelu = _gelu_node(view, x, tail[1], True, taken)
        if gelu is None:
            return None
        return [*cube[1], term, total, scaled, tanh, add, *tail[0]], [gelu], []
    return None


def fuse_gelu(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """The erf form 0.5 * x * (1 + Erf(x / sqrt(2))) (Div by sqrt(2) or Mul by 1/sqrt(2),
    the products in any order) becomes Gelu, and the tanh form 0.5 * x * (1 + Tanh(
    sqrt(2/pi) * (x + 0.044715 * x^3))) Gelu(approximate="tanh"): ai.onnx Gelu from opset 20,
    com.microsoft Gelu / FastGelu below. Float tensors only."""
    model = _rewrite_all(model, weights, _match_gelu_erf)
    model = _rewrite_all(model, weights, _match_gelu_tanh)
    if any(n.domain == MICROSOFT for n in model.graph.node):
        ensure_opset(model, MICROSOFT, 1)
    return model


def _trailing_axes(view: GraphView, reduce: onnx.NodeProto, rank: int) -> int | None:
    """The first axis of a ReduceMean over the trailing axes with keepdims, else None."""
    if attribute(reduce, "keepdims", 1) != 1:
        return None
    if len(reduce.input) > 1 and reduce.input[1]:
        value = view.constant(reduce.input[1])
        axes = None if value is None else [int(a) for a in np.asarray(value).reshape(-1)]
    else:
        axes = attribute(reduce, "axes")
    if not axes:
        return None
    axes = sorted(a + rank if a < 0 else a for a in axes)
    if axes != list(range(rank - len(axes), rank)):
        return None
    return axes[0]


def _scale_for(view: GraphView, name: str, normalized: list[int | None]) -> np.ndarray | None:
    """A constant float scale or bias as an array of the normalized dims' shape (leading 1s
    dropped), or None when it is not constant or has another shape."""
    value = view.constant(name)
    if value is None or value.dtype != np.float32 or any(d is None for d in normalized):
        return None
    dims = [int(d) for d in normalized if d is not None]
    shape = list(value.shape)
    while len(shape) > len(dims) and shape[0] == 1:
        shape = shape[1:]
    if shape == dims:
        return value.reshape(dims)
    if value.size == 1:
        return np.full(dims, value.reshape(()), np.float32)
    return None


def _as_initializer(array: np.ndarray, base: str, taken: set[str]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.ascontiguousarray(array, np.float32), unique_name(base, taken))


def _match_layer_norm(view: GraphView, mean: onnx.NodeProto, taken: set[str]) -> Match | None:
    if not is_op(mean, "ReduceMean") or view.opsets.get("", 0) < 17:
        return None
    x = mean.input[0]
    shape = view.shape(x)
    if shape is None or view.elem_type(x) != TensorProto.FLOAT:
        return None
    axis = _trailing_axes(view, mean, len(shape))
    centre = _reader(view, mean.output[0], "Sub")
    if axis is None or centre is None or list(centre.input) != [x, mean.output[0]]:
        return None
    d = centre.output[0]
    readers = list({id(n): n for n in view.consumers.get(d, [])}.values())
    square = next((n for n in readers if is_op(n, "Pow", "Mul")), None)
    divide = next((n for n in readers if is_op(n, "Div") and list(n.input[:1]) == [d]), None)
    if square is None or divide is None or len(readers) != 2:
        return None
    if square.op_type == "Pow":
        if square.input[0] != d or not _near(view.scalar(square.input[1]), 2.0) or not view.is_private(d, 2):
            return None
    elif list(square.input) != [d, d] or not view.is_private(d, 3):
        return None
    variance = _reader(view, square.output[0], "ReduceMean")
    if variance is None or _trailing_axes(view, variance, len(shape)) != axis:
        return None
    plus_eps = _reader(view, variance.output[0], "Add")
    eps = view.scalar(_other(plus_eps, variance.output[0]) or "") if plus_eps is not None else None
    root = _reader(view, plus_eps.output[0], "Sqrt") if plus_eps is not None else None
    if plus_eps is None or eps is None or root is None or _reader(view, root.output[0], "Div") is not divide:
        return None
    scale = _reader(view, divide.output[0], "Mul")
    normalized = shape[axis:]
    gamma = _scale_for(view, _other(scale, divide.output[0]) or "", normalized) if scale is not None else None
    if scale is None or gamma is None:
        return None
    pattern = [mean, centre, square, variance, plus_eps, root, divide, scale]
    out = scale.output[0]
    shift = _reader(view, out, "Add")
    beta = _scale_for(view, _other(shift, out) or "", normalized) if shift is not None else None
    tensors = [_as_initializer(gamma, out + "_ln_scale", taken)]
    if shift is not None and beta is not None:
        pattern.append(shift)
        out = shift.output[0]
        tensors.append(_as_initializer(beta, out + "_ln_bias", taken))
    node = helper.make_node(
        "LayerNormalization",
        [x] + [t.name for t in tensors],
        [out],
        name=unique_name(out + "_layer_norm", taken),
        axis=axis - len(shape),
        epsilon=float(eps),
    )
    return pattern, [node], tensors


def fuse_layer_norm(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """ReduceMean -> Sub -> Pow 2 (or Mul by itself) -> ReduceMean -> Add eps -> Sqrt -> Div
    -> Mul gamma (-> Add beta), over trailing axes with keepdims, becomes LayerNormalization
    (opset >= 17; float; gamma and beta constant)."""
    return _rewrite_all(model, weights, _match_layer_norm)


def _match_rms_norm(view: GraphView, square: onnx.NodeProto, taken: set[str]) -> Match | None:
    if not is_op(square, "Pow", "Mul") or view.opsets.get("", 0) < 23 or len(square.input) != 2:
        return None
    x = square.input[0]
    if square.op_type == "Pow" and not _near(view.scalar(square.input[1]), 2.0):
        return None
    if square.op_type == "Mul" and square.input[1] != x:
        return None
    shape = view.shape(x)
    if shape is None or view.elem_type(x) != TensorProto.FLOAT:
        return None
    mean = _reader(view, square.output[0], "ReduceMean")
    axis = _trailing_axes(view, mean, len(shape)) if mean is not None else None
    if mean is None or axis is None:
        return None
    plus_eps = _reader(view, mean.output[0], "Add")
    eps = view.scalar(_other(plus_eps, mean.output[0]) or "") if plus_eps is not None else None
    if plus_eps is None or eps is None:
        return None
    root = _reader(view, plus_eps.output[0], "Sqrt")
    if root is None:
        return None
    after = _reader(view, root.output[0], "Div", "Reciprocal")
    if after is None:
        return None
    if after.op_type == "Div" and list(after.input) == [x, root.output[0]]:
        pattern = [square, mean, plus_eps, root, after]
    else:  # 1 / root (Reciprocal, or Div of 1 as PyTorch exports rsqrt), times x
        if after.op_type == "Div" and (after.input[1] != root.output[0] or not _near(view.scalar(after.input[0]), 1.0)):
            return None
        times = _reader(view, after.output[0], "Mul")
        if times is None or _other(times, after.output[0]) != x:
            return None
        pattern = [square, mean, plus_eps, root, after, times]
    normed = pattern[-1].output[0]
    scale = _reader(view, normed, "Mul")
    gamma = _scale_for(view, _other(scale, normed) or "", shape[axis:]) if scale is not None else None
    if scale is None or gamma is None:
        return None
    out = scale.output[0]
    tensor = _as_initializer(gamma, out + "_rms_scale", taken)
    node = helper.make_node(
        "RMSNormalization",
        [x, tensor.name],
        [out],
        name=unique_name(out + "_rms_norm", taken),
        axis=axis - len(shape),
        epsilon=float(eps),
    )
    return [*pattern, scale], [node], [tensor]


def fuse_rms_norm(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """x * gamma / Sqrt(ReduceMean(x^2) + eps) (Pow 2 or Mul x x; Div, or Reciprocal or Div
    of 1 then Mul), over trailing axes with keepdims, becomes RMSNormalization (opset >= 23; float;
    gamma constant)."""
    return _rewrite_all(model, weights, _match_rms_norm)


# ---------------------------------------------------------------------------- attention

ATTENTION_OPSET = 23

# Ops whose schema changed between opsets 20 and 23 in meaning, not only in the types it
# takes (GroupNormalization-21: scale and bias per channel instead of per group): a model
# holding one keeps its opset import.
_CHANGED_MEANING = frozenset({"GroupNormalization"})


def _schema_only_widened(op: str, old: int, new: int) -> bool:
    """Whether ai.onnx `op` at opset `new` reads every node written for opset `old` the same
    way: the same schema, or one that only allows more types (same inputs, outputs and
    attributes with the same defaults)."""
    try:
        a, b = onnx.defs.get_schema(op, old, ""), onnx.defs.get_schema(op, new, "")
    except onnx.defs.SchemaError:
        return False
    if a.since_version == b.since_version:
        return True
    if op in _CHANGED_MEANING or [(i.name, i.option) for i in a.inputs] != [(i.name, i.option) for i in b.inputs]:
        return False
    if [o.name for o in a.outputs] != [o.name for o in b.outputs]:
        return False
    for name, attr in a.attributes.items():
        other = b.attributes.get(name)
        if other is None or (other.type, other.default_value, other.required) != (
            attr.type,
            attr.default_value,
            attr.required,
        ):
            return False
    if any(attr.required for name, attr in b.attributes.items() if name not in a.attributes):
        return False
    widened = {t.type_param_str: set(t.allowed_type_strs) for t in b.type_constraints}
    return all(set(t.allowed_type_strs) <= widened.get(t.type_param_str, set()) for t in a.type_constraints)


def _can_import_opset(view: GraphView, target: int) -> bool:
    """Whether the model's ai.onnx import can be raised to `target` without changing what
    any node means or which kernels run it: no control flow, every ai.onnx op's schema only
    widened (_schema_only_widened) and a kernel registered at `target`."""
    from onnx_light._model import _kernel_ranges  # the extension's registrations

    current = view.opsets.get("", 0)
    if current >= target:
        return True
    if current < 1 or any(
        a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in view.graph.node for a in n.attribute
    ):
        return False
    ranges = _kernel_ranges()
    for op in {n.op_type for n in view.graph.node if n.domain in ("", "ai.onnx")}:
        if not _schema_only_widened(op, current, target):
            return False
        if not any(since <= target and (end is None or target <= end) for since, end in ranges.get(("", op), [])):
            return False
    return True


def _static(shape: list[int | None] | None, rank: int) -> list[int] | None:
    if shape is None or len(shape) != rank or any(d is None for d in shape):
        return None
    return [int(d) for d in shape if d is not None]


def _scaled(view: GraphView, name: str, reader: onnx.NodeProto) -> tuple[str, float, list[onnx.NodeProto]]:
    """(x, s, nodes) when `name` is x * s (Mul by a constant scalar, or Div by one) read by
    `reader` alone; (name, 1, []) otherwise."""
    node = _producer(view, name, reader, "Mul", "Div")
    if node is None or len(node.input) != 2:
        return name, 1.0, []
    if node.op_type == "Div":
        divisor = view.scalar(node.input[1])
        if divisor is None or divisor == 0:
            return name, 1.0, []
        return node.input[0], 1.0 / divisor, [node]
    for i in range(2):
        factor = view.scalar(node.input[1 - i])
        if factor is not None:
            return node.input[i], factor, [node]
    return name, 1.0, []


def _key_from_transposed(
    view: GraphView, kt: str, reader: onnx.NodeProto, dims: list[int], taken: set[str]
) -> tuple[str, list[onnx.NodeProto], list[onnx.NodeProto], list[onnx.TensorProto]]:
    """K [B, H, L, D] for K^T `kt` [B, H, D, L] (dims), which `reader` alone reads: (K's
    name, pattern nodes it replaces, new nodes, new initializers). Transpose(K, [0, 1, 3, 2])
    gives K itself; Reshape([B*H, D, L] -> dims) of a Transpose becomes the Transpose with
    its last two axes swapped then a Reshape to [B, H, L, D] (torch's head split); anything
    else gets a Transpose."""
    b, h, d, seq = dims
    node = _producer(view, kt, reader, "Transpose", "Reshape")
    if is_op(node, "Transpose") and list(attribute(node, "perm") or []) == [0, 1, 3, 2]:
        return node.input[0], [node], [], []
    if is_op(node, "Reshape") and len(node.input) == 2:
        inner = _producer(view, node.input[0], node, "Transpose")
        perm = list(attribute(inner, "perm") or []) if inner is not None else []
        if inner is not None and len(perm) == 3 and view.shape(inner.output[0]) == [b * h, d, seq]:
            swapped = unique_name(inner.output[0] + "_key", taken)
            target = numpy_helper.from_array(np.array([b, h, seq, d], np.int64), unique_name(kt + "_key_shape", taken))
            key = unique_name(kt + "_key", taken)
            nodes = [
                helper.make_node(
                    "Transpose", [inner.input[0]], [swapped], name=swapped, perm=[perm[0], perm[2], perm[1]]
                ),
                helper.make_node("Reshape", [swapped, target.name], [key], name=key),
            ]
            return key, [node, inner], nodes, [target]
    key = unique_name(kt + "_key", taken)
    return key, [], [helper.make_node("Transpose", [kt], [key], name=key, perm=[0, 1, 3, 2])], []


def _match_attention(view: GraphView, softmax: onnx.NodeProto, taken: set[str]) -> Match | None:
    if not is_op(softmax, "Softmax") or view.elem_type(softmax.input[0]) != TensorProto.FLOAT:
        return None
    dims = _static(view.shape(softmax.input[0]), 4)
    axis = attribute(softmax, "axis", -1 if view.opsets.get("", 0) >= 13 else 1)
    if dims is None or axis not in (-1, 3):
        return None
    out = _reader(view, softmax.output[0], "MatMul")
    if out is None or out.input[0] != softmax.output[0]:
        return None
    pattern = [softmax, out]
    scores, mask = softmax.input[0], None
    add = _producer(view, scores, softmax, "Add")
    if add is not None and len(add.input) == 2:
        for i in range(2):
            if is_op(view.producer.get(add.input[i]), "MatMul", "Mul", "Div"):
                scores, mask = add.input[i], add.input[1 - i]
                break
        if mask is None:
            return None
        mask_shape = _static(view.shape(mask), len(view.shape(mask) or []))
        if (
            view.elem_type(mask) != TensorProto.FLOAT
            or mask_shape is None
            or not 1 <= len(mask_shape) <= 4
            or mask_shape[-1] != dims[3]
            or any(m not in (1, s) for m, s in zip(mask_shape[::-1], dims[::-1]))
        ):
            return None
        pattern.append(add)
        reader = add
    else:
        reader = softmax
    scores, scale, nodes = _scaled(view, scores, reader)
    pattern += nodes
    qk = _producer(view, scores, nodes[0] if nodes else reader, "MatMul")
    if qk is None or len(qk.input) != 2:
        return None
    pattern.append(qk)
    q, q_scale, q_nodes = _scaled(view, qk.input[0], qk)
    kt, k_scale, k_nodes = _scaled(view, qk.input[1], qk)
    v = out.input[1]
    q_dims, kt_dims, v_dims = (_static(view.shape(n), 4) for n in (q, kt, v))
    if q_dims is None or kt_dims is None or v_dims is None:
        return None
    b, h, s, d = q_dims
    length = kt_dims[3]
    if kt_dims != [b, h, d, length] or v_dims[:3] != [b, h, length] or dims != [b, h, s, length]:
        return None
    if any(view.elem_type(n) != TensorProto.FLOAT for n in (q, kt, v)):
        return None
    pattern += q_nodes + k_nodes
    key, key_pattern, key_nodes, tensors = _key_from_transposed(view, kt, k_nodes[0] if k_nodes else qk, kt_dims, taken)
    pattern += key_pattern
    attention = helper.make_node(
        "Attention",
        [q, key, v] + ([mask] if mask is not None else []),
        [out.output[0]],
        name=unique_name(out.output[0] + "_attention", taken),
        scale=float(np.float32(scale * q_scale * k_scale)),
    )
    return pattern, [*key_nodes, attention], tensors


def fuse_attention(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Scaled dot-product attention as PyTorch exports it: MatMul(Q [* s], K^T [* s]) [/ or
    * scale] [+ mask] -> Softmax(last axis) -> MatMul(., V), all float and of static 4-D
    shapes [B, H, S, D], becomes ai.onnx Attention (opset 23) with the product of the
    scales, K^T turned back into K (see _key_from_transposed); the head split and merge
    around it stay as they are. A model importing ai.onnx below 23 has its import raised to
    23 when that changes the meaning of none of its nodes (_can_import_opset); otherwise
    nothing is fused."""
    view = view_of(model, weights)
    if not any(is_op(n, "Softmax") for n in model.graph.node) or not _can_import_opset(view, ATTENTION_OPSET):
        return model
    model = _rewrite_all(model, weights, _match_attention)
    if view.opsets.get("", 0) < ATTENTION_OPSET and any(is_op(n, "Attention") for n in model.graph.node):
        for opset in model.opset_import:
            if opset.domain in ("", "ai.onnx"):
                opset.version = ATTENTION_OPSET
        view.opsets[""] = ATTENTION_OPSET
        model.ir_version = max(
            model.ir_version, helper.find_min_ir_version_for([helper.make_opsetid("", ATTENTION_OPSET)])
        )
    return model


PASSES = [
    fuse_matmul_add_into_gemm,
    fuse_gelu,
    fuse_layer_norm,
    fuse_rms_norm,
    fuse_attention,
]
