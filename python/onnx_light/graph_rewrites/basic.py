"""Level "basic": rewrites that remove work without changing which ops run the rest
(ONNX Runtime's basic level). Each pass is `(model, weights) -> model`, edits the top-level
graph in place and leaves control-flow subgraphs, and every value they read from the outer
scope, as they were. Graph outputs keep their names."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_light import _native
from onnx_light._model import weight_array
from onnx_light.graph_rewrites._graph import (
    GraphView,
    attribute,
    bypass,
    constant_node_tensor,
    is_default,
    is_op,
    subgraphs,
    unique_name,
    view_of,
)

# Ops never folded: those whose result differs from run to run (or, for Dropout, may), and
# DequantizeLinear, which a QDQ group needs to keep (the QDQ rewrites turn the group into
# one integer node reading the quantized weight; ONNX Runtime skips it too).
NOT_FOLDED_OPS = frozenset(
    {
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
        "Dropout",
        "DequantizeLinear",
    }
)

# A folded node may make its output an initializer of at most this many elements beyond
# what its inputs hold: Transpose, Cast or DequantizeLinear of a weight fold at any size,
# ConstantOfShape, Expand, Tile or Range blowing a few numbers up into a large tensor do not.
FOLD_GROWTH_LIMIT_ELEMENTS = 1 << 16


def _numel(shape: list[int | None] | None) -> int | None:
    if shape is None:
        return None
    dims = [d for d in shape if d is not None]
    return int(np.prod(dims, dtype=np.int64)) if len(dims) == len(shape) else None


def _foldable(node: onnx.NodeProto) -> bool:
    if any(True for _ in subgraphs(node)):
        return False  # a branch or body may read outer values that are not constant
    if node.op_type in NOT_FOLDED_OPS and is_default(node):
        return False
    return node.domain in ("", "ai.onnx", "ai.onnx.ml", "com.microsoft")


def _evaluate(model: onnx.ModelProto, nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray], wanted: list[str]):
    """Runs `nodes` (in order) on the constant `inputs` with onnx-light itself, optimisations
    off, one thread: {name: array} of the wanted outputs that are tensors."""
    from onnx_light.session import CpuExecutionPolicy, InferenceSession  # session imports this package

    graph = helper.make_graph(
        nodes,
        "constant_folding",
        [],
        [onnx.ValueInfoProto(name=n) for n in wanted],
        [numpy_helper.from_array(v, k) for k, v in inputs.items()],
    )
    tiny = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    tiny.functions.extend(model.functions)
    session = InferenceSession(
        tiny, cpu_execution=CpuExecutionPolicy(num_threads=1), graph_optimization_level="disabled"
    )
    results = session.run(wanted, {})
    return {n: r for n, r in zip(wanted, results) if isinstance(r, np.ndarray)}


def fold_constants(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Replaces every top-level node whose inputs are all constant (initializers no feed can
    override, Constant nodes, outputs of nodes folded before it) by initializers holding its
    outputs, evaluated once by onnx-light (a session over the constant nodes, optimisations
    off). Not folded: NOT_FOLDED_OPS, nodes with subgraphs, sequence and optional
    outputs, and outputs that would grow the constants by more than FOLD_GROWTH_LIMIT_ELEMENTS.
    A node the runtime cannot evaluate is left in place."""
    view = view_of(model, weights)
    graph = model.graph
    known = set(view.initializers)
    candidates: list[onnx.NodeProto] = []
    for node in graph.node:
        if not _foldable(node) or not all(i == "" or i in known for i in node.input):
            continue
        sizes_in = sum(_numel(view.shape(i)) or 0 for i in node.input if i)
        sizes_out = [_numel(view.shape(o)) for o in node.output if o]
        if any(s is not None and s > sizes_in + FOLD_GROWTH_LIMIT_ELEMENTS for s in sizes_out):
            continue
        candidates.append(node)
        known.update(o for o in node.output if o)
    if not candidates:
        return model
    produced = {o for n in candidates for o in n.output if o}
    inputs = {i for n in candidates for i in n.input if i and i not in produced}
    try:
        values = _evaluate(
            model,
            candidates,
            {i: np.asarray(weight_array(view.initializers[i], weights)) for i in inputs},
            sorted(produced),
        )
    except Exception:  # noqa: BLE001  a node the runtime rejects: fold node by node below
        values = {}
        for node in candidates:
            needed = [i for i in node.input if i]
            if not all(i in values or i in view.initializers for i in needed):
                continue
            feed = {
                i: values[i] if i in values else np.asarray(weight_array(view.initializers[i], weights)) for i in needed
            }
            try:
                values.update(_evaluate(model, [node], feed, [o for o in node.output if o]))
            except Exception:  # noqa: BLE001  left for the session to run (and report)
                continue
    folded: set[int] = set()
    new_initializers = []
    for node in candidates:
        outs = [o for o in node.output if o]
        if not all(o in values for o in outs):
            continue
        sizes_in = sum(values[i].size if i in values else _numel(view.shape(i)) or 0 for i in node.input if i)
        if any(values[o].size > sizes_in + FOLD_GROWTH_LIMIT_ELEMENTS for o in outs):
            continue
        try:
            tensors = [numpy_helper.from_array(values[o], o) for o in outs]
        except (TypeError, ValueError):
            continue
        declared = {o: view.elem_type(o) for o in outs}
        if any(declared[t.name] not in (None, t.data_type) for t in tensors):
            continue  # e.g. bfloat16 surfacing as another numpy type: keep the node
        new_initializers.extend(tensors)
        folded.add(id(node))
    if not folded:
        return model
    view.replace_nodes(folded)
    for tensor in new_initializers:
        view.add_initializer(tensor)
    view.drop_unused_initializers()
    return model


