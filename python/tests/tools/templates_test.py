import dataclasses
import json
import os

import fixtures
import numpy as np
from onnx_light_dev import coverage, exemptions, measure, templates, validation

REVISION = "b" * 40
PROCESSOR = {"architecture": "x86_64", "model": "test"}


def collector(runner=None):
    return templates.EvidenceCollector(REVISION, PROCESSOR, runner)


def write(root, text):
    path = os.path.join(root, fixtures.TESTDATA, "exemptions", "fx_serial.json")
    if text is None:
        os.remove(path)
    else:
        with open(path, "w") as f:
            f.write(text)


def gate(tree):
    validation.attach_dispositions(tree.inventory, tree.exemption_files)
    return validation.validate(tree.inventory, tree.exemption_files, coverage.render_coverage(tree.inventory))


def test_new_family_gets_templates_with_todo_markers_except_derived_dispositions(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    write(root, None)
    tree = fixtures.load(root)
    text, changes = templates.refresh_family("fx_serial", tree.inventory, None, collector())
    doc = json.loads(text)
    by_op = {e["op"]: e for e in doc["exemptions"]}
    assert list(by_op) == ["Pad", "RandomUniform", "SequenceAt", "Shape"]
    assert by_op["RandomUniform"]["element_types"] == ["double", "float"]
    assert by_op["RandomUniform"]["category"] == "deterministic RNG"
    assert by_op["Shape"]["category"] == "metadata-only"
    assert exemptions.is_todo(by_op["Pad"]["category"]) and exemptions.is_todo(by_op["SequenceAt"]["revisit"])
    fingerprint = tree.inventory.families["fx_serial"].fingerprint
    assert {e["fingerprint"] for e in doc["exemptions"]} == {fingerprint}
    assert by_op["Pad"]["evidence"] == {
        "revision": REVISION,
        "processor": PROCESSOR,
        "policy": {"num_threads": 1, "participants": 1},
        "measurements": [],
    }
    assert len(changes) == 4 and "derived disposition" in changes[1] and "TODO: review" in changes[0]

    write(root, text)
    failures = gate(fixtures.load(root))
    # Pad and SequenceAt: category, reason, revisit each still TODO.
    assert sorted(f.kind for f in failures) == ["malformed"] * 6
    assert {f.subject for f in failures} == {"ai.onnx::Pad[float] (fx_serial)", "ai.onnx::SequenceAt[*] (fx_serial)"}


def test_refresh_of_a_current_file_changes_nothing():
    tree = fixtures.load()
    current = tree.exemption_files["fx_serial"]
    with open(current.path) as f:
        committed = f.read()
    text, changes = templates.refresh_family("fx_serial", tree.inventory, current, collector())
    assert (text, changes) == (committed, [])


def test_refresh_drops_vanished_paths_and_adds_new_ones():
    registry = [d for d in fixtures.registry() if d["op"] != "SequenceAt"]
    registry.append(
        {
            "domain": "ai.onnx",
            "op": "Size",
            "since_version": 13,
            "end_version": -1,
            "family": "fx_serial",
            "element_types": [],
            "tuning": [],
            "calibratable": False,
        }
    )
    tree = fixtures.load(registry_dicts=registry)
    text, changes = templates.refresh_family(
        "fx_serial", tree.inventory, tree.exemption_files["fx_serial"], collector()
    )
    assert [e["op"] for e in json.loads(text)["exemptions"]] == ["Pad", "RandomUniform", "Shape", "Size"]
    assert any("SequenceAt" in c and "dropped" in c for c in changes)
    assert any("Size" in c and "added template" in c for c in changes)


def test_no_serial_path_left_means_no_file():
    registry = [d for d in fixtures.registry() if d["family"] != "fx_serial"]
    tree = fixtures.load(registry_dicts=registry, families=("fx_tunable",))
    text, changes = templates.refresh_family(
        "fx_serial", tree.inventory, tree.exemption_files["fx_serial"], collector()
    )
    assert text is None and len(changes) == 4


def test_stale_entries_move_to_the_new_fingerprint_only_when_marked_reviewed(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    source = fixtures.source(root, "fx_serial", "serial_kernels.cc")
    with open(source) as f:
        text = f.read()
    with open(source, "w") as f:
        f.write(text.replace("++i", "i++"))
    tree = fixtures.load(root)
    unmarked, _ = templates.refresh_family("fx_serial", tree.inventory, tree.exemption_files["fx_serial"], collector())
    write(root, unmarked)
    assert {f.kind for f in gate(fixtures.load(root))} == {"stale"}

    tree = fixtures.load(root)
    marked, changes = templates.refresh_family(
        "fx_serial", tree.inventory, tree.exemption_files["fx_serial"], collector(), mark_reviewed=True
    )
    assert len(changes) == 4 and all("marked reviewed" in c for c in changes)
    write(root, marked)
    assert gate(fixtures.load(root)) == []
    entries = {e["op"]: e for e in json.loads(marked)["exemptions"]}
    # Without a runner the old Pad samples stay, with the revision they were measured at.
    assert entries["Pad"]["evidence"]["measurements"][0]["samples_ns"] == [912, 880, 901]
    assert entries["Pad"]["evidence"]["revision"] != REVISION
    assert entries["Shape"]["evidence"]["revision"] == REVISION


def test_measurements_time_the_runner_on_conformance_inputs():
    calls = []

    def runner(domain, op, case, participants):
        calls.append((domain, op, case.opset, case.num_outputs, participants))
        return 700 + len(calls)  # the kernel's own compute ns

    evidence = collector(runner)("ai.onnx", "Shape", ["*"])
    measurements = evidence["measurements"]
    assert 2 <= len(measurements) <= 2 * measure.MAX_CASES
    for m in measurements:
        assert m["participants"] == 1 and len(m["samples_ns"]) == measure.SAMPLES
        assert all(700 < s < 800 for s in m["samples_ns"])
        assert m["case"].startswith("onnx conformance test_shape") and m["case"].endswith("(compute_ns)")
        assert m["inputs"].startswith("float[")
    # Each small case once more at a typical size (Shape's single input is scalable).
    typical = [m for m in measurements if " on axis 0" in m["case"]]
    assert len(typical) * 2 == len(measurements)
    assert len(calls) == len(measurements) * (measure.WARMUP + measure.SAMPLES)
    assert {c[:2] for c in calls} == {("ai.onnx", "Shape")} and {c[3:] for c in calls} == {(1, 1)}
    assert (
        exemptions.entry_errors(exemptions.template_entry("ai.onnx", "Shape", ["*"], "sha256:" + "1" * 64, evidence))
        == []
    )


def test_measured_evidence_records_the_build_and_the_load_and_unmeasured_evidence_does_not():
    build = {"compilation_mode": "opt", "optimized": True, "compiler": "gcc 12", "isa_selected": "avx512"}
    load = {"load_1min_before": 0.31, "quiet_load": 0.5, "quiet": True}
    measured = templates.EvidenceCollector(REVISION, PROCESSOR, lambda *_: 700, build, load)("ai.onnx", "Shape", ["*"])
    assert measured["build"] == build and measured["load"] == load and measured["measurements"]
    assert (
        exemptions.entry_errors(exemptions.template_entry("ai.onnx", "Shape", ["*"], "sha256:" + "1" * 64, measured))
        == []
    )
    # Without a runner nothing was timed: no build or load to state.
    unmeasured = templates.EvidenceCollector(REVISION, PROCESSOR, None, build, load)("ai.onnx", "Shape", ["*"])
    assert "build" not in unmeasured and "load" not in unmeasured


def test_measurements_select_the_element_type_and_skip_rejected_cases():
    def rejecting_runner(domain, op, case, participants):
        raise ValueError("NotImplemented")

    assert measure.measure_path(rejecting_runner, "ai.onnx", "Shape", "*") == []
    assert all(case.inputs[0].dtype.name == "int32" for case in measure.conformance_cases("ai.onnx", "Add", "int32"))
    assert measure.conformance_cases("ai.onnx", "Add", "float")


def test_scaled_cases_repeat_same_shaped_inputs_along_axis_0():
    case = measure.Case("t", 13, [np.ones((3, 4), np.float32), np.zeros((3, 4), np.float32)], {}, 1)
    big = measure.scaled(case)
    assert big.name == "t x5462 on axis 0" and [a.shape for a in big.inputs] == [(16386, 4)] * 2
    assert big.inputs[1].sum() == 0 and big.inputs[0].sum() == big.inputs[0].size
    assert measure.scaled(dataclasses.replace(case, inputs=[np.ones((3, 4)), np.ones((4,))])) is None
    assert measure.scaled(dataclasses.replace(case, inputs=[np.ones(())])) is None
    assert measure.scaled(dataclasses.replace(case, inputs=[np.ones((1 << 17,))])) is None


def test_families_to_refresh():
    tree = fixtures.load()
    assert templates.families_to_refresh(tree.inventory, tree.exemption_files) == ["fx_serial"]
    assert templates.families_to_refresh(tree.inventory, tree.exemption_files, ["fx_tunable"]) == ["fx_tunable"]


def test_write_templates_writes_refreshes_and_removes_files(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    directory = os.path.join(root, fixtures.TESTDATA, "exemptions")
    write(root, None)
    tree = fixtures.load(root)
    report = templates.write_templates(
        directory, tree.inventory, tree.exemption_files, collector(), families=["fx_serial", "fx_nope"]
    )
    assert report[0].startswith("fx_nope: no such family") and len(report) == 5
    assert sorted(os.listdir(directory)) == ["fx_serial.json"]

    registry = [d for d in fixtures.registry() if d["family"] != "fx_serial"]
    tree = fixtures.load(root, registry_dicts=registry, families=("fx_tunable",))
    report = templates.write_templates(directory, tree.inventory, tree.exemption_files, collector())
    assert report[-1].endswith("no serial path left: file removed") and os.listdir(directory) == []
