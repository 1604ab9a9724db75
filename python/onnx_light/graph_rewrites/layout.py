"""Level "all": CNN stretches in the blocked-channel layout NCHW16c (issue 14), against the
contract of native/kernels/nchwc/README.md (ops, domain ai.onnx_light, layout, zero pad
lanes), in the spirit of ONNX Runtime's NCHWc transformer.

A blocked tensor of logical shape [N, C, H, W] is [N, CeilDiv(C, 16), H, W, 16] with the pad
lanes (c >= C) zero. The pass runs after the extended passes (Conv + BatchNormalization,
activations, residual Adds and squeeze-and-excitation blocks are fused by then) and rewrites:

    Conv/FusedConv, float, 2-D, constant W:   group 1 -> NchwcConv
                                               group == C == M (no Z) -> NchwcDepthwiseConv
    ai.onnx_light SqueezeExcitation on a blocked X -> NchwcSqueezeExcitation
    on blocked tensors, as the same standard op (exact: zeros map to zeros):
        Relu, LeakyRelu, HardSwish, Clip (constant bounds, min <= 0 <= max);
        Add/Sub/Mul of two blocked tensors of one channel count, or of a blocked tensor and
            [N, C, 1, 1] / [C, 1, 1] / a scalar (a constant is blocked here, pad lanes 0;
            a computed [N, C, 1, 1] gets a ReorderInput);
        ReduceMean/ReduceMax over axes [2, 3] with keepdims, and GlobalAveragePool/
            GlobalMaxPool as those (axes [2, 3] of the 5-D tensor);
        MaxPool/AveragePool as the 3-D pool with kernel [kh, kw, 1]: only with pools=True
            (BLOCKED_POOLS: our Pool kernels compute it exactly but through their generic
            N-D path, about 60 times slower than the 2-D row path, so a pool ends a stretch).

The stretches are decided before anything is rewritten, so no tensor bounces between
layouts: (1) in graph order, every node that could run blocked is a candidate, a conv
always (its X blocked or not), any other node when its data inputs come from candidates;
(2) candidates joined by the tensors they pass each other form stretches (union-find);
(3) a stretch with fewer than MIN_CONVS convolutions stays NCHW (ViT's patch conv, a lone
conv in a transformer: two reorders would cost more than the layout gains). Then each kept
node is replaced by its blocked form, whose outputs take new names (`<name>_nchwc`):
    - a blocked tensor that anything else reads (an NCHW node, a graph output, a subgraph)
      gets one ReorderOutput, right after its producer, that writes the original name: the
      graph outputs keep their names and the NCHW readers are not edited;
    - a conv whose X is NCHW gets one ReorderInput per tensor (shared by every reader),
      except a group-1 conv with fewer than 16 input channels (a stem: NchwcConv reads the
      rank-4 X directly); so does a computed [N, C, 1, 1] operand or an NCHW residual Z.
Channel counts come from W's shapes (and are carried through the stretch); an operand whose
shape the pass cannot tell stays NCHW. Control-flow subgraphs are not rewritten.

The pass rewrites only into the ops the native registry has (available_ops): without
ReorderInput, ReorderOutput and NchwcConv it changes nothing, without NchwcDepthwiseConv
(NchwcSqueezeExcitation) depthwise convs (SE blocks) end a stretch.

Switching it off: graph optimization level "extended" runs every pass but this one (there
is no per-pass session option in onnx-light; ORT's disabled_optimizers is not read).
"""

import dataclasses

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_light import _native
from onnx_light.graph_rewrites._graph import GraphView, attribute, ensure_opset, is_op, unique_name, view_of

