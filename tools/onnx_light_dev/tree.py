"""Loads everything the inventory and the gate look at from one source tree."""

import dataclasses
import os
from typing import Any

import onnx_light

from onnx_light_dev import coverage as coverage_lib
from onnx_light_dev import environment
from onnx_light_dev import exemptions as exemptions_lib
from onnx_light_dev import inventory as inventory_lib

EXEMPTIONS_DIR = "exemptions"


@dataclasses.dataclass
class Tree:
    inventory: inventory_lib.Inventory
    exemption_files: dict[str, exemptions_lib.ExemptionFile]
    coverage_text: str | None  # None when the report does not exist


def read_coverage(root: str) -> str | None:
    try:
        with open(os.path.join(root, coverage_lib.COVERAGE_PATH), encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def write_coverage(root: str, text: str) -> str:
    """Writes the coverage report below root; returns its path."""
    target = os.path.join(root, coverage_lib.COVERAGE_PATH)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return target


def load_tree(
    root: str,
    registry: list[dict[str, Any]],
    exemptions_root: str | None = None,
    manifest_files: list[str] | None = None,
) -> Tree:
    """Inventory from `registry` (registry dicts) and the manifests (default: every one
    below root/native/kernels; sources relative to root); exemptions and coverage from
    exemptions_root (default: root)."""
    exemptions_root = exemptions_root or root
    if manifest_files is None:
        manifest_files = inventory_lib.find_manifests(root)
    families, problems = inventory_lib.load_manifests(manifest_files, root)
    inventory = inventory_lib.build_kernel_inventory(registry, families, problems)
    exemption_files = exemptions_lib.load_exemption_files(os.path.join(exemptions_root, EXEMPTIONS_DIR))
    return Tree(inventory, exemption_files, read_coverage(exemptions_root))


def load_current_tree(bazel_query: bool = True, exemptions_from_workspace: bool = False) -> tuple[Tree, list[str]]:
    """The tree the tools run on: the runfiles (manifests, sources, exemptions, coverage)
    and the linked native registry. Under `bazel run`, also cross-checks the families with
    `bazel query`. Returns (Tree, notes)."""
    workspace = environment.workspace_dir()
    tree = load_tree(
        environment.runfiles_root(),
        [k.to_dict() for k in onnx_light.registered_kernels()],
        exemptions_root=workspace if exemptions_from_workspace else None,
    )
    notes = []
    if bazel_query and workspace:
        labels = {f.label for f in tree.inventory.families.values()}
        problems, note = environment.bazel_family_problems(workspace, labels)
        tree.inventory.problems.extend(problems)
        notes.append(note)
    return tree, notes
