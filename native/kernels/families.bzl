"""Every kernel implementation family in the build, one label per family.

A family is added here when it is created (see kernel_family.bzl); the Python module,
the inventory and the benchmarks all take the list from this one place.
"""

KERNEL_FAMILIES = [
    "//native/kernels/controlflow",
    "//native/kernels/gemm:gemm",
    "//native/kernels/quantized:quantized",
    "//native/kernels/conv:conv",
    "//native/kernels/transpose:transpose",
]
