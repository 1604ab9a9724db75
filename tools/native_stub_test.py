"""The checked-in stub of the extension is what nanobind.stubgen makes of the built one."""

import difflib
import os

import native_stub


def test_checked_in_stub_matches_the_built_extension():
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    with open(os.path.join(root, native_stub.STUB), encoding="utf-8") as f:
        checked_in = f.read()
    fresh = native_stub.generate()
    diff = "".join(difflib.unified_diff(checked_in.splitlines(True), fresh.splitlines(True), "checked in", "built"))
    assert not diff, f"{native_stub.STUB} is stale: ./bazelw run //tools:update_native_stub\n{diff}"
