"""What every rewrite pass reads of the top-level graph (GraphView), and the few edits they
share. Passes rewrite the top-level graph only; a value that a control-flow subgraph reads
from the outer scope is never renamed or removed (GraphView.pinned), so subgraphs stay
valid without being rewritten."""

import collections
import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

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


# What building and refreshing the index costs, counted (never timed): "views" indexes
# built from scratch, "shape_inferences" whole-model shape inferences run for the rewrites.
# Tests read them; nothing else does.
COUNTS: collections.Counter[str] = collections.Counter()

# When true, every shared index is compared with a fresh one after each pass of a round
# (tests/rewrite_checks.py turns it on): a pass that edits behind the index's back fails.
CHECK_INDEX = False


class GraphView:
    """The index every rewrite pass reads: producers, consumers, initializers, declared or
    inferred value types, opsets, names read by subgraphs (pinned) of model.graph.

    One index serves a whole optimisation round (see shared_view and view_of): a pass takes
    it with `view_of(model, weights)` and edits the graph only through its methods
    (replace_nodes, set_inputs, set_outputs, rename_input, add_initializer,
    drop_unused_initializers, and bypass below), which edit model.graph in place and update
    the index, so the next pass reads it without rebuilding anything. Node objects keep
    their identity across edits (the index holds them; removed and inserted nodes come and
    go one by one). Value types are those of the round's shape inference; a rewrite keeps a
    name's meaning, so they stay right for every name that survives.

    A new pass: `view = view_of(model, weights)`, read view.producer / view.consumers /
    view.constant() / view.shape(), build the replacement nodes, then
    `view.replace_nodes(removed_ids, {id(anchor): [new nodes]})` and
    `view.drop_unused_initializers()`. A pass that builds its own GraphView, or edits
    model.graph with the free functions below, still works (the shared index is read again
    after it: a cost, not an error); one that edits node inputs or outputs in place by hand
    must call `view.rebuild()` afterwards."""

    def __init__(self, model: onnx.ModelProto, weights: _native.LoadedModel | None, infer_shapes: bool = False) -> None:
        self.model, self.graph, self.weights = model, model.graph, weights
        self._infer_shapes = infer_shapes
        # Edits made through the index, and reads from scratch: a round that made neither
        # left the graph as it was (graph_rewrites._Rounds reads them instead of comparing
        # the whole graph before and after).
        self.edits = 0
        self.rebuilds = 0
        self.rebuild()
        shared = getattr(_shared, "view", None)
        if shared is not None and shared.graph is self.graph:
            shared._dirty = True  # edits through this index would not reach the shared one

    def rebuild(self) -> None:
        """Reads model.graph again (after edits made without the index)."""
        COUNTS["views"] += 1
        self.rebuilds += 1
        model, graph = self.model, self.model.graph
        self.graph = graph
        self.inputs = {i.name for i in graph.input}
        self.outputs = {o.name for o in graph.output}
        # Initializers no feed can override.
        self.initializers = {t.name: t for t in graph.initializer if t.name not in self.inputs}
        self.producer: dict[str, onnx.NodeProto] = {}
        self.consumers: dict[str, list[onnx.NodeProto]] = collections.defaultdict(list)
        self._nodes: dict[int, onnx.NodeProto] = {}  # keeps every node's wrapper (and id) alive
        self._taken: set[str] | None = None
        for node in graph.node:
            self._register(node)
        self.pinned = names_read_in_subgraphs(graph)
        source = graph
        if self._infer_shapes:
            try:  # shapes of intermediate values (declared types alone when inference cannot run)
                COUNTS["shape_inferences"] += 1
                source = shape_inference.infer_shapes(model, strict_mode=False).graph
            except Exception:  # noqa: BLE001 (a failure only means fewer rewrites)
                pass
        self.read_types(source)
        self.opsets = {(o.domain or ""): o.version for o in model.opset_import}
        self.opsets[""] = self.opsets.get("ai.onnx", self.opsets.get("", 0))
        self._values: dict[str, np.ndarray | None] = {}
        self._initializer_types: dict[str, tuple[onnx.TensorProto, onnx.TypeProto]] = {}
        self._orphans: set[str] = set()  # names that lost their last reader
        self._sizes = (len(graph.node), len(graph.initializer))
        self._dirty = False

    def read_types(self, graph: onnx.GraphProto | None = None) -> None:
        """Value types from `graph`'s declared inputs, value_info and outputs (model.graph's
        by default: after shape inference wrote fresh ones, the index keeps everything else)."""
        graph = self.graph if graph is None else graph
        self.types: dict[str, onnx.TypeProto] = {}
        for values in (graph.input, graph.value_info, graph.output):
            for vi in values:
                if vi.name not in self.types and vi.type.WhichOneof("value") is not None:
                    self.types[vi.name] = vi.type

    # ------------------------------------------------------------------ reading

    @property
    def read(self) -> set[str]:
        """Every name something reads: a node, a subgraph, the graph's outputs."""
        return {name for name, readers in self.consumers.items() if readers} | self.outputs | self.pinned

    def in_sync(self) -> bool:
        """False when model.graph gained or lost nodes or initializers behind the index, or
        its nodes were rebuilt (copied) behind it."""
        nodes = self.graph.node
        return (
            not self._dirty
            and self.graph is self.model.graph
            and self._sizes == (len(nodes), len(self.graph.initializer))
            and (not nodes or (id(nodes[0]) in self._nodes and id(nodes[-1]) in self._nodes))
        )

    def taken_names(self) -> set[str]:
        """Every name in use (the live set: unique_name adds to it)."""
        if self._taken is None:
            g = self.graph
            self._taken = (
                {t.name for t in g.initializer}
                | self.inputs
                | self.outputs
                | set(self.producer)
                | set(self.consumers)
                | self.pinned
            )
        return self._taken

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

    def type_of(self, name: str) -> onnx.TypeProto | None:
        """The value's TypeProto (an initializer's made from its type and dims, once)."""
        if name in self.initializers:
            t = self.initializers[name]
            made = self._initializer_types.get(name)
            if made is None or made[0] is not t:
                made = (t, helper.make_tensor_type_proto(t.data_type, list(t.dims)))
                self._initializer_types[name] = made
            return made[1]
        return self.types.get(name)

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

    # ------------------------------------------------------------------ editing

    def _register(self, node: onnx.NodeProto) -> None:
        self._nodes[id(node)] = node
        for name in node.output:
            if name:
                self.producer[name] = node
        for name in node.input:
            if name:
                self.consumers[name].append(node)
        if self._taken is not None:
            self._taken.update(node.input)
            self._taken.update(node.output)

    def _unregister(self, node: onnx.NodeProto) -> None:
        self._nodes.pop(id(node), None)
        for name in node.output:
            if name and self.producer.get(name) is node:
                del self.producer[name]
        self._forget_reader(node, list(node.input))

    def _forget_reader(self, node: onnx.NodeProto, names: list[str]) -> None:
        for name in set(names):
            if not name or name not in self.consumers:
                continue
            readers = [n for n in self.consumers[name] if n is not node]
            if readers:
                self.consumers[name] = readers
            else:
                del self.consumers[name]
                self._orphans.add(name)  # dropped later if an unread initializer by then

    def replace_nodes(self, removed: set[int], inserted: dict[int, list[onnx.NodeProto]] | None = None) -> None:
        """Removes the nodes whose id() is in `removed` and puts inserted[id(n)] where node n
        was (n itself removed or not: before it), in model.graph and in the index."""
        inserted = inserted or {}
        if removed or any(inserted.values()):
            self.edits += 1
        nodes = self.graph.node
        for i in range(len(nodes) - 1, -1, -1):
            node = nodes[i]
            key = id(node)
            if key in removed:
                self._unregister(node)
                del nodes[i]
            for k, new in enumerate(inserted.get(key, [])):
                nodes.insert(i + k, new)
                self._register(nodes[i + k])
        self._sizes = (len(nodes), len(self.graph.initializer))

    def set_inputs(self, node: onnx.NodeProto, names: list[str]) -> None:
        """node.input := names."""
        if list(node.input) == list(names):
            return
        self.edits += 1
        self._forget_reader(node, list(node.input))
        del node.input[:]
        node.input.extend(names)
        for name in names:
            if name:
                self.consumers[name].append(node)
        if self._taken is not None:
            self._taken.update(names)

    def set_input(self, node: onnx.NodeProto, index: int, name: str) -> None:
        names = list(node.input)
        names[index] = name
        self.set_inputs(node, names)

    def rename_input(self, node: onnx.NodeProto, old: str, new: str) -> None:
        """Every input slot of `node` reading `old` reads `new`."""
        if old in node.input:
            self.set_inputs(node, [new if v == old else v for v in node.input])

    def set_outputs(self, node: onnx.NodeProto, names: list[str]) -> None:
        """node.output := names."""
        if list(node.output) == list(names):
            return
        self.edits += 1
        for name in node.output:
            if name and self.producer.get(name) is node:
                del self.producer[name]
        del node.output[:]
        node.output.extend(names)
        for name in names:
            if name:
                self.producer[name] = node
        if self._taken is not None:
            self._taken.update(names)

    def add_initializer(self, tensor: onnx.TensorProto) -> None:
        """Appends a copy of `tensor` (a new name) to the graph's initializers."""
        self.edits += 1
        self.graph.initializer.append(tensor)
        self.initializers[tensor.name] = self.graph.initializer[-1]
        self._values.pop(tensor.name, None)
        if self._taken is not None:
            self._taken.add(tensor.name)
        self._sizes = (len(self.graph.node), len(self.graph.initializer))

    def drop_initializers(self, names: set[str]) -> None:
        """Removes the initializers called `names` from the graph and the index."""
        if not names:
            return
        self.edits += 1
        initializers = self.graph.initializer
        for i in range(len(initializers) - 1, -1, -1):  # in place: payloads are not copied
            if initializers[i].name in names:
                del initializers[i]
        for name in names:
            self.initializers.pop(name, None)
            self._values.pop(name, None)
        self._sizes = (len(self.graph.node), len(initializers))

    def drop_unused_initializers(self) -> None:
        """Removes the initializers whose last reader an edit through this index took away
        and that nothing reads now (graph inputs and outputs, subgraphs count as readers).
        Initializers the model declares without reading them stay: the session still checks
        them as the model has them."""
        gone = {
            n for n in self._orphans if n in self.initializers and n not in self.consumers and n not in self.outputs
        }
        self._orphans.clear()
        self.drop_initializers(gone - self.inputs - self.pinned)

    def check(self) -> None:
        """AssertionError unless the index is what a fresh read of model.graph gives."""
        fresh = GraphView.__new__(GraphView)
        fresh.model, fresh.weights, fresh._infer_shapes = self.model, self.weights, False
        fresh.edits = fresh.rebuilds = 0
        saved = COUNTS["views"]
        fresh.rebuild()
        COUNTS["views"] = saved
        assert self.in_sync(), "model.graph changed behind the index"
        assert {k: id(v) for k, v in self.producer.items()} == {k: id(v) for k, v in fresh.producer.items()}
        mine = {k: sorted(map(id, v)) for k, v in self.consumers.items() if v}
        assert mine == {k: sorted(map(id, v)) for k, v in fresh.consumers.items() if v}
        assert set(self.initializers) == set(fresh.initializers)


