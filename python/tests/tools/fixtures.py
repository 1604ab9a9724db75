"""Fixture registry (what onnx_light.registered_kernels() would return for the fixture
families in testdata/) and helpers to load the fixture tree."""

import copy
import os
import shutil

from onnx_light_dev import environment
from onnx_light_dev import tree as tree_lib

TESTDATA = "python/tests/tools/testdata"
_MIN_ELEMENTS = {
    "name": "parallel.minimum_elements",
    "type": "int64",
    "default": 32768,
    "minimum": 1,
    "maximum": 1 << 40,
    "meaning": "below: serial",
}


def _def(op, since, end, family, types, tuning=False, calibratable=False):
    return {
        "domain": "ai.onnx",
        "op": op,
        "since_version": since,
        "end_version": end,
        "family": family,
        "element_types": list(types),
        "tuning": [dict(_MIN_ELEMENTS)] if tuning else [],
        "calibratable": calibratable,
    }


REGISTRY = [
    _def("Relu", 6, 13, "fx_tunable", ["float", "double"], tuning=True),
    _def("Relu", 14, -1, "fx_tunable", ["float", "double"], tuning=True),
    _def("Softmax", 13, -1, "fx_tunable", ["float"], tuning=True, calibratable=True),
    _def("Shape", 1, 14, "fx_serial", []),
    _def("Shape", 15, -1, "fx_serial", []),
    _def("RandomUniform", 1, -1, "fx_serial", ["float", "double"]),
    _def("Pad", 13, -1, "fx_serial", ["float"]),
    _def("SequenceAt", 11, -1, "fx_serial", []),
    _def("Cast", 19, -1, "fx_fixed", ["float"], tuning=True),
    _def("Where", 16, -1, "fx_fixed", ["float"]),
]


def registry(without_families=("fx_fixed",)):
    """A fresh copy of the fixture registry; fx_fixed (a forbidden path) left out unless asked."""
    return [copy.deepcopy(d) for d in REGISTRY if d["family"] not in without_families]


def copy_tree(tmp_path):
    """A writable copy of the fixture sources, manifests and exemptions, rooted like the
    runfiles (sources at their workspace paths)."""
    target = tmp_path / "root"
    shutil.copytree(os.path.join(environment.runfiles_root(), TESTDATA), target / TESTDATA)
    return str(target)


def load(root=None, registry_dicts=None, families=("fx_serial", "fx_tunable")):
    """The fixture tree as the gate sees it, with the manifests of `families` only;
    exemptions from testdata/exemptions."""
    root = root or environment.runfiles_root()
    testdata = os.path.join(root, TESTDATA)
    return tree_lib.load_tree(
        root,
        registry() if registry_dicts is None else registry_dicts,
        exemptions_root=testdata,
        manifest_files=[os.path.join(testdata, f"{name}_manifest.json") for name in families],
    )


def source(root, family, name):
    return os.path.join(root, TESTDATA, family, name)
