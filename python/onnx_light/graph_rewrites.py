"""Graph rewrites applied when a session is created (as ONNX Runtime's graph optimizations
are): each one preserves the model's results up to float rounding and can be switched off
(InferenceSession(..., graph_optimizations=False), or ORT session options with
graph_optimization_level=ORT_DISABLE_ALL).

fold_batch_norm_into_conv: Conv followed by an inference-mode BatchNormalization, both with
constant parameters, becomes one Conv with scaled weights and shifted bias, saving a full
pass over the activation.
"""

import collections

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_light import _native
from onnx_light._model import weight_array


def _constants(graph: onnx.GraphProto) -> dict[str, onnx.TensorProto]:
    """{name: TensorProto} of the initializers that no feed can override."""
    fed = {i.name for i in graph.input}
    return {t.name: t for t in graph.initializer if t.name not in fed}


def _unique(name: str, taken: set[str]) -> str:
    candidate, k = name, 0
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    taken.add(candidate)
    return candidate


def fold_batch_norm_into_conv(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Fuses every foldable Conv -> BatchNormalization pair of the top-level graph, in place."""
    graph = model.graph
    constants = _constants(graph)
    consumers = collections.defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)
    graph_outputs = {o.name for o in graph.output}
    taken = {t.name for t in graph.initializer} | {v for n in graph.node for v in list(n.input) + list(n.output)}
    removed, new_initializers = set(), []
    for conv in graph.node:
        if conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx") or len(conv.input) < 2:
            continue
        y = conv.output[0]
        users = consumers[y]
        if y in graph_outputs or len(users) != 1:
            continue
        bn = users[0]
        if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx") or bn.input[0] != y:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in bn.attribute}
        if attrs.get("training_mode", 0) or any(bn.output[1:]):
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
        factor = scale / np.sqrt(var + float(attrs.get("epsilon", 1e-5)))
        w_name = _unique(conv.input[1] + "_bn_folded", taken)
        b_name = _unique(bn.output[0] + "_bn_folded_bias", taken)
        new_initializers.append(
            numpy_helper.from_array(
                (w.astype(np.float64) * factor.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32), w_name
            )
        )
        new_initializers.append(numpy_helper.from_array(((bias - mean) * factor + shift).astype(np.float32), b_name))
        del conv.input[1:]
        conv.input.extend([w_name, b_name])
        conv.output[0] = bn.output[0]
        removed.add(id(bn))
    if not removed:
        return model
    kept = [n for n in graph.node if id(n) not in removed]
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(new_initializers)
    used = {v for n in graph.node for v in n.input} | graph_outputs | {i.name for i in graph.input}
    still_used = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(still_used)
    return model


def optimize(model: onnx.ModelProto, weights: _native.LoadedModel | None = None) -> onnx.ModelProto:
    """Every rewrite above, in order, on a copy (the caller's model is left as it was).
    `weights`: the initializers held natively (_model.load_model_and_weights), read in place."""
    if not any(n.op_type == "BatchNormalization" for n in model.graph.node):
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return fold_batch_norm_into_conv(copy, weights)
