"""ModelProto -> native Graph: loading, function inlining, shape inference, and the walk
that hands every node, attribute, initializer and declared type to the native side."""

import os
from typing import Any

import numpy as np
import onnx
import onnx.inliner
import onnx.shape_inference
from google.protobuf.message import DecodeError
from onnx import AttributeProto, TensorProto, numpy_helper
from onnx.onnx_cpp2py_export import defs as _onnx_defs

from onnx_light import _native
from onnx_light._values import encode_array, numpy_dtype_of


def load_model_and_weights(
    model: str | os.PathLike | bytes | bytearray | memoryview | onnx.ModelProto,
    source_files: list[tuple] | None = None,
    hash_every_file: bool = False,
) -> tuple[onnx.ModelProto, _native.LoadedModel | None]:
    """(ModelProto, weights) from a path, serialized bytes or a ModelProto.

    Paths and bytes are parsed natively (_native.load_model_file / load_model_bytes): the
    main graph's initializers above _INFERENCE_DATA_LIMIT_ELEMENTS stay native in `weights`
    (a _native.LoadedModel: borrowed from the bytes, or read once from the model and external
    data files, never copied through Python; the files may change once the load returned),
    and the ModelProto keeps their name, type and dims without a
    payload. A ModelProto is copied (preparing it changes it: never the caller's) and has no
    weights (None). InvalidArgument if malformed. `source_files`, when a list, receives what
    LoadedModel.source_files says of every file the native load read (path, size, device,
    inode, mtime_ns, ctime_ns, fingerprint): a fingerprint of the files written less than
    _HASH_FILES_NEWER_THAN_NS before, or of every file with `hash_every_file`.
    """
    newer_than = -1 if hash_every_file else _HASH_FILES_NEWER_THAN_NS
    weights = None
    if isinstance(model, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
    elif isinstance(model, (bytes, bytearray, memoryview)):
        # Immutable bytes are borrowed in place (the session keeps them as its source anyway);
        # a bytearray or memoryview, which may change, is copied.
        borrow = isinstance(model, bytes)
        weights = _native.load_model_bytes(bytes(model), "", _INFERENCE_DATA_LIMIT_ELEMENTS, borrow, newer_than)
        proto = _skeleton(weights, "the bytes are not a serialized ONNX model")
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no ONNX model at {path!r}")
        weights = _native.load_model_file(path, _INFERENCE_DATA_LIMIT_ELEMENTS, newer_than)
        proto = _skeleton(weights, f"{path!r} is not an ONNX model")
    else:
        raise TypeError(f"model must be a path, bytes or onnx.ModelProto, not {type(model).__name__}")
    if source_files is not None and weights is not None:
        source_files.extend(weights.source_files)
    if not proto.HasField("graph") or (not proto.graph.node and not proto.graph.output):
        raise _native.InvalidArgument("the model has no graph (empty or malformed model)")
    if proto.ir_version <= 0:
        raise _native.InvalidArgument(f"the model declares IR version {proto.ir_version}; malformed model")
    return proto, (weights if weights is not None and len(weights) else None)


# Model files (and external data files) written less than this long before a session loads
# them have their bytes fingerprinted for pickling's check; older ones are told apart from a
# later version by their identity and times (native/loader/model_loader.h, LoadOptions).
_HASH_FILES_NEWER_THAN_NS = 50_000_000


def _skeleton(weights, what):
    try:
        return onnx.load_model_from_string(weights.skeleton)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise _native.InvalidArgument(f"{what}: {e}") from None


def _has_payload(tensor):
    return bool(
        tensor.raw_data
        or tensor.external_data
        or any(
            len(getattr(tensor, field))
            for field in ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
        )
    )


def held_natively(tensor: onnx.TensorProto, weights: _native.LoadedModel | None) -> bool:
    """Whether initializer `tensor` (a TensorProto) is one whose payload `weights` holds."""
    return weights is not None and tensor.name in weights and not _has_payload(tensor)


def weight_array(tensor: onnx.TensorProto, weights: _native.LoadedModel | None) -> np.ndarray:
    """The value of an initializer as a numpy array: a read-only view of the native bytes when
    `weights` holds it, else decoded from the TensorProto."""
    if weights is None or not held_natively(tensor, weights):
        return numpy_helper.to_array(tensor)
    element_type, dims = weights.describe(tensor.name)
    return weights.bytes_view(tensor.name).view(numpy_dtype_of(element_type)).reshape(dims)


def with_weights(proto: onnx.ModelProto, weights: _native.LoadedModel | None) -> onnx.ModelProto:
    """proto with the payloads `weights` holds put back as raw_data (a copy; proto itself
    when there is nothing to put back): a self-contained model, for pickling."""
    if weights is None or not any(held_natively(t, weights) for t in proto.graph.initializer):
        return proto
    full = onnx.ModelProto()
    full.CopyFrom(proto)
    for t in full.graph.initializer:
        if held_natively(t, weights):
            t.raw_data = weights.bytes_view(t.name).tobytes()
    return full


# ------------------------------------------------------------------------------ validation
# What ONNX's checker rejects before anything runs, with messages that name the op, the
# node and the offending value. The bounds are what the onnx package this build pins
# knows: a model from a newer standard may mean something this runtime cannot honour.


def _known_opset_ranges():
    """domain ("" = ai.onnx) -> (lowest, highest) opset version the onnx package defines."""
    ranges = dict(_onnx_defs.schema_version_map())
    ranges[""] = (1, onnx.defs.onnx_opset_version())
    return ranges


def _node_label(node, index, graph):
    name = f"'{node.name}'" if node.name else f"#{index}"
    where = f" in graph '{graph.name}'" if graph.name else ""
    domain = f"{node.domain}." if node.domain and node.domain != "ai.onnx" else ""
    return f"{domain}{node.op_type} node {name}{where}"


def _check_arity(node, label, schema):
    """Input and output counts against the schema's min/max, and no required (single)
    input left empty: what onnx.checker's node verification enforces."""
    n_in, n_out = len(node.input), len(node.output)
    if not schema.min_input <= n_in <= schema.max_input:
        bound = (
            f"{schema.min_input}"
            if schema.min_input == schema.max_input
            else (
                f"{schema.min_input} to {schema.max_input}"
                if schema.max_input < 2**31 - 1
                else f"at least {schema.min_input}"
            )
        )
        raise _native.InvalidArgument(
            f"{label}: {n_in} inputs given, {node.op_type}-{schema.since_version} takes {bound}"
        )
    if not schema.min_output <= n_out <= schema.max_output:
        bound = (
            f"{schema.min_output}"
            if schema.min_output == schema.max_output
            else (
                f"{schema.min_output} to {schema.max_output}"
                if schema.max_output < 2**31 - 1
                else f"at least {schema.min_output}"
            )
        )
        raise _native.InvalidArgument(
            f"{label}: {n_out} outputs given, {node.op_type}-{schema.since_version} produces {bound}"
        )
    single = onnx.defs.OpSchema.FormalParameterOption.Single
    for i, name in enumerate(node.input):
        formal = schema.inputs[min(i, len(schema.inputs) - 1)] if schema.inputs else None
        if not name and formal is not None and formal.option == single:
            raise _native.InvalidArgument(f"{label}: required input {i} ('{formal.name}') is empty")


_KNOWN_ELEMENT_TYPES = frozenset(onnx.helper.get_all_tensor_dtypes()) - {TensorProto.UNDEFINED}


def _check_element_types(type_proto, what):
    """A declared input type names real element types (what a feed is checked against): not
    0 (undefined) nor a number this onnx does not know."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        elem = getattr(type_proto, which).elem_type
        if elem not in _KNOWN_ELEMENT_TYPES:
            raise _native.InvalidArgument(
                f"{what} declares element type {elem}, which is "
                f"{'undefined' if elem == 0 else 'not an ONNX element type'}"
            )
    elif which in ("sequence_type", "optional_type"):
        _check_element_types(getattr(type_proto, which).elem_type, what)
    elif which == "map_type":
        if type_proto.map_type.key_type not in _KNOWN_ELEMENT_TYPES:
            raise _native.InvalidArgument(f"{what} declares map key type {type_proto.map_type.key_type}")
        _check_element_types(type_proto.map_type.value_type, what)


def _check_einsum_equation(node, label):
    """Einsum's equation: terms of letters (one '...' at most) separated by commas, then at
    most one '->' and an output term. Checked before onnx's shape inference, which never
    returns for some malformed equations (onnx 1.23: 'bij<,bjk->bik', 'ij,jk-->ik')."""
    equation = next((a.s for a in node.attribute if a.name == "equation"), b"")
    text = equation.decode("utf-8", errors="replace").replace(" ", "")
    inputs, arrow, output = text.partition("->")
    if "->" in output:
        raise _native.InvalidArgument(f"{label}: einsum equation {text!r} has more than one '->'")
    for term in inputs.split(",") + ([output] if arrow else []):
        rest = term.replace("...", "", 1)
        bad = next((c for c in rest if not ("a" <= c <= "z" or "A" <= c <= "Z")), None)
        if bad is not None:
            raise _native.InvalidArgument(
                f"{label}: unexpected character {bad!r} in einsum term {term!r} of equation {text!r}"
            )


def _check_text(text, what):
    """Names reach native code as UTF-8: a name protobuf hands over as undecodable bytes (or
    a str with surrogate escapes) is refused here rather than failing as std::bad_cast in the
    binding."""
    if isinstance(text, bytes):
        raise _native.InvalidArgument(f"{what} {text!r} is not valid UTF-8")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _native.InvalidArgument(
            f"{what} {text.encode('utf-8', 'backslashreplace').decode()!r} is not valid UTF-8"
        ) from None


def validate_model(proto: onnx.ModelProto) -> None:
    """InvalidArgument for what ONNX rejects before anything runs: an IR version or an opset
    newer than the onnx package knows, a node whose input/output count its schema does not
    allow, and a name defined twice (initializers, graph inputs, node outputs), in the main
    graph and every subgraph."""
    if proto.ir_version > onnx.IR_VERSION:
        raise _native.InvalidArgument(
            f"the model declares IR version {proto.ir_version}; this runtime knows IR versions up to "
            f"{onnx.IR_VERSION} (onnx {onnx.__version__})"
        )
    known = _known_opset_ranges()
    opsets: dict[str, int] = {}
    for imp in proto.opset_import:
        _check_text(imp.domain, "an opset import's domain")
        domain = "" if imp.domain == "ai.onnx" else imp.domain
        if domain in opsets and opsets[domain] != imp.version:
            raise _native.InvalidArgument(
                f"the model imports domain '{imp.domain or 'ai.onnx'}' twice "
                f"(opsets {opsets[domain]} and {imp.version})"
            )
        opsets[domain] = imp.version
        if domain in known:
            low, high = known[domain]
            if not low <= imp.version <= high:
                raise _native.InvalidArgument(
                    f"the model imports opset {imp.version} of domain '{imp.domain or 'ai.onnx'}'; this runtime "
                    f"knows opsets {low} to {high} of it (onnx {onnx.__version__})"
                )
    schemas = {}

    def schema_for(node):
        domain = "" if node.domain == "ai.onnx" else node.domain
        key = (node.op_type, domain)
        if key not in schemas:
            try:
                schemas[key] = onnx.defs.get_schema(node.op_type, opsets[domain], domain) if domain in opsets else None
            except onnx.defs.SchemaError:
                schemas[key] = None  # no such op at this opset: the kernel lookup says so (NotImplemented)
        return schemas[key]

    def check_names(graph):
        # One encode of every name joined (a bytes name fails the join): the name-by-name
        # walk below, which says which name is wrong, runs only when this fails.
        texts = [graph.name]
        for infos in (graph.input, graph.output, graph.value_info, graph.initializer):
            texts.extend(vi.name for vi in infos)
        for node in graph.node:
            texts += (node.op_type, node.domain, node.name, *node.input, *node.output)
            texts.extend(a.name for a in node.attribute)
        try:
            "\0".join(texts).encode("utf-8")
            return
        except (TypeError, UnicodeEncodeError):
            pass
        _check_text(graph.name, "a graph name")
        where = f"graph '{graph.name}'"
        for kind, infos in (
            ("input", graph.input),
            ("output", graph.output),
            ("value_info", graph.value_info),
            ("initializer", graph.initializer),
        ):
            for vi in infos:
                _check_text(vi.name, f"{where}: {kind} name")
        for index, node in enumerate(graph.node):
            for text, what in (
                [(node.op_type, "op type"), (node.domain, "domain"), (node.name, "node name")]
                + [(n, "input name") for n in node.input]
                + [(n, "output name") for n in node.output]
                + [(a.name, "attribute name") for a in node.attribute]
            ):
                _check_text(text, f"{where}: node #{index}: {what}")

    def visit(graph):
        check_names(graph)
        defined = {}

        def define(name, what):
            if name in defined:
                raise _native.InvalidArgument(
                    f"graph '{graph.name}': '{name}' is defined twice: as {defined[name]} and as {what}"
                )
            defined[name] = what

        inputs = set()
        for vi in graph.input:
            if vi.name in inputs:
                raise _native.InvalidArgument(f"graph '{graph.name}': input '{vi.name}' is declared twice")
            inputs.add(vi.name)
            if graph is proto.graph:  # a subgraph's inputs may leave their types to inference
                _check_element_types(vi.type, f"graph '{graph.name}': input '{vi.name}'")
        initializers = set()
        for init in list(graph.initializer) + [sp.values for sp in graph.sparse_initializer]:
            if init.name in initializers:
                raise _native.InvalidArgument(f"graph '{graph.name}': initializer '{init.name}' is defined twice")
            initializers.add(init.name)
        for name in inputs | initializers:  # an initializer may give a graph input its default
            define(name, "a graph input" if name in inputs else "an initializer")
        for index, node in enumerate(graph.node):
            label = _node_label(node, index, graph)
            for name in node.output:
                if name:
                    define(name, f"output of {label}")
            schema = schema_for(node)
            if schema is not None:
                _check_arity(node, label, schema)
            if node.op_type == "Einsum" and node.domain in ("", "ai.onnx"):
                _check_einsum_equation(node, label)
            for a in node.attribute:
                if a.type == AttributeProto.GRAPH:
                    visit(a.g)
                for g in a.graphs:
                    visit(g)

    visit(proto.graph)


# Initializers of more elements than this reach shape inference as typed graph inputs, not
# as data: inference only needs their types and shapes (data it reads, such as Reshape's
# target shape, is small), and passing the weights would serialise and parse the whole
# model twice (70% of creating a session on a 50 MB model).
_INFERENCE_DATA_LIMIT_ELEMENTS = 1 << 14


def _elements(tensor):
    count = 1
    for d in tensor.dims:
        count *= d
    return count


def _has_subgraphs(graph):
    return any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for n in graph.node for a in n.attribute)


def _infer(proto, nodes=True):
    """Adds inferred value types to proto, which the caller owns (it is changed in place):
    value_info and the outputs' types, and the nodes (whose subgraphs get theirs) unless
    `nodes` is False and no node has a subgraph: the rewrites' rounds keep their index of
    the nodes across an inference that only refreshes value types."""
    large = {i.name: i for i in proto.graph.initializer if _elements(i) > _INFERENCE_DATA_LIMIT_ELEMENTS}
    light = proto
    if large and not any(_has_payload(i) for i in large.values()):
        # Held natively (load_model_and_weights): the model is small, one serialization
        # copies it faster than field by field, and the large initializers (names, types,
        # dims) leave the copy for typed inputs.
        light = onnx.ModelProto()
        light.ParseFromString(proto.SerializeToString())
        initializers = light.graph.initializer
        for index in range(len(initializers) - 1, -1, -1):
            if initializers[index].name in large:
                del initializers[index]
        declared = {i.name for i in light.graph.input}
        light.graph.input.extend(
            onnx.helper.make_tensor_value_info(i.name, i.data_type, list(i.dims))
            for i in large.values()
            if i.name not in declared
        )
    elif large:
        light = onnx.ModelProto()
        for field, value in proto.ListFields():
            if field.name != "graph":
                _assign(light, field, value)
        for field, value in proto.graph.ListFields():
            if field.name == "initializer":
                light.graph.initializer.extend(i for i in value if i.name not in large)
            else:
                _assign(light.graph, field, value)
        declared = {i.name for i in light.graph.input}
        light.graph.input.extend(
            onnx.helper.make_tensor_value_info(i.name, i.data_type, list(i.dims))
            for i in large.values()
            if i.name not in declared
        )
    try:
        inferred = onnx.shape_inference.infer_shapes(light, strict_mode=False)
    except Exception:  # noqa: BLE001  inference is an optimisation; the kernels check for real
        return proto
    # What inference writes: value_info, output types, and (in subgraphs) the nodes' graphs.
    written = ("value_info", "output", "node") if nodes or _has_subgraphs(proto.graph) else ("value_info", "output")
    for name in written:
        del getattr(proto.graph, name)[:]
        getattr(proto.graph, name).extend(getattr(inferred.graph, name))
    return proto


def _assign(message, field, value):
    """message.<field> = value for a field of any kind (repeated, message or scalar)."""
    if hasattr(value, "CopyFrom"):
        getattr(message, field.name).CopyFrom(value)
    elif hasattr(value, "extend"):  # repeated (strings and bytes have no extend)
        getattr(message, field.name).extend(value)
    else:
        setattr(message, field.name, value)


_KERNEL_RANGES = None


def _kernel_ranges():
    """(domain, op) -> [(since, end)] of the native registrations (end None = open); fixed
    once the extension has loaded, so computed once."""
    global _KERNEL_RANGES
    if _KERNEL_RANGES is not None:
        return _KERNEL_RANGES
    ranges = {}
    for k in _native.registered_kernels():
        domain = "" if k.domain == "ai.onnx" else k.domain
        end = None if k.end_version < 0 else k.end_version
        ranges.setdefault((domain, k.op), []).append((k.since_version, end))
    _KERNEL_RANGES = ranges
    return ranges


def _ops_without_kernel(proto, ranges, write_defaults=False):
    """(domain, op) of nodes, subgraphs included, that no kernel serves at the model's opset.
    With write_defaults, those nodes get their schema's attribute defaults written out: the
    inliner resolves a body's attribute references only against attributes the node carries."""
    opsets = {("" if i.domain == "ai.onnx" else i.domain): i.version for i in proto.opset_import}
    missing = set()

    def visit(graph):
        for node in graph.node:
            domain = "" if node.domain == "ai.onnx" else node.domain
            opset = opsets.get(domain)
            served = any(
                since <= (opset or 0) and (end is None or opset <= end)
                for since, end in ranges.get((domain, node.op_type), [])
            )
            if not served and opset is not None:
                missing.add((domain, node.op_type))
                if write_defaults:
                    _write_attribute_defaults(node, domain, opset)
            for a in node.attribute:
                if a.type == AttributeProto.GRAPH:
                    visit(a.g)
                for g in a.graphs:
                    visit(g)

    visit(proto.graph)
    return missing


def _write_attribute_defaults(node, domain, opset):
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, domain)
    except onnx.defs.SchemaError:
        return
    present = {a.name for a in node.attribute}
    for name, attribute in schema.attributes.items():
        if name not in present and attribute.default_value.type != AttributeProto.UNDEFINED:
            default = node.attribute.add()
            default.CopyFrom(attribute.default_value)
            default.name = name


