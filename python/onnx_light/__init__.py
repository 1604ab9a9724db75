"""onnx-light: native CPU kernels for ONNX models."""

from onnx_light import _native
from onnx_light._build_info import build_info  # noqa: F401
from onnx_light._native import (  # noqa: F401  (re-exported exception classes)
    Cancelled,
    InternalError,
    InvalidArgument,
    NotImplemented,
    ResourceExhausted,
)
from onnx_light.session import (  # noqa: F401
    CpuExecutionPolicy,
    InferenceSession,
    NodeArg,
    RunOptions,
)


def registered_kernels():
    """Every native kernel registration as a list of dicts (see tools/kernel_inventory)."""
    return _native.registered_kernels()
