"""ort_attribution: where onnx-light spends a whole model's time, per op type, beside ONNX Runtime.

    ./bazelw run //tools:ort_attribution            # writes benchmarks/reports/attribution/
    ./bazelw run //tools:ort_attribution -- --models=mlp --threads=1 --samples=5

For each corpus model (tools/onnx_light_dev/model_corpus.py) and thread count: outputs
checked against ORT, end-to-end times interleaved with ORT and ORT_DISABLE_ALL, per-node
times from both runtimes aggregated per op type (ORT's fusions mapped to the nodes they
cover). Writes attribution.md and attribution.json (every raw sample).
"""

import os
import sys
from typing import Any

import onnxruntime as ort
from absl import app, flags
from onnx_light_dev import attribution, environment, model_corpus

from benchmarks.ort_reference import ort_session

FLAGS = flags.FLAGS
flags.DEFINE_list("models", [], "corpus models to run (default: all)")
flags.DEFINE_list("threads", ["1", "2"], "thread counts, both runtimes")
flags.DEFINE_integer("samples", 30, "end-to-end samples per runtime, interleaved")
flags.DEFINE_integer("profiled_runs", 15, "profiled runs per runtime for per-node medians")
flags.DEFINE_string(
    "output_dir", None, "where to write attribution.md/.json (default: benchmarks/reports/attribution of the workspace)"
)


def main(argv: list[str]) -> None:
    del argv
    ort.set_default_logger_severity(3)  # ORT warns that a saved NCHWc graph is machine-specific
    models = [m for m in model_corpus.corpus() if not FLAGS.models or m.name in FLAGS.models]
    unknown = set(FLAGS.models) - {m.name for m in models}
    if unknown:
        raise app.UsageError(f"unknown models {sorted(unknown)}; corpus: {[m.name for m in model_corpus.corpus()]}")

    def progress(r: dict[str, Any]) -> None:
        ratio = f"ours/ORT {r['ratio_vs_ort']:.2f}" if r["status"] == "ok" else r["error"]
        print(f"ort_attribution: {r['model']} {r['threads']}T: {ratio}", file=sys.stderr, flush=True)

    doc = attribution.run(
        models, [int(t) for t in FLAGS.threads], ort_session, FLAGS.samples, FLAGS.profiled_runs, progress
    )
    workspace = environment.workspace_dir()
    doc["conditions"]["revision"] = environment.revision(workspace) or "unknown"
    doc["conditions"]["uncommitted_changes"] = environment.has_uncommitted_changes(workspace)
    for problem in attribution.problems(doc):
        print(f"ort_attribution: {problem}", file=sys.stderr)
    out = FLAGS.output_dir or os.path.join(workspace or ".", "benchmarks", "reports", "attribution")
    attribution.write(doc, out)
    print(f"ort_attribution: wrote {out}/attribution.md and attribution.json", file=sys.stderr)


if __name__ == "__main__":
    app.run(main)
