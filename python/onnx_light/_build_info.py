"""onnx_light.build_info(): how the installed extension was built and what it runs here."""

import os
from typing import Any

from onnx_light import _native

# Written into the wheel by python/build_wheel.py from Bazel's workspace status (the git
# revision of the tree the wheel was built from); absent when running from Bazel runfiles.
_REVISION_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "REVISION")


def _revision() -> str:
    try:
        with open(_REVISION_FILE, encoding="utf-8") as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown (not an installed wheel)"


def build_info() -> dict[str, Any]:
    """compilation_mode ("opt" for the wheel), optimized, assertions, compiler,
    architecture, isa_compiled (variants in the extension), isa_supported (the best this
    CPU runs), isa_selected (what the kernels use: isa_supported unless capped), isa_cap
    (ONNX_LIGHT_MAX_ISA, if set) and revision (source of the wheel)."""
    info = _native.native_build_info().to_dict()
    info["revision"] = _revision()
    return info
