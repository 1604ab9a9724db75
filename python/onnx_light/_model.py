"""ModelProto -> native Graph: loading, function inlining, shape inference, and the walk
that hands every node, attribute, initializer and declared type to the native side."""

import os

import numpy as np
import onnx
from onnx import AttributeProto, numpy_helper
from google.protobuf.message import DecodeError

from onnx_light import _native
from onnx_light._values import encode_array


def load_model(model):
    """A ModelProto from a path, serialized bytes or a ModelProto (InvalidArgument if malformed)."""
    if isinstance(model, onnx.ModelProto):
        proto = model
    elif isinstance(model, (bytes, bytearray, memoryview)):
        try:
            proto = onnx.load_model_from_string(bytes(model))
        except (DecodeError, ValueError, RuntimeError) as e:
            raise _native.InvalidArgument(f"the bytes are not a serialized ONNX model: {e}") from None
    elif isinstance(model, (str, os.PathLike)):
        if not os.path.exists(model):
            raise FileNotFoundError(f"no ONNX model at {os.fspath(model)!r}")
        try:
            proto = onnx.load(model)
        except (DecodeError, ValueError, RuntimeError) as e:
            raise _native.InvalidArgument(f"{os.fspath(model)!r} is not an ONNX model: {e}") from None
    else:
        raise TypeError(f"model must be a path, bytes or onnx.ModelProto, not {type(model).__name__}")
    if not proto.HasField("graph") or (not proto.graph.node and not proto.graph.output):
        raise _native.InvalidArgument("the model has no graph (empty or malformed model)")
    if proto.ir_version <= 0:
        raise _native.InvalidArgument(f"the model declares IR version {proto.ir_version}; malformed model")
    return proto


def prepare_model(proto):
    """Inlines model-local functions and adds inferred value types (best effort)."""
    if proto.functions:
        proto = onnx.inliner.inline_local_functions(proto)
    try:
        proto = onnx.shape_inference.infer_shapes(proto, strict_mode=False)
    except Exception:  # noqa: BLE001  inference is an optimisation; the kernels check for real
        pass
    return proto


def describe_type(type_proto):
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
    return encode_array(numpy_helper.to_array(proto, base_dir=base_dir))


class GraphBuilder:
    def __init__(self, opsets, base_dir=""):
        self.opsets = opsets
        self.base_dir = base_dir

    def attribute(self, a):
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

    def graph(self, proto):
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
        for init in proto.initializer:
            g.add_initializer(init.name, _tensor(init, self.base_dir))
        for sparse in proto.sparse_initializer:
            g.add_initializer(sparse.values.name, encode_array(_sparse_to_dense(sparse)))
        for node in proto.node:
            attributes = [self.attribute(a) for a in node.attribute]
            g.add_node(node.op_type, node.domain, node.name, list(node.input), list(node.output), attributes)
        return g


def build_graph(proto, base_dir=""):
    """The native Graph of a (prepared) ModelProto."""
    opsets = {}
    for imp in proto.opset_import:
        opsets[imp.domain] = imp.version
    return GraphBuilder(opsets, base_dir).graph(proto.graph)