def fold_static_shapes(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Shape and Size of a value whose (selected) dims are all static, per the graph inputs'
    declared dims and onnx.shape_inference, become int64 initializers; with fold_constants,
    the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains exporters emit fold away.
    A symbolic or unknown dim leaves the node as it is."""
    view = view_of(model, weights)
    graph = model.graph
    folded: set[int] = set()
    values: list[onnx.TensorProto] = []
    for node in graph.node:
        if not is_op(node, "Shape", "Size") or not node.input or node.output[0] in view.pinned:
            continue
        shape = view.shape(node.input[0])
        if shape is None:
            continue
        if node.op_type == "Shape":
            rank = len(shape)
            start, end = int(attribute(node, "start", 0)), attribute(node, "end", None)
            start = min(max(start + rank if start < 0 else start, 0), rank)
            end = rank if end is None else int(end)
            end = min(max(end + rank if end < 0 else end, 0), rank)
            selected = shape[start:end]
            if any(d is None for d in selected):
                continue
            value = np.array(selected, np.int64)
        else:
            size = _numel(shape)
            if size is None:
                continue
            value = np.array(size, np.int64)
        values.append(numpy_helper.from_array(value, node.output[0]))
        folded.add(id(node))
    if folded:
        view.replace_nodes(folded)
        for tensor in values:
            view.add_initializer(tensor)
        view.drop_unused_initializers()
    return model


def _dropout_is_identity(view: GraphView, node: onnx.NodeProto) -> bool:
    """Inference-mode Dropout whose mask nobody reads."""
    if (
        len(node.output) > 1
        and node.output[1]
        and (view.consumers.get(node.output[1]) or node.output[1] in view.outputs)
    ):
        return False
    if node.output[1:] and node.output[1] in view.pinned:
        return False
    if view.opsets.get("", 0) < 7 and attribute(node, "is_test", 0) == 0:
        return False  # Dropout-1/6 trains unless is_test
    if len(node.input) > 2 and node.input[2]:
        training = view.constant(node.input[2])
        return training is not None and not bool(np.asarray(training).reshape(-1)[0])
    return True


def eliminate_identities(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Identity, and Dropout in inference mode (training_mode absent or constant false, mask
    unread), go: their readers read the input instead. An Identity whose output is a graph
    output stays unless its input is a private node output (which then takes the name)."""
    view = view_of(model, weights)
    while True:
        removed: set[int] = set()
        touched: set[str] = set()
        for node in model.graph.node:
            if not node.input or not node.output or node.output[0] in touched or node.input[0] in touched:
                continue
            if is_op(node, "Identity"):
                pass
            elif is_op(node, "Dropout") and _dropout_is_identity(view, node):
                pass
            else:
                continue
            renames_source = node.output[0] in view.outputs  # bypass renames the input's producer
            if bypass(view, node.output[0], node.input[0]):
                removed.add(id(node))
                # Its output (read again by a later Identity of a chain) waits for the next
                # sweep; so does its input when bypass renamed it. Other Identities of the
                # same input (the layers of a model reading one shared weight) go in this one.
                touched.update([node.output[0], node.input[0]] if renames_source else [node.output[0]])
        if not removed:
            return model
        view.replace_nodes(removed)


def eliminate_dead_nodes(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Removes nodes none of whose outputs is read (by a node, a subgraph or as a graph
    output), repeatedly, then the initializers only they read."""
    graph = model.graph
    view = view_of(model, weights)
    live = set(view.outputs) | view.pinned
    keep: list[bool] = [False] * len(graph.node)
    for index in range(len(graph.node) - 1, -1, -1):
        node = graph.node[index]
        if any(o and o in live for o in node.output):
            keep[index] = True
            live.update(i for i in node.input if i)
    removed = {id(n) for n, k in zip(graph.node, keep) if not k}
    if removed:
        view.replace_nodes(removed)
    view.drop_unused_initializers()
    return model


# (from, to) element type pairs where every value of `from` is exactly representable in
# `to`, so that casting there and back returns the input.
_F16, _BF16, _F32, _F64 = TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE
_I8, _I16, _I32, _I64 = TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64
_U8, _U16, _U32, _U64 = TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64
_BOOL = TensorProto.BOOL
_WIDENS_TO: dict[int, set[int]] = {
    _BOOL: {_I8, _I16, _I32, _I64, _U8, _U16, _U32, _U64, _F16, _BF16, _F32, _F64},
    _F16: {_F32, _F64},
    _BF16: {_F32, _F64},
    _F32: {_F64},
    _I8: {_I16, _I32, _I64, _F16, _F32, _F64},
    _U8: {_I16, _I32, _I64, _U16, _U32, _U64, _F16, _F32, _F64},
    _I16: {_I32, _I64, _F32, _F64},
    _U16: {_I32, _I64, _U32, _U64, _F32, _F64},
    _I32: {_I64, _F64},
    _U32: {_I64, _U64, _F64},
}


def simplify_casts(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Cast (or CastLike) to the type its input already has goes; so does a pair
    Cast(Cast(x, to=B), to=A) with x of type A when B holds every value of A exactly (float
    -> double -> float, int8 -> int32 -> int8, ...). Types come from the initializers,
    declared types and shape inference; an unknown type leaves the Cast alone."""
    view = view_of(model, weights)
    while True:
        removed: set[int] = set()
        touched: set[str] = set()
        for node in model.graph.node:
            if not is_op(node, "Cast", "CastLike") or not node.input or node.output[0] in touched:
                continue
            source = node.input[0]
            if source in touched:
                continue
            target = attribute(node, "to") if node.op_type == "Cast" else view.elem_type(node.input[1])
            source_type = view.elem_type(source)
            if target is None or source_type is None:
                continue
            if node.op_type == "Cast" and attribute(node, "saturate", 1) != 1:
                continue
            if source_type == target:
                if bypass(view, node.output[0], source):
                    removed.add(id(node))
                    touched.update([node.output[0], source])
                continue
            inner = view.producer.get(source)
            if not is_op(inner, "Cast") or not inner.input:
                continue
            original = inner.input[0]
            original_type = view.elem_type(original)
            if (
                original_type is None
                or original_type != target
                or source_type not in _WIDENS_TO.get(original_type, set())
            ):
                continue
            if bypass(view, node.output[0], original):
                removed.add(id(node))
                touched.update([node.output[0], source, original])
        if not removed:
            return model
        view.replace_nodes(removed)
        eliminate_dead_nodes(model, weights)  # the inner Cast, when nothing else reads it
        view = view_of(model, weights)


def _perm(view: GraphView, node: onnx.NodeProto) -> list[int] | None:
    perm = attribute(node, "perm")
    if perm is not None:
        return list(perm)
    shape = view.shape(node.input[0])
    return None if shape is None else list(range(len(shape)))[::-1]


def fold_transposes(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Transpose(Transpose(x, p1), p2) becomes one Transpose(x, p1[p2]), or nothing at all
    when the composition is the identity, if the inner result is read by nothing else."""
    view = view_of(model, weights)
    while True:
        removed: set[int] = set()
        touched: set[str] = set()
        for outer in model.graph.node:
            if not is_op(outer, "Transpose") or outer.output[0] in touched or outer.input[0] in touched:
                continue
            inner = view.producer.get(outer.input[0])
            if not is_op(inner, "Transpose") or view.only_reader(inner.output[0]) is not outer:
                continue
            p1, p2 = _perm(view, inner), _perm(view, outer)
            if p1 is None or p2 is None or len(p1) != len(p2):
                continue
            composed = [p1[i] for i in p2]
            x = inner.input[0]
            if composed == list(range(len(composed))):
                if not bypass(view, outer.output[0], x):
                    continue
                removed.update([id(outer), id(inner)])
            else:
                del outer.attribute[:]
                outer.attribute.append(helper.make_attribute("perm", composed))
                view.set_input(outer, 0, x)
                removed.add(id(inner))
            touched.update([outer.output[0], inner.output[0], x])
        if not removed:
            return model
        view.replace_nodes(removed)


def fold_reshapes(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Reshape(Reshape(x, s1), s2) becomes Reshape(x, s2) when s2 is constant and has no 0
    (a 0 copies a dim of the reshaped input, which the rewrite would change) and the inner
    result is read by nothing else."""
    view = view_of(model, weights)
    while True:
        removed: set[int] = set()
        touched: set[str] = set()
        for outer in model.graph.node:
            if not is_op(outer, "Reshape") or len(outer.input) < 2 or outer.output[0] in touched:
                continue
            inner = view.producer.get(outer.input[0])
            if not is_op(inner, "Reshape") or view.only_reader(inner.output[0]) is not outer:
                continue
            s2 = view.constant(outer.input[1])
            if s2 is None or np.any(np.asarray(s2) == 0) or inner.input[0] in touched:
                continue
            view.set_input(outer, 0, inner.input[0])
            removed.add(id(inner))
            touched.update([outer.output[0], inner.output[0], inner.input[0]])
        if not removed:
            return model
        view.replace_nodes(removed)
        view.drop_unused_initializers()


def _axes(view: GraphView, node: onnx.NodeProto) -> list[int] | None:
    if len(node.input) > 1 and node.input[1]:
        value = view.constant(node.input[1])
        return None if value is None else [int(a) for a in np.asarray(value).reshape(-1)]
    axes = attribute(node, "axes")
    return None if axes is None else list(axes)


def _normalized(axes: list[int], rank: int | None) -> list[int] | None:
    if any(a < 0 for a in axes):
        if rank is None:
            return None
        axes = [a + rank if a < 0 else a for a in axes]
    return sorted(axes)


def cancel_squeeze_unsqueeze(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Unsqueeze(x, a) then Squeeze(a), or Squeeze(x, a) then Unsqueeze(a) (same axes, after
    normalising negative ones), give x back: both nodes go if the inner result is read by
    nothing else. A Squeeze without axes is left alone."""
    view = view_of(model, weights)
    while True:
        removed: set[int] = set()
        touched: set[str] = set()
        for outer in model.graph.node:
            if not is_op(outer, "Squeeze", "Unsqueeze") or outer.output[0] in touched:
                continue
            inner = view.producer.get(outer.input[0])
            want = "Unsqueeze" if outer.op_type == "Squeeze" else "Squeeze"
            if not is_op(inner, want) or view.only_reader(inner.output[0]) is not outer:
                continue
            a_inner, a_outer = _axes(view, inner), _axes(view, outer)
            if not a_inner or not a_outer:
                continue
            x = inner.input[0]
            x_shape = view.shape(x)
            rank = None if x_shape is None else len(x_shape)
            # The axes of both refer to the larger rank: Unsqueeze's output, Squeeze's input.
            big = None if rank is None else (rank + len(a_inner) if inner.op_type == "Unsqueeze" else rank)
            if _normalized(a_inner, big) is None or _normalized(a_inner, big) != _normalized(a_outer, big):
                continue
            if inner.op_type == "Squeeze" and x_shape is not None and rank is not None:
                axes = _normalized(a_inner, rank) or []
                if any(not 0 <= a < rank or x_shape[a] not in (1, None) for a in axes):
                    continue  # the Squeeze fails on this input: keep the error
            if x in touched or not bypass(view, outer.output[0], x):
                continue
            removed.update([id(outer), id(inner)])
            touched.update([outer.output[0], inner.output[0], x])
        if not removed:
            return model
        view.replace_nodes(removed)
        view.drop_unused_initializers()


def fold_batch_norm_into_conv(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Conv followed by an inference-mode BatchNormalization, both with constant float
    parameters, becomes one Conv with scaled weights and shifted bias (saving a full pass
    over the activation), when nothing else reads the Conv's output."""
    graph = model.graph
    view = view_of(model, weights)
    constants = view.initializers
    taken = view.taken_names()
    removed, new_initializers = set(), []
    for conv in graph.node:
        if not is_op(conv, "Conv") or len(conv.input) < 2:
            continue
        y = conv.output[0]
        bn = view.only_reader(y)
        if not is_op(bn, "BatchNormalization") or bn.input[0] != y:
            continue
        if attribute(bn, "training_mode", 0) or any(bn.output[1:]):
            continue
        params = (
            [conv.input[1]] + ([conv.input[2]] if len(conv.input) > 2 and conv.input[2] else []) + list(bn.input[1:5])
        )
        if len(bn.input) < 5 or not all(p in constants for p in params):
            continue
        w = weight_array(constants[conv.input[1]], weights)
        if w.dtype != np.float32:
            continue
        scale, shift, mean, var = (weight_array(constants[n], weights).astype(np.float64) for n in bn.input[1:5])
        channels = w.shape[0]
        if any(p.shape != (channels,) for p in (scale, shift, mean, var)):
            continue
        bias = (
            weight_array(constants[conv.input[2]], weights).astype(np.float64)
            if len(conv.input) > 2 and conv.input[2]
            else np.zeros(channels)
        )
        factor = scale / np.sqrt(var + float(attribute(bn, "epsilon", 1e-5)))
        w_name = unique_name(conv.input[1] + "_bn_folded", taken)
        b_name = unique_name(bn.output[0] + "_bn_folded_bias", taken)
        new_initializers.append(
            numpy_helper.from_array(
                (w.astype(np.float64) * factor.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32), w_name
            )
        )
        new_initializers.append(numpy_helper.from_array(((bias - mean) * factor + shift).astype(np.float32), b_name))
        view.set_inputs(conv, [conv.input[0], w_name, b_name])
        view.set_outputs(conv, [bn.output[0], *conv.output[1:]])
        removed.add(id(bn))
    if not removed:
        return model
    view.replace_nodes(removed)
    for tensor in new_initializers:
        view.add_initializer(tensor)
    view.drop_unused_initializers()
    return model


def constants_to_initializers(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Constant nodes (dense values) become initializers of the same name, so that every
    pass sees one kind of constant."""
    graph = model.graph
    view = view_of(model, weights)
    removed: set[int] = set()
    tensors: list[onnx.TensorProto] = []
    for node in graph.node:
        if not is_op(node, "Constant") or node.output[0] in view.initializers:
            continue
        try:
            tensor = constant_node_tensor(node)
        except KeyError:
            continue
        copy = onnx.TensorProto()
        copy.CopyFrom(tensor)
        copy.name = node.output[0]
        tensors.append(copy)
        removed.add(id(node))
    if removed:
        view.replace_nodes(removed)
        for tensor in tensors:
            view.add_initializer(tensor)
    return model


PASSES = [
    constants_to_initializers,
    eliminate_identities,
    fold_static_shapes,
    fold_constants,
    simplify_casts,
    fold_transposes,
    fold_reshapes,
    cancel_squeeze_unsqueeze,
    fold_batch_norm_into_conv,
    eliminate_dead_nodes,
]
