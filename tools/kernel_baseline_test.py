"""The baseline's smallest corpus runs and its document has every field filled."""

import onnx_light
from onnx_light_dev import baseline


def run_smallest() -> dict:
    return baseline.run_baseline(
        baseline.native_binary(),
        revision="test",
        build_config_text=baseline.build_config(),
        threads=2,
        repetitions=2,
        min_time_ms=0,
        smallest=True,
        progress=False,
    )


DOC = run_smallest()


def test_every_field_is_filled() -> None:
    assert DOC["schema"] == "onnx_light.kernel_baseline/1"
    assert baseline.problems(DOC) == []
    assert DOC["metadata"]["processor"]["architecture"]
    assert DOC["metadata"]["execution"]["session_threads"] == 2
    policies = {(c["op"], c["policy"]) for c in DOC["cases"]}
    for op in {c["op"] for c in DOC["cases"]}:
        assert (op, "serial") in policies and (op, "parallel") in policies


# Parallel families the corpus does not measure yet, with the reason (kept true by the
# test below: a listed family that gains a case must leave the list).
CORPUS_GAPS: dict = {}


def test_every_parallel_family_has_a_case_or_a_listed_gap() -> None:
    """The corpus holds one representative case per family that has a tuning schema."""
    parallel_families = {k.family for k in onnx_light.registered_kernels() if k.tuning}
    measured = {c["family"] for c in DOC["cases"]}
    assert parallel_families - measured - set(CORPUS_GAPS) == set()
    assert set(CORPUS_GAPS) & measured == set(), "measured families must leave CORPUS_GAPS"
    assert set(CORPUS_GAPS) <= parallel_families, "a listed gap names no parallel family"


def test_missing_ops_say_why() -> None:
    for entry in DOC["missing"]:
        assert entry["reason"].startswith("NotImplemented"), entry
