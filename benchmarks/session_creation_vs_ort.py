"""Session creation time per graph optimisation level, beside ONNX Runtime at its default
level (the session 6 table's measurement): for each model, `--samples` fresh onnx-light
sessions per level in one process, then `--samples` ORT sessions, each runtime in its own
block. Also records what the rewrites did per level as counts (graph indexes built, shape
inferences run; onnx_light.graph_rewrites._graph.COUNTS). Benchmark, not a test.

    ./bazelw run //benchmarks:session_creation_vs_ort -- \
        --models=bert_base_encoder,resnet50,mobilenet_v3_small --exporters=dynamo,torchscript \
        --samples=5 --output=$PWD/benchmarks/reports/creation/creation.json

Models come from the PyTorch corpus cache (tools:torch_corpus fills it); --paths takes
.onnx files instead. --tiny builds one small model in memory (a smoke run of the script).
"""

import glob
import os
import time

import numpy as np
import onnx
import onnx_light
import onnxruntime as ort
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper
from onnx_light.graph_rewrites import _graph

from benchmarks.ort_reference import conditions, finish_document

CORPUS = os.path.join("~", ".cache", "onnx-light", "corpus")
FLAGS = flags.FLAGS
flags.DEFINE_string("corpus_dir", CORPUS, "the torch corpus cache (a torch-<version> folder inside)")
flags.DEFINE_list("models", ["bert_base_encoder", "resnet50", "mobilenet_v3_small"], "corpus model names")
flags.DEFINE_list("exporters", ["dynamo", "torchscript"], "corpus exporters")
flags.DEFINE_list("paths", [], ".onnx files to measure instead of the corpus")
flags.DEFINE_list("levels", ["disabled", "basic", "extended", "all"], "onnx-light optimisation levels")
flags.DEFINE_integer("samples", 3, "fresh sessions per runtime and level")
flags.DEFINE_boolean("tiny", False, "one small in-memory model only (checks the script runs)")
flags.DEFINE_string("output", "", "where to write the JSON results")


def tiny_model() -> onnx.ModelProto:
    """Conv + BatchNormalization + Relu and a constant chain: something for every level."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(np.ones(4, np.float32), "scale"),
        numpy_helper.from_array(np.zeros(4, np.float32), "shift"),
        numpy_helper.from_array(np.zeros(4, np.float32), "mean"),
        numpy_helper.from_array(np.ones(4, np.float32), "var"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["b"]),
        helper.make_node("Relu", ["b"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def models() -> list[tuple[str, object]]:
    if FLAGS.tiny:
        return [("tiny", tiny_model().SerializeToString())]
    if FLAGS.paths:
        return [(os.path.basename(p), p) for p in FLAGS.paths]
    found = []
    root = os.path.expanduser(FLAGS.corpus_dir)
    for exporter in FLAGS.exporters:
        for name in FLAGS.models:
            paths = sorted(glob.glob(os.path.join(root, "torch-*", exporter, f"{name}.onnx")))
            if not paths:
                raise SystemExit(f"{name} ({exporter}) is not in {root}: run //tools:torch_corpus first")
            found.append((f"{name} ({exporter})", paths[-1]))
    return found


def creation_ms(create, samples: int) -> list[float]:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        create()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def main(argv: list[str]) -> None:
    del argv  # flags only
    doc = {"benchmark": "session_creation_vs_ort", "results": [], "conditions": conditions(samples=FLAGS.samples)}
    for label, model in models():
        row: dict = {"model": label, "onnx_light_ms": {}, "rewrite_counts": {}}
        for level in FLAGS.levels:
            _graph.COUNTS.clear()
            row["onnx_light_ms"][level] = creation_ms(
                lambda m=model, level=level: onnx_light.InferenceSession(m, graph_optimization_level=level),
                FLAGS.samples,
            )
            row["rewrite_counts"][level] = {k: v // FLAGS.samples for k, v in _graph.COUNTS.items()}
        row["ort_ms"] = creation_ms(
            lambda m=model: ort.InferenceSession(m, providers=["CPUExecutionProvider"]), FLAGS.samples
        )
        doc["results"].append(row)
        best = " ".join(f"{lv} {min(ms):.0f}" for lv, ms in row["onnx_light_ms"].items())
        print(f"{label}: {best} | ORT {min(row['ort_ms']):.0f} ms (best of {FLAGS.samples})")
        print(f"    per session, indexes built / shape inferences: {row['rewrite_counts']}")
    finish_document(doc, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