BLOCK = 16
DOMAIN = "ai.onnx_light"
MICROSOFT = "com.microsoft"
REQUIRED_OPS = ("ReorderInput", "ReorderOutput", "NchwcConv")
OPTIONAL_OPS = ("NchwcDepthwiseConv", "NchwcSqueezeExcitation")
ALL_OPS = frozenset(REQUIRED_OPS + OPTIONAL_OPS)
# A stretch with fewer convolutions (plain or depthwise) than this stays NCHW.
MIN_CONVS = 2
# A group-1 conv with fewer input channels than this reads an NCHW X as it is (a stem).
STEM_CHANNELS = BLOCK
# Pools on blocked tensors (the 3-D pool on the 5-D tensor): exact with our Pool kernels,
# but they run it through the generic N-D window path. Measured (20:06 UTC, load 0.9, Zen 5,
# 1 thread, MaxPool 3x3/2 pad 1 of ResNet's [1, 64, 112, 112]): 0.17-0.20 ms as the 2-D
# pool, 10.0-10.3 ms as the 3-D pool on [1, 4, 112, 112, 16]. Off until a blocked pool
# kernel exists.
BLOCKED_POOLS = False

_UNARY = ("Relu", "LeakyRelu", "HardSwish", "Clip")
_BINARY = ("Add", "Sub", "Mul")
_REDUCE = {"ReduceMean": "ReduceMean", "ReduceMax": "ReduceMax"}
_GLOBAL_POOL = {"GlobalAveragePool": "ReduceMean", "GlobalMaxPool": "ReduceMax"}
_POOL = ("MaxPool", "AveragePool")


def available_ops() -> frozenset[str]:
    """The blocked-layout ops (ALL_OPS) the native registry has, float kernels of ai.onnx_light."""
    return frozenset(
        k.op for k in _native.registered_kernels() if k.domain == DOMAIN and k.op in ALL_OPS and k.since_version <= 1
    )


