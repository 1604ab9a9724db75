"""Values across the native boundary: numpy arrays (ml_dtypes for bfloat16, float8, int4,
float4, ...), object arrays of strings, lists (sequences), None (empty optionals) and
dicts (maps) <-> the encoded form python/native_module/bind_session.cc reads and writes."""

from typing import Any

import numpy as np
from onnx import helper

STRING = 8  # TensorProto.STRING

# Memoised onnx.helper look-ups: they sit on every run's path.
_ELEMENT_TYPES: dict[Any, int] = {}
_NUMPY_DTYPES: dict[int, np.dtype] = {}


def element_type_of(dtype: Any) -> int:
    """ONNX element type number of a numpy dtype (ValueError when ONNX has no such type)."""
    try:
        return _ELEMENT_TYPES[dtype]
    except (KeyError, TypeError):
        pass
    dtype = np.dtype(dtype)
    if dtype.kind in ("O", "U", "S"):
        element_type = STRING
    else:
        try:
            element_type = helper.np_dtype_to_tensor_dtype(dtype)
        except (KeyError, ValueError, TypeError) as e:
            raise ValueError(f"numpy dtype {dtype} has no ONNX element type") from e
    _ELEMENT_TYPES[dtype] = element_type
    return element_type


def numpy_dtype_of(element_type: int) -> np.dtype:
    dtype = _NUMPY_DTYPES.get(element_type)
    if dtype is None:
        dtype = _NUMPY_DTYPES[element_type] = np.dtype(helper.tensor_dtype_to_np_dtype(element_type))
    return dtype


def type_string(element_type: int) -> str:
    """ONNX Runtime's spelling: "tensor(float)", "tensor(bfloat16)"..."""
    return f"tensor({helper.tensor_dtype_to_string(element_type)[len('TensorProto.') :].lower()})"


# Element types numpy has natively: such arrays cross as themselves (the native side reads
# their dtype and shape), the others as (element type, shape, bytes).
_NATIVE_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.float32,
        np.float64,
        np.float16,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.bool_,
        np.complex64,
        np.complex128,
    )
)


def encode_array(array: Any) -> tuple:
    if type(array) is not np.ndarray:
        array = np.asarray(array)
    if array.dtype in _NATIVE_DTYPES and array.flags.c_contiguous:
        return array
    element_type = element_type_of(array.dtype)
    if element_type == STRING:
        items = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in array.reshape(-1)]
        return (STRING, array.shape, items)
    shape = array.shape  # before ascontiguousarray, which turns a 0-d array into shape (1,)
    array = np.ascontiguousarray(array)
    return (element_type, shape, array.reshape(-1).view(np.uint8))


def _typed_array(items: Any, element_type: int | None) -> np.ndarray:
    """items as a 1-D array of ONNX element type `element_type` (None: as numpy infers)."""
    if element_type is None:
        return np.array(items)
    if element_type == STRING:
        return np.array([str(i) for i in items], dtype=object)
    return np.array(items, dtype=numpy_dtype_of(element_type))


def encode_value(value: Any, declared: Any = None) -> Any:
    """The encoded form of a feed. `declared` is the graph input's encoded type (see
    _model.describe_type) or None: it picks the key and value types of dicts (maps), so that
    {"a": 1.0} feeds a map(string, float) as float, as ONNX Runtime converts it."""
    if value is None:
        return None
    inner = declared[1] if declared is not None and declared[0] in ("sequence", "optional") else None
    if isinstance(value, (list, tuple)):
        return [encode_value(v, inner) for v in value]
    if isinstance(value, dict):
        key_type = value_type = None
        if declared is not None and declared[0] == "map":
            key_type = declared[1]
            if declared[2] is not None and declared[2][0] == "tensor":
                value_type = declared[2][1] or None
        keys = list(value.keys())
        return (
            "map",
            encode_array(_typed_array(keys, key_type)),
            encode_array(_typed_array([value[k] for k in keys], value_type)),
        )
    if inner is not None:
        return encode_value(value, inner)
    return encode_array(value)


def decode_array(encoded: Any) -> np.ndarray:
    if type(encoded) is np.ndarray:  # numpy has the element type: the native side made it
        return encoded
    element_type, shape, data = encoded
    if element_type == STRING:
        out = np.empty(len(data), dtype=object)
        out[:] = [b.decode("utf-8", errors="surrogateescape") for b in data]
        return out.reshape(shape)
    return data.view(numpy_dtype_of(element_type)).reshape(shape)


def decode_value(encoded: Any) -> Any:
    if type(encoded) is np.ndarray:
        return encoded
    if encoded is None:
        return None
    if isinstance(encoded, list):
        return [decode_value(v) for v in encoded]
    if isinstance(encoded[0], str):
        keys, values = decode_array(encoded[1]), decode_array(encoded[2])
        return dict(zip(keys.tolist(), values.tolist()))  # Python scalars, as ONNX Runtime returns
    return decode_array(encoded)
