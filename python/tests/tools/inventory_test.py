import csv
import io
import json
import os

import fixtures
from onnx_light_dev import environment
from onnx_light_dev import inventory as inventory_lib


def _states(inventory):
    return {(p.op, p.element_type): p.state for p in inventory.paths}


def test_states_follow_schema_calibration_and_call_sites():
    tree = fixtures.load(
        registry_dicts=fixtures.registry(without_families=()), families=("fx_serial", "fx_tunable", "fx_fixed")
    )
    assert tree.inventory.problems == []
    assert _states(tree.inventory) == {
        ("Relu", "float"): "tunable",
        ("Relu", "double"): "tunable",
        ("Softmax", "float"): "calibratable",
        ("Shape", "*"): "serial",
        ("SequenceAt", "*"): "serial",
        ("Pad", "float"): "serial",
        ("RandomUniform", "float"): "serial",
        ("RandomUniform", "double"): "serial",
        ("Cast", "float"): "tunable",
        ("Where", "float"): "parallel_fixed_policy",
    }
    assert tree.inventory.counts() == {"calibratable": 1, "tunable": 3, "parallel_fixed_policy": 1, "serial": 5}


def test_opset_ranges_of_one_op_and_type_are_one_path():
    inventory = fixtures.load().inventory
    shape = [p for p in inventory.paths if p.op == "Shape"]
    assert len(shape) == 1 and shape[0].opsets == ["1-14", "15-"]
    relu = [p for p in inventory.paths if p.op == "Relu" and p.element_type == "float"][0]
    assert relu.opsets == ["6-13", "14-"] and relu.tuning == ["parallel.minimum_elements"]


def test_families_carry_manifest_sources_fingerprint_and_call_sites():
    families = fixtures.load(
        families=("fx_serial", "fx_tunable", "fx_fixed"), registry_dicts=fixtures.registry(without_families=())
    ).inventory.families
    tunable = families["fx_tunable"]
    assert tunable.label == "//python/tests/tools/testdata:fx_tunable"
    assert tunable.package == "python/tests/tools/testdata"
    assert tunable.sources == [
        f"{fixtures.TESTDATA}/fx_tunable/tunable_kernels.cc",
        f"{fixtures.TESTDATA}/fx_tunable/tunable_kernels.h",
    ]
    assert tunable.call_sites == [f"{fixtures.TESTDATA}/fx_tunable/tunable_kernels.cc:8 ParallelFor"]
    assert families["fx_fixed"].call_sites == [
        f"{fixtures.TESTDATA}/fx_fixed/fixed_kernels.cc:5 ParallelForWithParticipant"
    ]
    assert families["fx_serial"].call_sites == []  # its comment and string mention ParallelFor(
    assert len({f.fingerprint for f in families.values()}) == 3


def test_shared_sources_change_the_fingerprint_but_bring_no_call_sites(tmp_path):
    # A family built on a helper library: the helper's text is part of the family's
    # fingerprint (an exemption is re-reviewed when it changes), while the helper's own
    # ParallelFor belongs to the families that call it.
    (tmp_path / "fam").mkdir()
    (tmp_path / "helper").mkdir()
    (tmp_path / "fam" / "ops.cc").write_text("void Op() { CopyRows(); }\n")
    helper = tmp_path / "helper" / "rows.cc"
    helper.write_text("void CopyRows() { ParallelFor(ctx, n, plan, fn); }\n")
    manifest = tmp_path / "fam" / "fam_manifest.json"
    manifest.write_text(
        json.dumps(
            {
                "family": "fam",
                "package": "fam",
                "label": "//fam:fam",
                "sources": ["fam/ops.cc"],
                "shared_sources": ["helper/rows.cc"],
            }
        )
    )

    def load():
        families, problems = inventory_lib.load_manifests([str(manifest)], str(tmp_path))
        assert problems == []
        return families["fam"]

    before = load()
    assert before.shared_sources == ["helper/rows.cc"]
    assert before.call_sites == []
    helper.write_text("void CopyRows() { for (;;) {} }\n")
    assert load().fingerprint != before.fingerprint


def test_registry_family_without_manifest_and_manifest_without_kernels_are_problems():
    registry = fixtures.registry() + [
        {
            "domain": "ai.onnx",
            "op": "Abs",
            "since_version": 13,
            "end_version": -1,
            "family": "fx_ghost",
            "element_types": ["float"],
            "tuning": [],
            "calibratable": False,
        }
    ]
    inventory = fixtures.load(registry_dicts=registry, families=("fx_serial", "fx_tunable", "fx_fixed")).inventory
    messages = [p.message for p in inventory.problems]
    assert "family 'fx_ghost' has registered kernels but no manifest" in messages
    assert any("'fx_fixed'" in m and "registers no kernel" in m for m in messages)
    assert all(p.remedy for p in inventory.problems)


def test_opset_ranges_that_disagree_take_the_weakest_state_and_are_a_problem():
    registry = fixtures.registry()
    registry[1]["tuning"] = []  # Relu 14-: no schema in a family that calls ParallelFor
    inventory = fixtures.load(registry_dicts=registry).inventory
    assert _states(inventory)[("Relu", "float")] == "parallel_fixed_policy"
    assert any("opset ranges disagree" in p.message for p in inventory.problems)


def test_unreadable_source_is_a_problem(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    os.remove(fixtures.source(root, "fx_serial", "serial_kernels.cc"))
    inventory = fixtures.load(root).inventory
    assert any("cannot read source" in p.message and "serial_kernels.cc" in p.message for p in inventory.problems)


def test_filters_and_formats():
    inventory = fixtures.load().inventory
    serial = inventory.filtered(states=["serial"])
    assert {p.state for p in serial} == {"serial"} and len(serial) == 5
    assert {p.family for p in inventory.filtered(families=["fx_tunable"])} == {"fx_tunable"}
    rows = list(csv.DictReader(io.StringIO(inventory_lib.format_csv(serial))))
    assert [r["op"] for r in rows] == ["Pad", "RandomUniform", "RandomUniform", "SequenceAt", "Shape"]
    doc = json.loads(inventory_lib.format_json(inventory, inventory.paths))
    assert doc["counts"]["serial"] == 5 and len(doc["paths"]) == 8
    assert doc["families"]["fx_serial"]["fingerprint"].startswith("sha256:")
    text = inventory_lib.format_text(inventory, inventory.paths)
    assert "serial                      5" in text and "fx_tunable" in text


def test_find_manifests_walks_the_given_directory():
    found = inventory_lib.find_manifests(environment.runfiles_root(), fixtures.TESTDATA)
    assert [os.path.basename(f) for f in found] == [
        "fx_fixed_manifest.json",
        "fx_serial_manifest.json",
        "fx_tunable_manifest.json",
    ]


def test_bazel_cross_check_flags_unlisted_families_and_libraries_without_manifest():
    libraries = {"//native/kernels/a:a", "//native/kernels/b:b", "//native/kernels/c:c"}
    manifests = {"//native/kernels/a:a_manifest", "//native/kernels/b:b_manifest"}
    problems = environment.kernel_library_problems(libraries, manifests, {"//native/kernels/a:a"})
    assert [p.message for p in problems] == [
        "kernel_family //native/kernels/b:b is not in native/kernels/families.bzl",
        "//native/kernels/c:c is an alwayslink kernel library without a manifest",
    ]
