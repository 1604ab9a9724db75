"""Every kernel implementation family in the build, one label per family.

A family is added here when it is created (see kernel_family.bzl); the Python module,
the inventory and the benchmarks all take the list from this one place.
"""

KERNEL_FAMILIES = [
    "//native/kernels/tensor:cast",
    "//native/kernels/tensor:shape_metadata",
    "//native/kernels/tensor:construction",
    "//native/kernels/tensor:gather",
    "//native/kernels/tensor:concat_split",
    "//native/kernels/tensor:slice_expand_tile",
    "//native/kernels/tensor:pad",
    "//native/kernels/tensor:scatter",
    "//native/kernels/tensor:space_depth",
    "//native/kernels/tensor:trilu",
    "//native/kernels/tensor:ordered_selection",
    "//native/kernels/tensor:one_hot",
    "//native/kernels/tensor:reverse_sequence",
    "//native/kernels/controlflow",
    "//native/kernels/sequence",
    "//native/kernels/elementwise:logical",
    "//native/kernels/elementwise:math_binary",
    "//native/kernels/elementwise:math_unary",
    "//native/kernels/elementwise:where",
]
