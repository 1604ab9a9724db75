"""Every kernel implementation family in the build, one label per family.

A family is added here when it is created (see kernel_family.bzl); the Python module,
the inventory and the benchmarks all take the list from this one place.
"""

KERNEL_FAMILIES = [
    "//native/kernels/attention:attention",
    "//native/kernels/bitcast",
    "//native/kernels/controlflow",
    "//native/kernels/einsum",
    "//native/kernels/elementwise:logical",
    "//native/kernels/elementwise:math_binary",
    "//native/kernels/elementwise:math_unary",
    "//native/kernels/elementwise:where",
    "//native/kernels/gemm:gemm",
    "//native/kernels/loss",
    "//native/kernels/lrn_det",
    "//native/kernels/nms",
    "//native/kernels/normalization",
    "//native/kernels/pooling",
    "//native/kernels/quantization",
    "//native/kernels/random",
    "//native/kernels/reduction",
    "//native/kernels/resize",
    "//native/kernels/signal",
    "//native/kernels/signal:signal_windows",
    "//native/kernels/softmax",
    "//native/kernels/tensor:cast",
    "//native/kernels/tensor:construction",
    "//native/kernels/tensor:shape_metadata",
    "//native/kernels/topk_cumsum",
    "//native/kernels/transpose:transpose",
]