def _expand_functions_without_kernels(proto):
    """Replaces ops that no kernel serves by their ONNX function bodies, where the standard
    defines one (SoftmaxCrossEntropyLoss, CenterCropPad, ...): onnx's own inliner expands
    them, repeatedly since a body may use other such ops."""
    ranges = _kernel_ranges()
    for round_ in range(4):
        missing = _ops_without_kernel(proto, ranges)
        if not any(_has_function(op, domain, proto) for domain, op in missing):
            break
        if round_ == 0:  # the attribute defaults go into a copy, never the caller's model
            original, proto = proto, onnx.ModelProto()
            proto.CopyFrom(original)
        _ops_without_kernel(proto, ranges, write_defaults=True)
        try:
            expanded = onnx.inliner.inline_selected_functions(proto, sorted(missing), inline_schema_functions=True)
        except Exception:  # noqa: BLE001  no body, or one onnx cannot build: the op stays, and fails as NotImplemented
            break
        if expanded.graph == proto.graph:
            break
        proto = _infer(expanded)
    return proto


def _has_function(op, domain, proto):
    opset = next((i.version for i in proto.opset_import if (i.domain or "") == domain), None)
    try:
        schema = onnx.defs.get_schema(op, opset, domain)
    except (onnx.defs.SchemaError, TypeError):
        return False
    return schema.has_function or schema.has_context_dependent_function


