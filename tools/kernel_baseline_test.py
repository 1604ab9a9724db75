"""The baseline's smallest corpus runs interleaved with a calibrated policy, its document
has every field filled, and the corpus covers every op with a parallel path."""

import os
import tempfile

import onnx_light
from onnx_light import kernel_tuning
from onnx_light_dev import baseline

MATMUL_FLOAT = next(s["key"] for s in kernel_tuning.schemas() if s["op"] == "MatMul" and s["element_type"] == "float")
CALIBRATED = os.path.join(tempfile.mkdtemp(), "calibrated_values.tsv")
# A calibrated value that changes the decision at the smallest MatMul (64^3 = 1 work unit).
baseline.write_calibrated_values([(MATMUL_FLOAT, "parallel.minimum_tasks", 1)], CALIBRATED)
BOUNDS = baseline.Bounds(min_blocks=2, max_blocks=2, cell_time_cap_ms=0)


def run_smallest(smallest: bool = True, **kwargs) -> dict:
    return baseline.run_baseline(
        baseline.native_binary(),
        revision="test",
        build_config_text=baseline.build_config(),
        threads=2,
        smallest=smallest,
        progress=False,
        **kwargs,
    )


DOC = run_smallest(bounds=BOUNDS, calibrated=CALIBRATED)
LISTED = baseline.list_cells(baseline.native_binary())

# Ops with a parallel path and no corpus case of their own, with the reason (kept
# true by the test below: an op that gains a case must leave the list).
CORPUS_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("ai.onnx", "Upsample"): "deprecated since opset 10; the Resize kernel, measured through Resize",
}

# The element types users run: float and float16 wherever the op has them, int8/uint8 for
# the quantized ops (a case per type the op has).
USER_TYPES = {"float", "float16"}
QUANTIZED_FAMILIES = {"quantized", "qlinear_ms", "quantization"}
# (domain, op, type) the op registers but the corpus does not run, with the reason.
TYPE_EXCEPTIONS: dict[tuple[str, str, str], str] = {
    **{
        ("ai.onnx", op, t): "the registered type is of an index or shape input, not of the data users run"
        for op, types in (
            ("OneHot", ("float", "float16")),
            ("ConstantOfShape", ("float", "float16")),
            ("Mod", ("float", "float16")),
            ("BitCast", ("float", "float16")),
        )
        for t in types
    },
    ("ai.onnx", "CastLike", "float16"): "the cast's source type: the case casts float to float16",
    ("ai.onnx.ml", "OneHotEncoder", "float"): "category codes are int64 in the models users run",
}


def parallel_ops() -> dict[tuple[str, str], tuple[str, set[str]]]:
    """(domain, op) -> (family, registered element types) of every op with a parallel path:
    a tuning schema with a parallel.* parameter (what the inventory counts as one)."""
    out: dict[tuple[str, str], tuple[str, set[str]]] = {}
    for k in onnx_light.registered_kernels():
        if any(p.name.startswith("parallel.") for p in k.tuning):
            family, types = out.setdefault((k.domain, k.op), (k.family, set()))
            types.update(k.element_types)
    return out


def test_every_field_is_filled() -> None:
    assert DOC["schema"] == "onnx_light.kernel_baseline/2"
    assert baseline.problems(DOC) == []
    assert DOC["metadata"]["processor"]["architecture"]
    assert DOC["metadata"]["isa_selected"] == kernel_tuning.max_isa()
    assert DOC["metadata"]["execution"]["session_threads"] == 2
    cells = {(c["op"], c["element_type"], c["size"], c["policy"]): c for c in DOC["cases"]}
    for op, element_type, size, _ in cells:
        for policy in ("serial", "parallel", "calibrated"):
            assert (op, element_type, size, policy) in cells


def test_cells_are_interleaved_blocks_with_per_block_speedups() -> None:
    for c in DOC["cases"]:
        assert c["blocks"] == 2 and len(c["samples_ns"]) == 2, c["op"]
        if c["policy"] != "serial":
            assert len(c["speedups_vs_serial"]) == 2
            assert c["speedup"]["low"] <= c["speedup"]["median"] <= c["speedup"]["high"]
            assert not c["speedup"]["exact"]  # two blocks are too few for a 95% interval
            assert c["decided"] is False and c["stopped_by"] == "max_blocks"


