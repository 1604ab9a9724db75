"""The attribution report's pure parts on a made-up document (no model runs, no torch):
the corpus summary, the chart and its data, the optimisation level names, and the torch
corpus' cache and node naming."""

import json
import math
import pathlib
from typing import Any

import matplotlib.image
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx_light_dev import attribution, torch_corpus


def _ok(model: str, threads: int, ours_ms: float, ort_ms: float) -> dict[str, Any]:
    """A result of one node per runtime whose times are the end-to-end ones."""

    def nodes(ms: float) -> dict[str, Any]:
        return {"Conv_1": {"op": "Conv", "median_ms": ms, "samples_ms": [ms]}}

    row = {"op": "Conv", "ours_ms": ours_ms, "ort_ms": ort_ms, "ours_share": 1.0, "ort_share": 1.0}
    return {
        "model": model,
        "description": f"{model} made up",
        "threads": threads,
        "nodes": 1,
        "op_counts": {"Conv": 1},
        "status": "ok",
        "agreement": {"max_abs_diff": 1e-6, "reference_max_abs": 1.0, "relative_diff": 1e-6, "ok": True},
        "end_to_end": {
            side: {"median_ms": ms, "samples_ms": [ms], "caller_cpu_median_ms": ms, "caller_cpu_samples_ms": [ms]}
            for side, ms in (("onnx_light", ours_ms), ("ort", ort_ms), ("ort_disable_all", ort_ms))
        },
        "ratio_vs_ort": ours_ms / ort_ms,
        "ratio_vs_ort_disable_all": ours_ms / ort_ms,
        "onnx_light_nodes": nodes(ours_ms),
        "ort_nodes": nodes(ort_ms),
        "ort_disable_all_nodes": nodes(ort_ms),
        "op_types_vs_ort_disable_all": attribution._finish([{**row, "ours_nodes": 1, "ort_nodes": 1}]),
        "op_types_vs_ort": attribution._finish(
            [{**row, "ort_op": "Conv", "covers": {"Conv": 1}, "ort_nodes": 1, "fusion": ""}]
        ),
    }


def _failed(model: str, threads: int) -> dict[str, Any]:
    return {
        "model": model,
        "description": f"{model} made up",
        "threads": threads,
        "nodes": 1,
        "op_counts": {"NoSuchOp": 1},
        "status": "onnx_light_error",
        "error": "no kernel for NoSuchOp",
        "unsupported_ops": ["NoSuchOp"],
    }


DOC = {
    "schema": attribution.SCHEMA,
    "conditions": {
        "load_before": "load average 0.50 0.40 0.30",
        "load_after": "load average 0.60 0.40 0.30",
        "started_utc": "2026-12-01 23:00:00",
        "onnxruntime": "1.32.0",
        "cpus": 2,
        "samples": 1,
        "profiled_runs": 1,
        "timing": "blocks",
        "timing_mode": "blocks",
        "ort_settings": "ORT defaults",
        "graph_optimization_level": "extended",
        "cpu": "Made-up CPU",
        "build": {"compilation_mode": "opt", "isa_selected": "avx2"},
        "build_mode": "opt",
        "isa": "avx2",
        "corpus": ["torch"],
    },
    "results": [
        _ok("small", 1, 0.5, 1.0),
        _ok("small", 2, 1.0, 1.0),
        _ok("large", 1, 8.0, 4.0),
        _ok("large", 2, 3.0, 4.0),
        _failed("broken", 1),
        _failed("broken", 2),
    ],
}


def test_ratio_summary_is_the_geometric_mean_and_the_largest_ratio() -> None:
    summary = attribution.ratio_summary(DOC)
    assert summary[1]["geometric_mean"] == pytest.approx(1.0)  # sqrt(0.5 * 2.0)
    assert summary[2]["geometric_mean"] == pytest.approx(math.sqrt(0.75))
    assert (summary[1]["max"], summary[1]["max_model"]) == (2.0, "large")
    assert (summary[2]["max"], summary[2]["max_model"]) == (1.0, "small")
    assert summary[1]["models"] == 2 and summary[1]["failed"] == ["broken"]


def test_chart_data_has_one_ratio_per_model_and_thread_count() -> None:
    models, ratios = attribution.chart_data(DOC)
    assert models == ["small", "large", "broken"]
    assert ratios == {1: [0.5, 2.0, None], 2: [1.0, 0.75, None]}


def test_a_model_missing_at_one_thread_count_has_no_bar_there() -> None:
    doc = {**DOC, "results": [_ok("small", 1, 1.0, 2.0), _ok("large", 2, 3.0, 2.0)]}
    assert attribution.chart_data(doc) == (["small", "large"], {1: [0.5, None], 2: [None, 1.5]})