def blocks(channels: int) -> int:
    return -(-channels // BLOCK)


@dataclasses.dataclass
class _Candidate:
    """A node that can run blocked: what it becomes (kind), its output's channel count, and
    how each data input reaches it (slot -> "blocked" (a candidate's output), "stem" (read
    as NCHW), "reorder" (a ReorderInput of the NCHW tensor), "constant" (blocked here))."""

    node: onnx.NodeProto
    kind: str  # conv, depthwise, se, unary, binary, reduce, pool
    channels: int
    slots: dict[int, str]


def _float(view: GraphView, name: str) -> bool:
    return view.elem_type(name) in (None, TensorProto.FLOAT)


def _weight_shape(view: GraphView, name: str) -> list[int] | None:
    """Dims of a constant float tensor (an initializer no feed overrides, or a Constant)."""
    if name in view.initializers:
        t = view.initializers[name]
        return list(t.dims) if t.data_type == TensorProto.FLOAT else None
    value = view.constant(name)
    return list(value.shape) if value is not None and value.dtype == np.float32 else None


def _is_conv(node: onnx.NodeProto) -> bool:
    return is_op(node, "Conv") or (node.op_type == "FusedConv" and node.domain == MICROSOFT)


def _conv(view: GraphView, node: onnx.NodeProto, channels: dict[str, int], ops: frozenset[str]) -> _Candidate | None:
    inputs = list(node.input)
    if len(inputs) < 2 or len(node.output) != 1 or not _float(view, inputs[0]):
        return None
    w = _weight_shape(view, inputs[1])
    if w is None or len(w) != 4:
        return None
    kernel = attribute(node, "kernel_shape")
    if kernel is not None and len(kernel) != 2:
        return None
    group = int(attribute(node, "group", 1))
    m, c = w[0], w[1] * group
    z = inputs[3] if len(inputs) > 3 and inputs[3] else ""
    if group == 1:
        kind = "conv"
    elif group == c == m and w[1] == 1 and not z and "NchwcDepthwiseConv" in ops:
        kind = "depthwise"
    else:
        return None
    x = inputs[0]
    slots: dict[int, str] = {}
    if x in channels:
        if channels[x] != c:
            return None
        slots[0] = "blocked"
    else:
        slots[0] = "stem" if kind == "conv" and c < STEM_CHANNELS else "reorder"
    if z:
        if z in channels:
            if channels[z] != m:
                return None
            slots[3] = "blocked"
        elif _float(view, z) and z not in view.initializers:
            slots[3] = "reorder"
        else:
            return None
    return _Candidate(node, kind, m, slots)


def _clip_keeps_zero(view: GraphView, node: onnx.NodeProto) -> bool:
    low, high = attribute(node, "min"), attribute(node, "max")
    for i, name in enumerate(node.input[1:3]):
        if name:
            value = view.scalar(name)
            if value is None:
                return False
            if i == 0:
                low = value
            else:
                high = value
    return (low is None or low <= 0) and (high is None or high >= 0)


def _broadcast_operand(view: GraphView, name: str, c: int) -> str | None:
    """How a non-blocked operand of a binary op with a blocked one of `c` channels can be
    made blocked: "constant" (a float scalar, [C, 1, 1] or [1, C, 1, 1] constant), "reorder"
    (a computed float [N, C, 1, 1]), else None."""
    value = view.constant(name)
    if value is not None:
        if value.dtype != np.float32 or value.ndim > 4:
            return None
        shape = [1] * (4 - value.ndim) + list(value.shape)
        return "constant" if value.size == 1 or shape == [1, c, 1, 1] else None
    dims = view.shape(name)
    if dims is None or len(dims) != 4 or dims[1] != c or dims[2] != 1 or dims[3] != 1:
        return None
    return "reorder" if _float(view, name) and name not in view.initializers else None


def _reduce_axes(view: GraphView, node: onnx.NodeProto) -> list[int] | None:
    axes = attribute(node, "axes")
    if len(node.input) > 1 and node.input[1]:
        value = view.constant(node.input[1])
        if value is None:
            return None
        axes = value.reshape(-1).tolist()
    return None if axes is None else sorted(int(a) % 4 for a in axes)


def _candidate(
    view: GraphView, node: onnx.NodeProto, channels: dict[str, int], ops: frozenset[str], pools: bool
) -> _Candidate | None:
    """The node as a candidate to run blocked (given the candidates before it), or None."""
    if _is_conv(node):
        return _conv(view, node, channels, ops)
    if not node.input or len(node.output) != 1:
        return None
    if is_op(node, *_BINARY):
        if len(node.input) != 2 or not any(v in channels for v in node.input):
            return None
        a, b = node.input
        if a in channels and b in channels:
            if channels[a] != channels[b]:  # a channel broadcast: the lanes would not line up
                return None
            return _Candidate(node, "binary", channels[a], {0: "blocked", 1: "blocked"})
        blocked, other = (0, 1) if a in channels else (1, 0)
        c = channels[node.input[blocked]]
        how = _broadcast_operand(view, node.input[other], c)
        return None if how is None else _Candidate(node, "binary", c, {blocked: "blocked", other: how})
    x = node.input[0]
    if x not in channels:
        return None
    c = channels[x]
    if node.op_type == "SqueezeExcitation" and node.domain == DOMAIN:
        return _Candidate(node, "se", c, {0: "blocked"}) if "NchwcSqueezeExcitation" in ops else None
    if is_op(node, *_UNARY):
        if node.op_type == "Clip" and not _clip_keeps_zero(view, node):
            return None
        return _Candidate(node, "unary", c, {0: "blocked"})
    if is_op(node, *_REDUCE):
        if int(attribute(node, "keepdims", 1)) != 1 or _reduce_axes(view, node) != [2, 3]:
            return None
        return _Candidate(node, "reduce", c, {0: "blocked"})
    if is_op(node, *_GLOBAL_POOL):
        return _Candidate(node, "reduce", c, {0: "blocked"})
    if pools and is_op(node, *_POOL):
        kernel = attribute(node, "kernel_shape")
        if kernel is None or len(kernel) != 2 or len(node.input) != 1:
            return None
        return _Candidate(node, "pool", c, {0: "blocked"})
    return None


def _stretches(view: GraphView, ops: frozenset[str], pools: bool) -> list[_Candidate]:
    """The nodes to run blocked, in graph order: the candidates of stretches with at least
    MIN_CONVS convolutions."""
    channels: dict[str, int] = {}  # candidates' outputs -> logical channel count
    producer: dict[str, int] = {}  # candidates' outputs -> index of their candidate
    found: list[_Candidate] = []
    for node in view.graph.node:
        cand = _candidate(view, node, channels, ops, pools)
        if cand is None:
            continue
        channels[node.output[0]] = cand.channels
        producer[node.output[0]] = len(found)
        found.append(cand)
    parent = list(range(len(found)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, cand in enumerate(found):
        for slot, how in cand.slots.items():
            if how == "blocked":
                parent[root(i)] = root(producer[cand.node.input[slot]])
    convs: dict[int, int] = {}
    for i, cand in enumerate(found):
        if cand.kind in ("conv", "depthwise"):
            convs[root(i)] = convs.get(root(i), 0) + 1
    return [cand for i, cand in enumerate(found) if convs.get(root(i), 0) >= MIN_CONVS]


def _blocked_constant(value: np.ndarray, c: int) -> np.ndarray:
    """A [1, C, 1, 1]-broadcastable constant as [1, Cb, 1, 1, 16], pad lanes zero."""
    lanes = np.zeros(blocks(c) * BLOCK, np.float32)
    lanes[:c] = np.broadcast_to(value.reshape(-1), (c,))
    return lanes.reshape(1, blocks(c), 1, 1, BLOCK)


def _copy_attributes(node: onnx.NodeProto, new: onnx.NodeProto, drop: tuple[str, ...] = ()) -> None:
    new.attribute.extend(a for a in node.attribute if a.name not in drop)


def rewrite_to_blocked_layout(
    model: onnx.ModelProto,
    weights: _native.LoadedModel | None = None,
    ops: frozenset[str] | None = None,
    pools: bool | None = None,
) -> onnx.ModelProto:
    """The pass (see the module doc): `ops` the blocked ops it may write (default: those the
    registry has, available_ops()), `pools` whether pools stay blocked (default BLOCKED_POOLS)."""
    ops = available_ops() if ops is None else frozenset(ops)
    pools = BLOCKED_POOLS if pools is None else pools
    if not all(op in ops for op in REQUIRED_OPS) or not any(_is_conv(n) for n in model.graph.node):
        return model
    view = view_of(model, weights, infer_shapes=True)
    kept = _stretches(view, ops, pools)
    if not kept:
        return model
    taken = view.taken_names()
    by_id = {id(c.node): c for c in kept}
    blocked_name = {c.node.output[0]: unique_name(f"{c.node.output[0]}_nchwc", taken) for c in kept}
    channels = {c.node.output[0]: c.channels for c in kept}
    reordered: dict[str, str] = {}  # NCHW tensor -> its ReorderInput's output
    constants: dict[tuple[str, int], str] = {}  # (constant, C) -> its blocked initializer
    axes_name: str | None = None
    opset = view.opsets.get("", 0)
    inserted: dict[int, list[onnx.NodeProto]] = {}

    for cand in kept:
        node = cand.node
        before: list[onnx.NodeProto] = []
        inputs = list(node.input)
        for slot, how in cand.slots.items():
            name = inputs[slot]
            if how == "blocked":
                inputs[slot] = blocked_name[name]
            elif how == "reorder":
                if name not in reordered:
                    reordered[name] = unique_name(f"{name}_nchwc", taken)
                    before.append(
                        helper.make_node(
                            "ReorderInput",
                            [name],
                            [reordered[name]],
                            name=unique_name(f"{name}_reorder_input", taken),
                            domain=DOMAIN,
                        )
                    )
                inputs[slot] = reordered[name]
            elif how == "constant":
                key = (name, cand.channels)
                if key not in constants:
                    constants[key] = unique_name(f"{name}_nchwc", taken)
                    value = view.constant(name)
                    assert value is not None
                    view.add_initializer(
                        numpy_helper.from_array(_blocked_constant(value, cand.channels), constants[key])
                    )
                inputs[slot] = constants[key]
        # Other slots (W, B) keep their names: a blocked tensor read there is read as NCHW,
        # from its ReorderOutput.
        output = blocked_name[node.output[0]]
        name = node.name
        if cand.kind == "conv":
            new = helper.make_node("NchwcConv", inputs, [output], name=name, domain=DOMAIN)
            _copy_attributes(node, new)
        elif cand.kind == "depthwise":
            new = helper.make_node("NchwcDepthwiseConv", inputs[:3], [output], name=name, domain=DOMAIN)
            _copy_attributes(node, new)
        elif cand.kind == "se":
            new = helper.make_node("NchwcSqueezeExcitation", inputs, [output], name=name, domain=DOMAIN)
            _copy_attributes(node, new)
        elif cand.kind in ("unary", "binary"):
            new = helper.make_node(node.op_type, inputs, [output], name=name, domain=node.domain)
            _copy_attributes(node, new)
        elif cand.kind == "reduce":
            op = _REDUCE.get(node.op_type) or _GLOBAL_POOL[node.op_type]
            if opset >= 18:
                if axes_name is None:
                    axes_name = unique_name("nchwc_spatial_axes", taken)
                    view.add_initializer(numpy_helper.from_array(np.array([2, 3], np.int64), axes_name))
                new = helper.make_node(op, [inputs[0], axes_name], [output], name=name, keepdims=1)
            else:
                new = helper.make_node(op, [inputs[0]], [output], name=name, axes=[2, 3], keepdims=1)
            if op == node.op_type:
                _copy_attributes(node, new, drop=("axes", "keepdims"))
        else:  # pool: the 3-D pool over (H, W, lanes)
            new = helper.make_node(node.op_type, inputs, [output], name=name)
            for a in node.attribute:
                setting = helper.get_attribute_value(a)
                if a.name in ("kernel_shape", "strides", "dilations"):
                    setting = [*setting, 1]
                elif a.name == "pads":
                    setting = [setting[0], setting[1], 0, setting[2], setting[3], 0]
                new.attribute.append(helper.make_attribute(a.name, setting))
        after = []
        original = node.output[0]
        nchw_readers = [
            reader
            for reader in view.consumers.get(original, [])
            if id(reader) not in by_id
            or any(v == original and s not in by_id[id(reader)].slots for s, v in enumerate(reader.input))
        ]
        if nchw_readers or original in view.outputs or original in view.pinned:
            after.append(
                helper.make_node(
                    "ReorderOutput",
                    [output],
                    [original],
                    name=unique_name(f"{original}_reorder_output", taken),
                    domain=DOMAIN,
                    channels=channels[original],
                )
            )
        inserted[id(node)] = [*before, new, *after]

    view.replace_nodes(set(by_id), inserted)
    view.drop_unused_initializers()
    # The new tensors' element type (float; their shapes are not declared): the session
    # creates a kernel at creation only when its dispatch input's type is known there, and
    # only a kernel created at creation packs and releases its constant W (plan.cc).
    model.graph.value_info.extend(
        helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
        for name in [*blocked_name.values(), *reordered.values()]
    )
    ensure_opset(model, DOMAIN, 1)
    view.opsets.setdefault(DOMAIN, 1)
    return model


def blocked_layout(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """The layout pass as graph_rewrites runs it (the registry's ops, BLOCKED_POOLS)."""
    return rewrite_to_blocked_layout(model, weights)


PASSES = [blocked_layout]
