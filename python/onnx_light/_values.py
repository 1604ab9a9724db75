"""Values across the native boundary: numpy arrays (ml_dtypes for bfloat16, float8, int4,
float4, ...), object arrays of strings, lists (sequences), None (empty optionals) and
dicts (maps) <-> the encoded form python/native_module/bind_session.cc reads and writes."""

import numpy as np
from onnx import helper

STRING = 8  # TensorProto.STRING

# Memoised onnx.helper look-ups: they sit on every run's path.
_ELEMENT_TYPES = {}
_NUMPY_DTYPES = {}


def element_type_of(dtype):
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


def numpy_dtype_of(element_type):
    dtype = _NUMPY_DTYPES.get(element_type)
    if dtype is None:
        dtype = _NUMPY_DTYPES[element_type] = np.dtype(helper.tensor_dtype_to_np_dtype(element_type))
    return dtype


def type_string(element_type):
    """ONNX Runtime's spelling: "tensor(float)", "tensor(bfloat16)"..."""
    return f"tensor({helper.tensor_dtype_to_string(element_type)[len('TensorProto.'):].lower()})"


def encode_array(array):
    if type(array) is not np.ndarray:
        array = np.asarray(array)
    element_type = element_type_of(array.dtype)
    if element_type == STRING:
        items = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in array.reshape(-1)]
        return (STRING, array.shape, items)
    shape = array.shape  # before ascontiguousarray, which makes a 0-d array 1-d
    return (element_type, shape, np.ascontiguousarray(array).reshape(-1).view(np.uint8))


def encode_value(value):
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        keys = list(value.keys())
        return ("map", encode_array(np.array(keys)), encode_array(np.array([value[k] for k in keys])))
    return encode_array(value)


def decode_array(encoded):
    element_type, shape, data = encoded
    if element_type == STRING:
        out = np.empty(len(data), dtype=object)
        out[:] = [b.decode("utf-8", errors="surrogateescape") for b in data]
        return out.reshape(shape)
    return data.view(numpy_dtype_of(element_type)).reshape(shape)


def decode_value(encoded):
    if encoded is None:
        return None
    if isinstance(encoded, list):
        return [decode_value(v) for v in encoded]
    if isinstance(encoded[0], str):
        keys, values = decode_array(encoded[1]), decode_array(encoded[2])
        return dict(zip(keys.tolist(), values))
    return decode_array(encoded)