_shared = threading.local()


@contextlib.contextmanager
def shared_view(
    model: onnx.ModelProto, weights: _native.LoadedModel | None, view: GraphView | None = None
) -> Iterator[GraphView]:
    """Within the block, view_of(model, weights) returns one index: the round's shared index,
    which the passes keep up to date as they edit; `view` when given (an index of this model
    kept from the round before: read again here only if the graph changed behind it), else
    one built here."""
    previous = getattr(_shared, "view", None)
    if view is None or view.model is not model or view.weights is not weights:
        view = GraphView(model, weights)
    elif not view.in_sync():
        view.rebuild()
    _shared.view = view
    try:
        yield _shared.view
    finally:
        _shared.view = previous


def view_of(model: onnx.ModelProto, weights: _native.LoadedModel | None, infer_shapes: bool = False) -> GraphView:
    """The index of model.graph for a pass: the round's shared one (shared_view) when it is
    open on this model, else a new one (with its own shape inference if `infer_shapes`: a
    pass called on its own that needs intermediate shapes)."""
    view = getattr(_shared, "view", None)
    if view is not None and view.model is model and view.weights is weights:
        if not view.in_sync():
            view.rebuild()
        return view
    return GraphView(model, weights, infer_shapes=infer_shapes)


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
            or source in view.initializers
        ):
            return False
        producer = view.producer[source]
        view.set_outputs(producer, [name if out == source else out for out in producer.output])
        for reader in list({id(n): n for n in view.consumers.get(source, [])}.values()):
            view.rename_input(reader, source, name)
        return True
    for reader in list({id(n): n for n in view.consumers.get(name, [])}.values()):
        view.rename_input(reader, name, source)
    return True