def test_calibrated_values_reach_the_kernel() -> None:
    """The calibrated minimum (1 unit) takes the parallel path where the default (16) does not."""
    matmul = {c["policy"]: c for c in DOC["cases"] if c["op"] == "MatMul" and c["element_type"] == "float"}
    assert matmul["parallel"]["regions"] == 0
    assert matmul["calibrated"]["regions"] >= 1
    assert matmul["calibrated"]["participants"]["requested"] == 2
    assert matmul["calibrated"]["outputs_identical_to_serial"]


def test_an_isa_cap_reaches_the_measured_process_and_is_recorded() -> None:
    """kernel_report --max_isa: the cap is set in the environment of the native binary,
    whose kernels then run at it (portable exists on every host)."""
    bounds = baseline.Bounds(min_blocks=1, max_blocks=1)
    doc = run_smallest(bounds=bounds, ops=["Add"], env=baseline.isa_environment("portable"))
    assert doc["metadata"]["isa_selected"] == "portable"
    assert doc["metadata"]["max_isa"] == "portable"
    assert baseline.problems(doc) == []
    uncapped = run_smallest(bounds=bounds, ops=["Add"], env=baseline.isa_environment(None))
    assert uncapped["metadata"]["isa_selected"] == kernel_tuning.host_isa()
    assert uncapped["metadata"]["max_isa"] == "none"


def test_cells_past_the_deadline_are_skipped_not_measured() -> None:
    # Conv's six cells (float, float16; three sizes) take well over 1 ms together: the
    # later ones start past the deadline.
    bounds = baseline.Bounds(min_blocks=1, max_blocks=1, deadline_ms=1)
    doc = run_smallest(smallest=False, bounds=bounds, ops=["Conv"])
    skipped = [c for c in doc["cases"] if "skipped" in c]
    assert skipped and all("samples_ns" not in c for c in skipped)
    assert len(baseline.skipped(doc)) == len(skipped)
    assert baseline.problems(doc) == []


def test_every_op_with_a_parallel_path_has_a_case_or_a_listed_reason() -> None:
    ops = parallel_ops()
    measured = {(c["domain"], c["op"]) for c in LISTED}
    missing = set(ops) - measured - set(CORPUS_EXCEPTIONS)
    assert missing == set(), f"ops with a parallel path and no corpus case: {sorted(missing)}"
    assert set(CORPUS_EXCEPTIONS) & measured == set(), "measured ops must leave CORPUS_EXCEPTIONS"
    assert set(CORPUS_EXCEPTIONS) <= set(ops), "a listed exception names no op with a parallel path"


def test_every_op_runs_the_types_users_run_or_says_why() -> None:
    measured = {(c["domain"], c["op"], c["element_type"]) for c in LISTED}
    expected = set()
    for (domain, op), (family, types) in parallel_ops().items():
        if (domain, op) in CORPUS_EXCEPTIONS:
            continue
        wanted = USER_TYPES | ({"int8", "uint8"} if family in QUANTIZED_FAMILIES else set())
        expected |= {(domain, op, t) for t in types & wanted}
    missing = expected - measured - set(TYPE_EXCEPTIONS)
    assert missing == set(), f"(domain, op, type) without a case: {sorted(missing)}"
    assert set(TYPE_EXCEPTIONS) & measured == set(), "measured types must leave TYPE_EXCEPTIONS"
    assert set(TYPE_EXCEPTIONS) <= expected, "a listed type exception names no expected (op, type)"


def test_every_case_has_three_sizes_of_growing_work() -> None:
    sizes: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
    for c in LISTED:
        sizes.setdefault((c["domain"], c["op"], c["element_type"]), []).append((c["size"], c["work_units"]))
    for key, s in sizes.items():
        assert [label for label, _ in s] == ["small", "crossover", "large"], key
        assert s[0][1] < s[1][1] < s[2][1], key


def test_by_size_takes_every_small_cell_before_any_larger_one() -> None:
    """The aarch64 check's order: a deadline then leaves out the largest sizes, not ops."""
    rank = {"small": 0, "crossover": 1, "large": 2}
    ordered = [rank[c["size"]] for c in baseline.list_cells(baseline.native_binary(), by_size=True)]
    assert ordered == sorted(ordered) and len(ordered) == len(LISTED)
    assert [rank[c["size"]] for c in LISTED] != ordered  # corpus order: case by case


def test_missing_ops_say_why() -> None:
    for entry in DOC["missing"]:
        assert entry["reason"].startswith("NotImplemented"), entry
