"""What every rewrite pass reads of the top-level graph (GraphView), and the few edits they
share. Passes rewrite the top-level graph only; a value that a control-flow subgraph reads
from the outer scope is never renamed or removed (GraphView.pinned), so subgraphs stay
valid without being rewritten."""

import collections
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_light import _native
from onnx_light._model import weight_array

if TYPE_CHECKING:
    from typing_extensions import TypeIs

DEFAULT_DOMAINS = ("", "ai.onnx")


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    """The graphs held by the node's attributes (If branches, Loop/Scan bodies)."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def names_read_in_subgraphs(graph: onnx.GraphProto) -> set[str]:
    """Every value name any node of any nested subgraph reads (a superset of the outer-scope
    references, which is what makes it safe)."""
    found: set[str] = set()

    def walk(g: onnx.GraphProto) -> None:
        for n in g.node:
            found.update(n.input)
            for sub in subgraphs(n):
                found.update(o.name for o in sub.output)
                walk(sub)

    for n in graph.node:
        for sub in subgraphs(n):
            found.update(o.name for o in sub.output)
            walk(sub)
    found.discard("")
    return found


class GraphView:
    """Producers, consumers, constants, declared types and opsets of model.graph, as read
    when the view is made (a pass makes a new one after it edits)."""

    def __init__(self, model: onnx.ModelProto, weights: _native.LoadedModel | None) -> None:
        graph = model.graph
        self.model, self.graph, self.weights = model, graph, weights
        self.inputs = {i.name for i in graph.input}
        self.outputs = {o.name for o in graph.output}
        # Initializers no feed can override.
        self.initializers = {t.name: t for t in graph.initializer if t.name not in self.inputs}
        self.producer: dict[str, onnx.NodeProto] = {}
        self.consumers: dict[str, list[onnx.NodeProto]] = collections.defaultdict(list)
        for node in graph.node:
            for name in node.output:
                if name:
                    self.producer[name] = node
            for name in node.input:
                if name:
                    self.consumers[name].append(node)
        self.pinned = names_read_in_subgraphs(graph)
        # Every name something reads: a node, a subgraph, the graph's outputs.
        self.read = set(self.consumers) | self.outputs | self.pinned
        self.types: dict[str, onnx.TypeProto] = {}
        for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
            if vi.type.WhichOneof("value") is not None:
                self.types[vi.name] = vi.type
        self.opsets = {(o.domain or ""): o.version for o in model.opset_import}
        self.opsets[""] = self.opsets.get("ai.onnx", self.opsets.get("", 0))
        self._values: dict[str, np.ndarray | None] = {}

    def taken_names(self) -> set[str]:
        g = self.graph
        return (
            {t.name for t in g.initializer}
            | self.inputs
            | self.outputs
            | {v for n in g.node for v in list(n.input) + list(n.output)}
            | self.pinned
        )

    def constant(self, name: str) -> np.ndarray | None:
        """The value of `name` when it is constant (an initializer no feed overrides, or the
        output of an attribute-valued Constant node), else None."""
        if name in self._values:
            return self._values[name]
        value = None
        if name in self.initializers:
            value = weight_array(self.initializers[name], self.weights)
        elif name in self.producer and self.producer[name].op_type == "Constant" and is_default(self.producer[name]):
            try:
                value = numpy_helper.to_array(constant_node_tensor(self.producer[name]))
            except (ValueError, TypeError, KeyError):
                value = None
        self._values[name] = value
        return value

    def scalar(self, name: str) -> float | None:
        """A constant holding exactly one number, as a float."""
        value = self.constant(name)
        if value is None or value.size != 1 or value.dtype.kind not in "fiu":
            return None
        return float(value.reshape(()))

    def elem_type(self, name: str) -> int | None:
        if name in self.initializers:
            return self.initializers[name].data_type
        t = self.types.get(name)
        if t is not None and t.WhichOneof("value") == "tensor_type" and t.tensor_type.elem_type:
            return t.tensor_type.elem_type
        return None

    def shape(self, name: str) -> list[int | None] | None:
        """Dims of a tensor value (None for a dim that is symbolic or unknown), or None when
        the rank is unknown."""
        if name in self.initializers:
            return list(self.initializers[name].dims)
        t = self.types.get(name)
        if t is None or t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
            return None
        return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]

    def only_reader(self, name: str) -> onnx.NodeProto | None:
        """The one node that reads `name` (once), when nothing else sees it: not a graph
        output, not read by a subgraph. The condition for folding a value into a fused node."""
        readers = list({id(n): n for n in self.consumers.get(name, [])}.values())
        if len(readers) != 1 or name in self.outputs or name in self.pinned:
            return None
        if sum(1 for i in readers[0].input if i == name) != 1:
            return None
        return readers[0]

    def is_private(self, name: str, readers: int) -> bool:
        """Whether exactly `readers` input slots read `name` and nothing else sees it."""
        if name in self.outputs or name in self.pinned:
            return False
        nodes = {id(n): n for n in self.consumers.get(name, [])}.values()
        return sum(sum(1 for i in n.input if i == name) for n in nodes) == readers


def is_default(node: onnx.NodeProto) -> bool:
    return node.domain in DEFAULT_DOMAINS


def is_op(node: onnx.NodeProto | None, *op_types: str) -> "TypeIs[onnx.NodeProto]":
    return node is not None and node.op_type in op_types and is_default(node)


def attribute(node: onnx.NodeProto, name: str, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def constant_node_tensor(node: onnx.NodeProto) -> onnx.TensorProto:
    """The TensorProto a Constant node stands for (KeyError for sparse or unknown forms)."""
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        if a.name == "value":
            return value
        if a.name == "value_float":
            return numpy_helper.from_array(np.array(value, np.float32))
        if a.name == "value_floats":
            return numpy_helper.from_array(np.array(value, np.float32))
        if a.name == "value_int":
            return numpy_helper.from_array(np.array(value, np.int64))
        if a.name == "value_ints":
            return numpy_helper.from_array(np.array(value, np.int64))
        if a.name == "value_string":
            return numpy_helper.from_array(np.array(value, dtype=object))
        if a.name == "value_strings":
            return numpy_helper.from_array(np.array(value, dtype=object))
    raise KeyError(f"Constant node {node.name!r} has no dense value")


def unique_name(base: str, taken: set[str]) -> str:
    candidate, k = base, 0
    while candidate in taken:
        k += 1
        candidate = f"{base}_{k}"
    taken.add(candidate)
    return candidate


def replace_nodes(
    graph: onnx.GraphProto,
    removed: set[int],
    inserted: dict[int, list[onnx.NodeProto]] | None = None,
) -> None:
    """Rebuilds graph.node without the nodes whose id() is in `removed`, putting
    inserted[id(n)] where node n was (n itself removed or not: before it)."""
    inserted = inserted or {}
    kept: list[onnx.NodeProto] = []
    for n in graph.node:
        kept.extend(inserted.get(id(n), []))
        if id(n) not in removed:
            kept.append(n)
    copies = [onnx.NodeProto() for _ in kept]
    for copy, n in zip(copies, kept):
        copy.CopyFrom(n)
    del graph.node[:]
    graph.node.extend(copies)


def bypass(view: GraphView, name: str, source: str) -> bool:
    """Makes every reader of `name` read `source` instead, so that the node producing `name`
    can go. When `name` is a graph output it keeps its name: `source`'s producer is renamed
    to write `name` (possible only when `source` is a private node output). False (nothing
    changed) when neither is possible or a subgraph reads `name`."""
    if name in view.pinned:
        return False
    if name in view.outputs:
        if (
            source in view.outputs
            or source in view.inputs
            or source in view.pinned
            or source not in view.producer
            or source in {t.name for t in view.graph.initializer}
        ):
            return False
        producer = view.producer[source]
        for i, out in enumerate(producer.output):
            if out == source:
                producer.output[i] = name
        for reader in view.consumers.get(source, []):
            rename_inputs(reader, source, name)
        return True
    for reader in view.consumers.get(name, []):
        rename_inputs(reader, name, source)
    return True


def rename_inputs(node: onnx.NodeProto, old: str, new: str) -> None:
    for i, value in enumerate(node.input):
        if value == old:
            node.input[i] = new


def drop_unused_initializers(graph: onnx.GraphProto, before: GraphView) -> None:
    """Removes the initializers that were read when `before` was made and that nothing reads
    now (graph inputs and outputs, subgraphs count as readers). Initializers the model
    declares without reading them stay: the session still checks them as the model has them."""
    used = {v for n in graph.node for v in n.input} | {o.name for o in graph.output} | {i.name for i in graph.input}
    used |= names_read_in_subgraphs(graph)
    for i in range(len(graph.initializer) - 1, -1, -1):  # in place: payloads are not copied
        name = graph.initializer[i].name
        if name in before.read and name not in used:
            del graph.initializer[i]


def add_initializer(graph: onnx.GraphProto, array: np.ndarray, name: str) -> None:
    graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))


def ensure_opset(model: onnx.ModelProto, domain: str, version: int) -> None:
    """Imports `domain` at `version` unless the model imports it already."""
    if not any((o.domain or "") == domain for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(domain, version))
