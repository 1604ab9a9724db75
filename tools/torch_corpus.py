"""torch_corpus: exports the PyTorch model corpus and checks onnx-light against ORT on it.

    pip install -r benchmarks/requirements-corpus.txt     # torch, torchvision (benchmark only)
    ./bazelw run //tools:torch_corpus                      # all six models, every level
    ./bazelw run //tools:torch_corpus -- --models=resnet18 --levels=disabled

Exports each model (tools/onnx_light_dev/torch_corpus.py) into --cache_dir, keyed by torch
version and model name, and reuses an export made with the same settings (--force
re-exports). Then runs it with ORT (default level) and with onnx-light at each graph
optimisation level on one random input and prints the largest difference, or the error a
model failed to load or run with. --output writes those rows as JSON.
"""

import json
import sys

from absl import app, flags
from onnx_light_dev import torch_corpus

FLAGS = flags.FLAGS
flags.DEFINE_list("models", [], f"models to export (default: all of {torch_corpus.NAMES})")
flags.DEFINE_string("cache_dir", torch_corpus.DEFAULT_CACHE, "export cache (a torch-<version> folder inside)")
flags.DEFINE_enum("exporter", torch_corpus.DEFAULT_EXPORTER, torch_corpus.EXPORTERS, "torch.onnx.export path")
flags.DEFINE_boolean("force", False, "export again even when the cache holds the model")
flags.DEFINE_list(
    "levels",
    ["default", "disabled", "basic", "extended", "all"],
    "onnx-light graph optimisation levels to validate (default: the session's default; or an ORT name)",
)
flags.DEFINE_integer("threads", 2, "onnx-light threads for validation")
flags.DEFINE_boolean("validate", True, "run each export with ORT and onnx-light and compare")
flags.DEFINE_string("output", None, "write the validation rows to this JSON file (an absolute path under bazel run)")


def _log(message: str) -> None:
    print(f"torch_corpus: {message}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> None:
    del argv
    unknown = set(FLAGS.models) - set(torch_corpus.NAMES)
    if unknown:
        raise app.UsageError(f"unknown models {sorted(unknown)}; corpus: {torch_corpus.NAMES}")
    for name in [n for n in torch_corpus.NAMES if not FLAGS.models or n in FLAGS.models]:
        path = torch_corpus.export(name, FLAGS.cache_dir, FLAGS.exporter, force=FLAGS.force, log=_log)
        _log(f"{name}: {path}")
    if not FLAGS.validate:
        return
    levels = [None if level == "default" else level for level in FLAGS.levels]
    rows = []
    for model in torch_corpus.corpus(FLAGS.models or None, FLAGS.cache_dir, FLAGS.exporter):
        for row in torch_corpus.validate(model, FLAGS.threads, levels):
            rows.append(row)
            if row["status"] == "ok":
                outcome = (
                    f"max |ours-ORT| {row['max_abs_diff']:.2e} (max |ORT| {row['reference_max_abs']:.2e}, "
                    f"relative {row['relative_diff']:.1e}){'' if row['ok'] else ' OUTSIDE TOLERANCE'}"
                )
            else:
                outcome = f"{row['status']}: {row['error']}"
            print(f"{row['model']:20} level {row['level']:9} {outcome}", flush=True)
    if FLAGS.output:
        with open(FLAGS.output, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
        _log(f"wrote {FLAGS.output}")


if __name__ == "__main__":
    app.run(main)