def test_write_produces_the_table_the_json_and_a_png_chart(tmp_path: pathlib.Path) -> None:
    paths = attribution.write(DOC, str(tmp_path), "attribution_torch")
    assert [pathlib.Path(p).name for p in paths] == [
        "attribution_torch.json",
        "attribution_torch.md",
        "attribution_torch.png",
    ]
    assert json.loads((tmp_path / "attribution_torch.json").read_text()) == DOC
    image = matplotlib.image.imread(tmp_path / "attribution_torch.png")
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    # Not a blank canvas: the bars and the 1.0 line are drawn in other colours than the background.
    assert len(np.unique(image.reshape(-1, image.shape[2]), axis=0)) > 10
    text = (tmp_path / "attribution_torch.md").read_text()
    assert "--corpus=torch" in text and "attribution_torch.png" in text
    assert "| 1 | 2 | 1.00 | 2.00 (large) | broken |" in text
    assert "| 2 | 2 | 0.87 | 1.00 (small) | broken |" in text
    assert "CPU Made-up CPU; onnx-light build opt, ISA avx2; onnx-light graph optimization level extended." in text
    assert "| small | 1 | 0.50 | 1.00 | 0.50 |" in text
    assert "| yes (max diff 1.0e-06, relative 1.0e-06) |" in text
    assert "onnx-light failed: `no kernel for NoSuchOp`" in text


def test_markdown_reads_documents_written_before_the_build_fields() -> None:
    old = {**DOC, "conditions": {k: v for k, v in DOC["conditions"].items() if k not in ("build", "corpus")}}
    text = attribution.markdown(old)
    assert "`./bazelw run --config=opt //tools:ort_attribution` at revision" in text
    assert "ISA" not in text.split("\n")[2]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("disabled", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
        ("basic", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC),
        ("extended", ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED),
        ("all", ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
        ("ORT_ENABLE_BASIC", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC),
        ("ort_disable_all", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
    ],
)
def test_optimization_levels_take_ort_names(name: str, expected: ort.GraphOptimizationLevel) -> None:
    assert attribution.optimization_level(name) == expected


@pytest.mark.parametrize("name", ["none", "ORT_ENABLE_EVERYTHING", ""])
def test_unknown_optimization_levels_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="unknown graph optimization level"):
        attribution.optimization_level(name)


def test_run_refuses_an_unknown_timing_before_running_anything() -> None:
    with pytest.raises(ValueError, match="timing must be one of"):
        attribution.run([], [1], attribution.ort_session_at_defaults, timing="alternating")


def test_torch_corpus_names_nodes_by_op_and_position() -> None:
    model = onnx.helper.make_model(
        onnx.helper.make_graph(
            [
                onnx.helper.make_node("Relu", ["x"], ["y"], name="/features/relu"),
                onnx.helper.make_node("Relu", ["y"], ["z"]),
                onnx.helper.make_node("Neg", ["z"], ["w"], name="node_neg"),
            ],
            "g",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
            [onnx.helper.make_tensor_value_info("w", onnx.TensorProto.FLOAT, [2])],
        )
    )
    torch_corpus.rename_nodes(model)
    assert [n.name for n in model.graph.node] == ["Relu_1", "Relu_2", "Neg_3"]


def test_torch_corpus_cache_is_reused_only_with_the_same_settings(tmp_path: pathlib.Path) -> None:
    (tmp_path / "resnet18.onnx").write_bytes(b"not read by cached()")
    settings = torch_corpus._settings("resnet18", "dynamo", torch_corpus.OPSET)
    (tmp_path / "resnet18.json").write_text(json.dumps({"settings": settings}))
    assert torch_corpus.cached("resnet18", str(tmp_path)) == str(tmp_path / "resnet18.onnx")
    assert torch_corpus.cached("resnet18", str(tmp_path), exporter="torchscript") is None
    assert torch_corpus.cached("resnet18", str(tmp_path), opset=torch_corpus.OPSET + 1) is None
    assert torch_corpus.cached("resnet50", str(tmp_path)) is None  # no files
    (tmp_path / "resnet18.onnx").unlink()
    assert torch_corpus.cached("resnet18", str(tmp_path)) is None  # a sidecar alone is not an export


def test_torch_corpus_cache_is_keyed_by_torch_version_and_exporter(tmp_path: pathlib.Path) -> None:
    assert torch_corpus.model_dir(str(tmp_path), "2.13.0+cpu") == str(tmp_path / "torch-2.13.0+cpu" / "dynamo")
    assert torch_corpus.model_dir(str(tmp_path), "2.13.0+cpu", "torchscript") == str(
        tmp_path / "torch-2.13.0+cpu" / "torchscript"
    )


def test_torch_corpus_feeds_are_the_seeded_normal_draw() -> None:
    spec = torch_corpus.MODELS["bert_base_encoder"]
    (feed,) = torch_corpus.feeds(spec).values()
    expected = np.random.default_rng(torch_corpus.FEED_SEED).standard_normal((1, 128, 768)).astype(np.float32)
    np.testing.assert_array_equal(feed, expected)
    assert list(torch_corpus.feeds(spec)) == ["tokens"]
