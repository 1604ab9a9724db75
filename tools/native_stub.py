"""The type stub of the extension, python/onnx_light/_native.pyi, generated from the built
module by nanobind.stubgen (the bindings declare the types; the stub is checked in and
shipped in the wheel with py.typed).

    ./bazelw run //tools:update_native_stub      # rewrites the checked-in stub

tools/native_stub_test.py fails when the checked-in stub differs from a fresh one.
"""

import os

from absl import app
from nanobind.stubgen import StubGen
from onnx_light import _native

STUB = "python/onnx_light/_native.pyi"


def generate() -> str:
    """The stub of onnx_light._native as nanobind.stubgen writes it: types and docstrings,
    no values (constants such as TUNING_ABI and default arguments read `...`, so that the
    stub changes with the bindings' types, not with their values)."""
    generator = StubGen(module=_native, quiet=True, include_docstrings=True, max_expr_length=0)
    generator.put(_native)
    return generator.get()


def main(argv: list[str]) -> None:
    del argv  # no flags
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if not workspace:
        raise app.UsageError("run through `./bazelw run //tools:update_native_stub` (writes into the workspace)")
    with open(os.path.join(workspace, STUB), "w", encoding="utf-8") as f:
        f.write(generate())
    print(f"wrote {STUB}")


if __name__ == "__main__":
    app.run(main)
