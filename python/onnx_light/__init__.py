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
    GraphOptimizationLevel,
    InferenceSession,
    NodeArg,
    RunOptions,
    SessionOptions,
)


def registered_kernels() -> list[_native.KernelRegistration]:
    """Every native kernel registration (domain, op, opset range, family, element types,
    tuning parameters; .to_dict() for plain data). tools/kernel_inventory derives from it."""
    return _native.registered_kernels()
