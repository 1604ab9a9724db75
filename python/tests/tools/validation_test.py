import json
import os

import fixtures
import pytest
from onnx_light_dev import coverage, exemptions, validation

EXEMPTION_FILE = os.path.join(fixtures.TESTDATA, "exemptions", "fx_serial.json")


def gate(tree):
    """The gate's failures, with the coverage report taken as current."""
    validation.attach_dispositions(tree.inventory, tree.exemption_files)
    return validation.validate(tree.inventory, tree.exemption_files, coverage.render_coverage(tree.inventory))


def kinds(failures):
    return sorted(f.kind for f in failures)


def edit_exemptions(root, edit):
    """Applies edit(doc) to the fixture exemption file of the copied tree."""
    path = os.path.join(root, EXEMPTION_FILE)
    with open(path) as f:
        doc = json.load(f)
    edit(doc)
    with open(path, "w") as f:
        f.write(exemptions.dumps(doc["family"], doc["exemptions"]))


def entry(doc, op):
    return next(e for e in doc["exemptions"] if e["op"] == op)


def test_reviewed_fixture_tree_passes():
    tree = fixtures.load()
    failures = gate(tree)
    assert failures == [], validation.report(failures)
    assert validation.report(failures) == "validate_inventory: OK"
    assert {p.op: p.disposition for p in tree.inventory.paths if p.state == "serial"} == {
        "Pad": "tiny payload",
        "RandomUniform": "deterministic RNG",
        "SequenceAt": "ordered/control-flow",
        "Shape": "metadata-only",
    }


def test_serial_path_without_disposition_prints_a_template_with_the_current_fingerprint():
    registry = fixtures.registry() + [
        {
            "domain": "ai.onnx",
            "op": "Size",
            "since_version": 13,
            "end_version": -1,
            "family": "fx_serial",
            "element_types": [],
            "tuning": [],
            "calibratable": False,
        },
        {
            "domain": "ai.onnx",
            "op": "Concat",
            "since_version": 13,
            "end_version": -1,
            "family": "fx_serial",
            "element_types": ["float", "int64"],
            "tuning": [],
            "calibratable": False,
        },
    ]
    tree = fixtures.load(registry_dicts=registry)
    failures = gate(tree)
    assert kinds(failures) == ["missing", "missing"]
    concat = next(f for f in failures if "Concat" in f.subject)
    assert concat.subject == "ai.onnx::Concat[float,int64] (fx_serial)"
    assert "exemptions/fx_serial.json" in concat.remedy and "--write_templates --family=fx_serial" in concat.remedy
    template = json.loads(concat.template)
    assert template["fingerprint"] == tree.inventory.families["fx_serial"].fingerprint
    assert template["element_types"] == ["float", "int64"]
    assert exemptions.is_todo(template["category"]) and exemptions.is_todo(template["reason"])
    assert "[missing] ai.onnx::Concat[float,int64] (fx_serial)" in validation.report(failures)
    # Size is metadata-only by definition: its template needs no reviewer for the category.
    size = json.loads(next(f for f in failures if "Size" in f.subject).template)
    assert size["category"] == "metadata-only" and not exemptions.is_todo(size["reason"])


def test_pasted_template_is_rejected_until_the_human_fields_are_filled():
    template = exemptions.template_entry(
        "ai.onnx",
        "Concat",
        ["float"],
        "sha256:" + "0" * 64,
        {
            "revision": "a" * 40,
            "processor": {"architecture": "x86_64"},
            "policy": {"num_threads": 1},
            "measurements": [],
        },
    )
    errors = exemptions.entry_errors(template)
    assert len(errors) == 3
    assert all("TODO marker" in e for e in errors)
    template.update(category="ordered/control-flow", reason="Concatenates in input order.", revisit="never")
    assert exemptions.entry_errors(template) == []


