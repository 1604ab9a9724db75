"""Shared Bazel definitions for Python targets."""

# Targets that need the host CPython (py_test/py_binary, nanobind modules) are skipped by
# `bazel test --config=aarch64 //...` (incompatible target skipping).
HOST_PYTHON_ONLY = ["@platforms//cpu:x86_64"]

def py_pytest(name, srcs, deps = [], data = [], args = [], size = "small", tags = [], **kwargs):
    """A py_test run by pytest over `srcs`; tagged `python` (sanitizer configs skip them)."""
    native.py_test(
        name = name,
        size = size,
        srcs = srcs + ["//tools:pytest_main.py"],
        main = "//tools:pytest_main.py",
        args = ["$(location %s)" % s for s in srcs] + args,
        deps = deps,
        data = data,
        tags = tags + ["python"],
        target_compatible_with = HOST_PYTHON_ONLY,
        python_version = "PY3",
        **kwargs
    )
