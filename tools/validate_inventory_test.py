"""The merge gate: the real tree's inventory and exemptions agree (see validate_inventory.py)."""
from onnx_light.tools import tree as tree_lib
from onnx_light.tools import validation


def test_the_tree_validates():
    tree, _ = tree_lib.load_current_tree(bazel_query=False)
    failures = validation.validate(tree.inventory, tree.exemption_files, tree.coverage_text)
    assert not failures, "\n" + validation.report(failures)


def test_the_gate_sees_the_families_of_the_build():
    # The manifests in the runfiles are those of native/kernels/families.bzl: every one
    # must have been found and read (an empty build is allowed, a lost manifest is not).
    tree, _ = tree_lib.load_current_tree(bazel_query=False)
    registered = {k["family"] for k in __import__("onnx_light").registered_kernels()}
    assert set(tree.inventory.families) >= registered
