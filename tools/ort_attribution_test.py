"""The attribution tool on the smallest corpus model, and every corpus model against ORT."""

import pathlib

import numpy as np
import onnx
import onnx_light
import pytest
from onnx_light_dev import attribution, model_corpus

from benchmarks.ort_reference import ort_session

SMALLEST = model_corpus.corpus()[0]
DOC = attribution.run([SMALLEST], [1, 2], ort_session, samples=2, profiled_runs=2)


def test_document_structure() -> None:
    assert DOC["schema"] == attribution.SCHEMA
    assert DOC["conditions"]["load_before"].startswith("load average")
    assert [(r["model"], r["threads"], r["status"]) for r in DOC["results"]] == [
        (SMALLEST.name, 1, "ok"),
        (SMALLEST.name, 2, "ok"),
    ]
    for r in DOC["results"]:
        assert r["agreement"]["ok"]
        for runtime in ("onnx_light", "ort", "ort_disable_all"):
            assert len(r["end_to_end"][runtime]["samples_ms"]) == 2
            assert len(r["end_to_end"][runtime]["caller_cpu_samples_ms"]) == 2
        assert r["ratio_vs_ort"] > 0 and r["ratio_vs_ort_disable_all"] > 0
        assert set(r["onnx_light_nodes"]) == {n.name for n in SMALLEST.model.graph.node}
        assert set(r["ort_disable_all_nodes"]) == set(r["onnx_light_nodes"])  # same graph, node for node
    markdown = attribution.markdown(DOC)
    assert f"## {SMALLEST.name}, 2 thread(s)" in markdown and "| Gemm |" in markdown
    assert "ours outside nodes ms" in markdown


def test_conditions_say_which_isa_each_runtime_uses() -> None:
    c = DOC["conditions"]
    build = onnx_light.build_info()
    assert c["ort_isa"] == build["isa_supported"]
    assert c["isa_capped"] == (build["isa_selected"] != build["isa_supported"])
    assert c["isa_note"] in attribution.markdown(DOC)


def test_a_capped_isa_is_said_to_compare_with_orts_host_isa() -> None:
    capped = attribution.isa_conditions({"isa_selected": "avx2", "isa_supported": "avx512"})
    assert capped["isa_capped"] and capped["ort_isa"] == "avx512"
    assert capped["isa_note"] == (
        "onnx-light ISA avx2 (capped); ORT uses the host's ISA (avx512), so ratios compare our AVX2 with ORT's AVX-512"
    )
    same = attribution.isa_conditions({"isa_selected": "avx512", "isa_supported": "avx512"})
    assert not same["isa_capped"] and "capped" not in same["isa_note"]
    doc = {**DOC, "conditions": {**DOC["conditions"], **capped}}
    assert "so ratios compare our AVX2 with ORT's AVX-512" in attribution.markdown(doc)


def test_outside_nodes_is_run_time_minus_the_same_runs_node_sum() -> None:
    for r in DOC["results"]:
        outside = r["onnx_light_outside_nodes"]
        assert len(outside["samples_ms"]) == 2
        assert 0 < outside["node_sum_median_ms"] < outside["run_median_ms"]
        # Every sample is one run's wall time minus that run's own node sum: never negative.
        assert all(s > 0 for s in outside["samples_ms"])
        assert outside["median_ms"] < outside["run_median_ms"]