def prepare_model(proto: onnx.ModelProto) -> onnx.ModelProto:
    """Inlines model-local functions, expands standard functions that no kernel serves, and
    adds inferred value types (best effort)."""
    if proto.functions:
        proto = onnx.inliner.inline_local_functions(proto)
    proto = _infer(proto)
    return _expand_functions_without_kernels(proto)


def describe_type(type_proto: onnx.TypeProto) -> tuple[Any, list | None]:
    """(encoded type, dims or None) of a TypeProto; see bind_session.cc for the encoding."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        t = type_proto.tensor_type
        dims = None
        if t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        return ("tensor", t.elem_type), dims
    if which == "sequence_type":
        return ("sequence", describe_type(type_proto.sequence_type.elem_type)[0]), None
    if which == "optional_type":
        return ("optional", describe_type(type_proto.optional_type.elem_type)[0]), None
    if which == "map_type":
        m = type_proto.map_type
        return ("map", m.key_type, describe_type(m.value_type)[0]), None
    return None, None


def _sparse_to_dense(sparse):
    values = numpy_helper.to_array(sparse.values)
    indices = numpy_helper.to_array(sparse.indices).astype(np.int64)
    dims = tuple(sparse.dims)
    dense = np.zeros(int(np.prod(dims, dtype=np.int64)), dtype=values.dtype)
    if indices.ndim == 2:  # [nnz, rank] coordinates
        indices = np.ravel_multi_index(tuple(indices.T), dims) if indices.size else indices.reshape(-1)
    dense[indices.reshape(-1)] = values.reshape(-1)
    return dense.reshape(dims)


def _tensor(proto, base_dir):
    count = 1
    for d in proto.dims:
        count *= d
    if any(d < 0 for d in proto.dims) or count >= 2**63:
        raise _native.InvalidArgument(
            f"tensor '{proto.name}' has shape {list(proto.dims)}, whose element count is negative or overflows int64"
        )
    try:
        array = numpy_helper.to_array(proto, base_dir=base_dir)
    except (ValueError, TypeError, OSError) as e:
        raise _native.InvalidArgument(f"tensor '{proto.name}' (shape {list(proto.dims)}) cannot be read: {e}") from None
    return encode_array(array)


class GraphBuilder:
    def __init__(self, opsets: dict[str, int], base_dir: str = "", weights: _native.LoadedModel | None = None) -> None:
        self.opsets = opsets
        self.base_dir = base_dir
        self.weights = weights  # initializers of the main graph held natively (load_model_and_weights)
        self.main_graph: onnx.GraphProto | None = None

    def attribute(self, a: onnx.AttributeProto) -> tuple[str, int, Any]:
        T = AttributeProto
        if a.ref_attr_name:
            raise _native.InvalidArgument(f"attribute '{a.name}' refers to '{a.ref_attr_name}' outside a function")
        value = {
            T.FLOAT: lambda: a.f,
            T.INT: lambda: a.i,
            T.STRING: lambda: a.s.decode("utf-8", errors="replace"),
            T.TENSOR: lambda: _tensor(a.t, self.base_dir),
            T.GRAPH: lambda: self.graph(a.g),
            T.FLOATS: lambda: list(a.floats),
            T.INTS: lambda: list(a.ints),
            T.STRINGS: lambda: [s.decode("utf-8", errors="replace") for s in a.strings],
            T.TENSORS: lambda: [_tensor(t, self.base_dir) for t in a.tensors],
            T.GRAPHS: lambda: [self.graph(g) for g in a.graphs],
            T.SPARSE_TENSOR: lambda: encode_array(_sparse_to_dense(a.sparse_tensor)),
            T.SPARSE_TENSORS: lambda: [encode_array(_sparse_to_dense(s)) for s in a.sparse_tensors],
            T.TYPE_PROTO: lambda: describe_type(a.tp)[0],
        }.get(a.type)
        if value is None:
            raise _native.InvalidArgument(f"attribute '{a.name}' has unsupported type {a.type}")
        return (a.name, int(a.type), value())

    def graph(self, proto: onnx.GraphProto) -> _native.Graph:
        g = _native.Graph()
        g.name = proto.name
        for domain, version in self.opsets.items():
            g.set_opset(domain, version)
        for vi in proto.input:
            g.add_input(vi.name, *describe_type(vi.type))
        for vi in proto.output:
            g.add_output(vi.name, *describe_type(vi.type))
        for vi in proto.value_info:
            g.add_value_info(vi.name, *describe_type(vi.type))
        weights = self.weights if proto is self.main_graph else None  # subgraphs keep theirs
        for init in proto.initializer:
            if weights is not None and held_natively(init, weights):
                weights.add_to_graph(g, init.name)
            else:
                g.add_initializer(init.name, _tensor(init, self.base_dir))
        for sparse in proto.sparse_initializer:
            g.add_initializer(sparse.values.name, encode_array(_sparse_to_dense(sparse)))
        for node in proto.node:
            attributes = [self.attribute(a) for a in node.attribute]
            g.add_node(node.op_type, node.domain, node.name, list(node.input), list(node.output), attributes)
        return g


def build_graph(
    proto: onnx.ModelProto, base_dir: str = "", weights: _native.LoadedModel | None = None
) -> _native.Graph:
    """The native Graph of a (prepared) ModelProto; initializers `weights` holds enter it
    natively (see load_model_and_weights)."""
    opsets = {}
    for imp in proto.opset_import:
        opsets[imp.domain] = imp.version
    builder = GraphBuilder(opsets, base_dir, weights)
    builder.main_graph = proto.graph
    return builder.graph(proto.graph)