def test_code_change_makes_the_fingerprint_stale_but_a_comment_change_does_not(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    source = fixtures.source(root, "fx_serial", "serial_kernels.cc")
    with open(source) as f:
        text = f.read()
    with open(source, "w") as f:
        f.write(text.replace("/* metadata only */", "// still metadata only\n\n"))
    assert gate(fixtures.load(root)) == []

    with open(source, "w") as f:
        f.write(text.replace("out[i] = in[i];", "out[i] = in[i] + 0;"))
    failures = gate(fixtures.load(root))
    assert kinds(failures) == ["stale"] * 4
    assert "--mark_reviewed" in failures[0].remedy and "re-check category" in failures[0].remedy


def test_parallel_fixed_policy_path_fails():
    tree = fixtures.load(
        registry_dicts=fixtures.registry(without_families=()), families=("fx_serial", "fx_tunable", "fx_fixed")
    )
    failures = gate(tree)
    assert kinds(failures) == ["parallel_fixed_policy"]
    assert failures[0].subject == "ai.onnx::Where[float] (fx_fixed)"
    assert "fixed_kernels.cc:5 ParallelForWithParticipant" in failures[0].message
    assert "tuning schema" in failures[0].remedy


def test_disposition_for_a_removed_or_no_longer_serial_path_fails():
    registry = [d for d in fixtures.registry() if d["op"] != "SequenceAt"]
    for d in registry:
        if d["op"] == "Pad":
            d["tuning"] = [dict(fixtures._MIN_ELEMENTS)]
    failures = gate(fixtures.load(registry_dicts=registry))
    assert kinds(failures) == ["orphan", "orphan"]
    messages = " | ".join(f.message for f in failures)
    assert "no path SequenceAt[*] exists in family 'fx_serial'" in messages
    assert "Pad[float] is tunable now, not serial" in messages


def test_exemption_file_for_a_family_that_no_longer_exists_fails(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    registry = [d for d in fixtures.registry() if d["family"] != "fx_serial"]
    failures = gate(fixtures.load(root, registry_dicts=registry, families=("fx_tunable",)))
    assert kinds(failures) == ["orphan"]
    assert failures[0].remedy == "delete exemptions/fx_serial.json"


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda d: entry(d, "Shape").update(category="too small"), "'category' is 'too small': choose one of"),
        (lambda d: entry(d, "Shape").update(category="TODO(reviewer): pick"), "'category' is still a TODO marker"),
        (lambda d: entry(d, "Shape").update(reason=""), "'reason' must be a non-empty string"),
        (lambda d: entry(d, "Shape").update(revisit="TODO"), "'revisit' is still a TODO marker"),
        (lambda d: entry(d, "Shape").pop("revisit"), "'revisit' must be a non-empty string"),
        (lambda d: entry(d, "Shape").update(fingerprint="md5:1234"), "not 'sha256:' + 64 lowercase hex"),
        # The path that the entry no longer names is also reported as missing.
        (lambda d: entry(d, "Shape").update(element_types=[]), "'element_types' must be a non-empty list"),
        (lambda d: entry(d, "Shape").update(owner="me"), "unknown field 'owner'"),
        (lambda d: entry(d, "Pad")["evidence"].update(measurements=[]), "'tiny payload' is a benchmark argument"),
        (
            lambda d: entry(d, "Pad")["evidence"]["measurements"][0].update(samples_ns=[12.5]),
            "samples_ns must be a non-empty list of positive integers",
        ),
        (
            lambda d: entry(d, "Pad")["evidence"]["measurements"][0].update(participants=0),
            "participants must be an integer >= 1",
        ),
        (lambda d: entry(d, "Shape")["evidence"].update(revision="HEAD"), "not a 40-hex git commit"),
        (
            lambda d: entry(d, "Shape")["evidence"].update(processor={}),
            "'evidence.processor' must be a non-empty object",
        ),
        (lambda d: entry(d, "Shape").pop("evidence"), "'evidence' must be an object"),
        (lambda d: d.update(family="fx_other"), "one file per family, named <family>.json"),
    ],
)
def test_malformed_fields_fail_with_the_field_named(tmp_path, edit, expected):
    root = fixtures.copy_tree(tmp_path)
    edit_exemptions(root, edit)
    failures = gate(fixtures.load(root))
    assert kinds(failures) == ["malformed"] + (["missing"] if "element_types" in expected else []), validation.report(
        failures
    )
    assert expected in failures[0].message
    assert "exemptions/fx_serial.json" in failures[0].remedy or "fx_serial" in failures[0].subject


def test_two_entries_claiming_one_path_fail(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    edit_exemptions(root, lambda d: d["exemptions"].append(dict(entry(d, "Shape"), reason="again")))
    failures = gate(fixtures.load(root))
    assert kinds(failures) == ["malformed"]
    assert failures[0].message == "2 entries claim this path"


def test_unparsable_exemption_file_fails(tmp_path):
    root = fixtures.copy_tree(tmp_path)
    with open(os.path.join(root, EXEMPTION_FILE), "w") as f:
        f.write("{not json")
    failures = gate(fixtures.load(root))
    assert "malformed" in kinds(failures) and "does not parse as JSON" in failures[0].message
    assert kinds(failures).count("missing") == 4  # its paths are unclaimed too


def test_coverage_report_missing_or_stale_fails_and_names_the_command():
    tree = fixtures.load()
    validation.attach_dispositions(tree.inventory, tree.exemption_files)
    current = coverage.render_coverage(tree.inventory)
    assert "| serial | 5 |" in current and "| fx_serial | 0 | 0 | 0 | 5 | 5 |" in current
    assert validation.validate(tree.inventory, tree.exemption_files, current) == []
    for text, state in ((None, "missing"), (current.replace("| 5 |", "| 6 |"), "not current")):
        failures = validation.validate(tree.inventory, tree.exemption_files, text)
        assert kinds(failures) == ["coverage"] and state in failures[0].message
        assert failures[0].remedy.endswith("./bazelw run //tools:kernel_inventory -- --write_coverage")


def test_inventory_problems_fail_the_gate():
    registry = fixtures.registry() + [
        {
            "domain": "ai.onnx",
            "op": "Abs",
            "since_version": 13,
            "end_version": -1,
            "family": "fx_ghost",
            "element_types": ["float"],
            "tuning": [{"name": "parallel.minimum_elements"}],
            "calibratable": False,
        }
    ]
    failures = gate(fixtures.load(registry_dicts=registry))
    assert kinds(failures) == ["inventory"] and "no manifest" in failures[0].message
    assert "families.bzl" in failures[0].remedy
