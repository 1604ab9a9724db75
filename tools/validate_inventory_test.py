"""The merge gate: the real tree's inventory and exemptions agree (see validate_inventory.py)."""

from onnx_light_dev import tree as tree_lib
from onnx_light_dev import validation


def test_the_tree_validates() -> None:
    tree, _ = tree_lib.load_current_tree(bazel_query=False)
    failures = validation.validate(tree.inventory, tree.exemption_files, tree.coverage_text)
    assert not failures, "\n" + validation.report(failures)