def test_blocks_in_rounds_take_the_median_of_per_round_ratios() -> None:
    doc = attribution.run(
        [SMALLEST], [1], attribution.ort_session_at_defaults, samples=6, profiled_runs=1, timing="blocks", rounds=3
    )
    (r,) = doc["results"]
    assert doc["conditions"]["rounds"] == 3 and "in 3 rounds of 2 samples" in doc["conditions"]["timing"]
    for runtime in ("onnx_light", "ort", "ort_disable_all"):
        assert len(r["end_to_end"][runtime]["samples_ms"]) == 6
    samples = {k: r["end_to_end"][k]["samples_ms"] for k in ("onnx_light", "ort")}
    # Each round's block medians, in the order the rounds ran.
    expected = [np.median(samples["onnx_light"][i : i + 2]) / np.median(samples["ort"][i : i + 2]) for i in (0, 2, 4)]
    assert r["round_ratios_vs_ort"] == pytest.approx(expected)
    assert r["ratio_vs_ort"] == pytest.approx(np.median(expected))
    assert f"{r['ratio_vs_ort']:.2f} (" in attribution.markdown(doc)


def test_rounds_need_blocks_timing() -> None:
    with pytest.raises(ValueError, match="rounds"):
        attribution.run([SMALLEST], [1], ort_session, samples=2, profiled_runs=1, rounds=2)


def test_op_totals_add_up_to_node_totals() -> None:
    assert attribution.problems(DOC) == []
    for r in DOC["results"]:
        counts = {row["op"]: row["ours_nodes"] for row in r["op_types_vs_ort_disable_all"]}
        assert counts == r["op_counts"]
        # Every original node is covered once by the default-level table.
        assert sum(sum(row["covers"].values()) for row in r["op_types_vs_ort"]) == r["nodes"]


def test_problems_finds_a_row_that_does_not_add_up() -> None:
    broken = {**DOC, "results": [dict(DOC["results"][0])]}
    broken["results"][0]["op_types_vs_ort_disable_all"] = DOC["results"][0]["op_types_vs_ort_disable_all"][1:]
    assert attribution.problems(broken)


def test_fusions_are_attributed_to_the_ort_nodes_that_run_them(tmp_path: pathlib.Path) -> None:
    """ORT folds BatchNormalization into Conv and fuses Relu and residual Adds: each of our
    nodes belongs to exactly one ORT node, and the BatchNormalizations to Convs."""
    model = model_corpus.resnet_cnn(size=56).model
    path = str(tmp_path / "optimized.onnx")
    ort_session(model, 1, optimized_model_path=path)
    optimized = onnx.load(path)
    coverage = attribution.fusion_coverage(model, optimized)
    covered = [n for nodes in coverage.values() for n in nodes]
    assert sorted(covered) == sorted(n.name for n in model.graph.node)
    ort_ops = {n.name: n.op_type for n in optimized.graph.node}
    ours_ops = {n.name: n.op_type for n in model.graph.node}
    for ort_node, nodes in coverage.items():
        for node in nodes:
            if ours_ops[node] == "BatchNormalization":
                assert ort_ops[ort_node] == "Conv", (node, ort_node)


def test_unsupported_ops_are_reported_not_skipped() -> None:
    model = onnx.helper.make_model(
        onnx.helper.make_graph(
            [onnx.helper.make_node("Relu", ["x"], ["y"]), onnx.helper.make_node("NoSuchOp", ["y"], ["z"])],
            "g",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
            [onnx.helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [2])],
        )
    )
    assert attribution.unsupported_ops(model) == ["NoSuchOp"]


@pytest.mark.parametrize("corpus_model", model_corpus.corpus(), ids=lambda m: m.name)
def test_corpus_model_matches_ort(corpus_model: model_corpus.CorpusModel) -> None:
    ours = onnx_light.InferenceSession(
        corpus_model.model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=2)
    )
    expected = ort_session(corpus_model.model, 1).run(None, corpus_model.feeds)
    got = ours.run(None, corpus_model.feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * float(np.abs(e).max()))


def test_corpus_totals_add_up_the_models() -> None:
    for threads in (1, 2):
        rows = attribution.corpus_op_types(DOC, threads)
        ours = sum(
            n["median_ms"] for r in DOC["results"] if r["threads"] == threads for n in r["onnx_light_nodes"].values()
        )
        assert sum(row["ours_ms"] for row in rows) == pytest.approx(ours)