# The edits as free functions on the graph (the form passes used before the shared index):
# inside a round they go through the shared index when it is the graph's, so a pass written
# this way keeps the index right; elsewhere they edit the graph directly.


def _shared_for(graph: onnx.GraphProto) -> GraphView | None:
    view = getattr(_shared, "view", None)
    return view if view is not None and view.graph is graph and view.in_sync() else None


def replace_nodes(
    graph: onnx.GraphProto,
    removed: set[int],
    inserted: dict[int, list[onnx.NodeProto]] | None = None,
) -> None:
    """GraphView.replace_nodes on the graph's shared index, or the same edit without one."""
    view = _shared_for(graph)
    if view is not None:
        view.replace_nodes(removed, inserted)
        return
    inserted = inserted or {}
    for i in range(len(graph.node) - 1, -1, -1):
        node = graph.node[i]
        key = id(node)
        if key in removed:
            del graph.node[i]
        for k, new in enumerate(inserted.get(key, [])):
            graph.node.insert(i + k, new)


def rename_inputs(node: onnx.NodeProto, old: str, new: str) -> None:
    """GraphView.rename_input on the shared index holding `node`, or the same edit without one."""
    view = getattr(_shared, "view", None)
    if view is not None and view._nodes.get(id(node)) is node:
        view.rename_input(node, old, new)
        return
    for i, value in enumerate(node.input):
        if value == old:
            node.input[i] = new


def drop_unused_initializers(graph: onnx.GraphProto, before: GraphView) -> None:
    """Removes the initializers that were read when `before` was made and that nothing reads
    now (graph inputs and outputs, subgraphs count as readers)."""
    used = {v for n in graph.node for v in n.input} | {o.name for o in graph.output} | {i.name for i in graph.input}
    used |= names_read_in_subgraphs(graph)
    gone = {t.name for t in graph.initializer if t.name in before.read and t.name not in used}
    view = _shared_for(graph)
    if view is not None:
        view.drop_initializers(gone)
        return
    for i in range(len(graph.initializer) - 1, -1, -1):  # in place: payloads are not copied
        if graph.initializer[i].name in gone:
            del graph.initializer[i]


def add_initializer(graph: onnx.GraphProto, array: np.ndarray, name: str) -> None:
    tensor = numpy_helper.from_array(np.asarray(array), name)
    view = _shared_for(graph)
    if view is not None:
        view.add_initializer(tensor)
    else:
        graph.initializer.append(tensor)


def ensure_opset(model: onnx.ModelProto, domain: str, version: int) -> None:
    """Imports `domain` at `version` unless the model imports it already."""
    if not any((o.domain or "") == domain for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(domain, version))
