"""ort_attribution: where onnx-light spends a whole model's time, per op type, beside ONNX Runtime.

    ./bazelw run //tools:ort_attribution            # writes benchmarks/reports/attribution/
    ./bazelw run //tools:ort_attribution -- --models=mlp --threads=1 --samples=5
    ./bazelw run //tools:ort_attribution -- --corpus=torch   # the PyTorch-exported corpus

For each corpus model and thread count: outputs checked against ORT, end-to-end times of
onnx-light, ORT and ORT_DISABLE_ALL, per-node times from both runtimes aggregated per op
type (ORT's fusions mapped to the nodes they cover). Corpora: builtin
(tools/onnx_light_dev/model_corpus.py, timed interleaved sample by sample with ORT's
spinning off) and torch (tools/onnx_light_dev/torch_corpus.py, exported on first use into
--cache_dir; each runtime timed in its own block, ORT at its defaults). Writes
<name>.md, <name>.json (every raw sample) and <name>.png (ours/ORT per model): name is
attribution for the builtin corpus, attribution_<corpora>[_<exporter>] otherwise.

ONNX_LIGHT_MAX_ISA caps onnx-light's kernels only: ORT runs the host's best ISA (it cannot
be capped without CPUID faulting), and the conditions say so (isa_capped, ort_isa,
isa_note). Like-for-like AVX2 comparisons are callgrind's (benchmarks/instructions_vs_ort.py).
"""

import os
import sys
from typing import Any

import onnxruntime as ort
from absl import app, flags
from onnx_light_dev import attribution, environment, model_corpus, torch_corpus

from benchmarks.ort_reference import ort_session

FLAGS = flags.FLAGS
CORPORA = ("builtin", "torch")
flags.DEFINE_list("corpus", ["builtin"], f"corpora to run, of {list(CORPORA)}")
flags.DEFINE_list("models", [], "corpus models to run (default: all of the chosen corpora)")
flags.DEFINE_list("threads", ["1", "2"], "thread counts, both runtimes")
flags.DEFINE_integer("samples", 30, "end-to-end samples per runtime")
flags.DEFINE_integer(
    "rounds",
    1,
    "blocks timing: rounds of blocks (order rotating), the samples split over them; the "
    "ratio is the median of the per-round ratios (drift moves both runtimes of a round)",
)
flags.DEFINE_enum(
    "timing",
    None,
    list(attribution.TIMINGS),
    "interleaved (sample by sample, ORT spinning off) or blocks (each runtime in its own block, "
    "ORT at its defaults); default: interleaved for the builtin corpus alone, blocks otherwise",
)
flags.DEFINE_string(
    "graph_optimization_level",
    None,
    "onnx-light's graph optimisation level, passed on as ORT's sess_options carry it: "
    "disabled, basic, extended, all or an ORT name (ORT_ENABLE_BASIC, ...); default: the session's",
)
flags.DEFINE_string("cache_dir", torch_corpus.DEFAULT_CACHE, "the torch corpus' export cache")
flags.DEFINE_enum("torch_exporter", torch_corpus.DEFAULT_EXPORTER, torch_corpus.EXPORTERS, "the torch corpus' exporter")
flags.DEFINE_string("output_name", None, "file name stem of the outputs (default: see above)")
flags.DEFINE_integer("profiled_runs", 15, "profiled runs per runtime for per-node medians")
flags.DEFINE_string(
    "output_dir", None, "where to write attribution.md/.json (default: benchmarks/reports/attribution of the workspace)"
)


def _log(message: str) -> None:
    print(f"ort_attribution: {message}", file=sys.stderr, flush=True)


def _models(corpora: list[str], names: list[str]) -> list[model_corpus.CorpusModel]:
    """The chosen corpora's models (all, or those named), each corpus smallest first."""
    available = {
        "builtin": [m.name for m in model_corpus.corpus()] if "builtin" in corpora else [],
        "torch": torch_corpus.NAMES if "torch" in corpora else [],
    }
    unknown = set(names) - {n for corpus in available.values() for n in corpus}
    if unknown:
        raise app.UsageError(f"unknown models {sorted(unknown)}; corpora {corpora}: {available}")
    models = [m for m in model_corpus.corpus() if "builtin" in corpora and (not names or m.name in names)]
    if "torch" in corpora:
        wanted = [n for n in torch_corpus.NAMES if not names or n in names]
        if wanted:
            models += torch_corpus.corpus(wanted, FLAGS.cache_dir, FLAGS.torch_exporter, log=_log)
    return models


def main(argv: list[str]) -> None:
    del argv
    ort.set_default_logger_severity(3)  # ORT warns that a saved NCHWc graph is machine-specific
    unknown = set(FLAGS.corpus) - set(CORPORA)
    if unknown or not FLAGS.corpus:
        raise app.UsageError(f"--corpus: give some of {list(CORPORA)}, not {FLAGS.corpus}")
    corpora = [c for c in CORPORA if c in FLAGS.corpus]
    if FLAGS.graph_optimization_level is not None:
        try:
            attribution.optimization_level(FLAGS.graph_optimization_level)
        except ValueError as error:
            raise app.UsageError(str(error)) from error
    timing = FLAGS.timing or ("interleaved" if corpora == ["builtin"] else "blocks")
    models = _models(corpora, FLAGS.models)

    def progress(r: dict[str, Any]) -> None:
        ratio = f"ours/ORT {r['ratio_vs_ort']:.2f}" if r["status"] == "ok" else r["error"]
        print(f"ort_attribution: {r['model']} {r['threads']}T: {ratio}", file=sys.stderr, flush=True)

    doc = attribution.run(
        models,
        [int(t) for t in FLAGS.threads],
        ort_session if timing == "interleaved" else attribution.ort_session_at_defaults,
        FLAGS.samples,
        FLAGS.profiled_runs,
        progress,
        timing=timing,
        level=FLAGS.graph_optimization_level,
        rounds=FLAGS.rounds,
    )
    workspace = environment.workspace_dir()
    doc["conditions"]["corpus"] = corpora
    if "torch" in corpora:
        doc["conditions"]["torch_exporter"] = FLAGS.torch_exporter
    doc["conditions"]["revision"] = environment.revision(workspace) or "unknown"
    doc["conditions"]["uncommitted_changes"] = environment.has_uncommitted_changes(workspace)
    if doc["conditions"]["isa_capped"]:
        _log(doc["conditions"]["isa_note"])  # also in the report's conditions line and JSON
    for problem in attribution.problems(doc):
        print(f"ort_attribution: {problem}", file=sys.stderr)
    out = FLAGS.output_dir or os.path.join(workspace or ".", "benchmarks", "reports", "attribution")
    name = FLAGS.output_name or ("attribution" if corpora == ["builtin"] else "attribution_" + "_".join(corpora))
    if not FLAGS.output_name and "torch" in corpora and FLAGS.torch_exporter != torch_corpus.DEFAULT_EXPORTER:
        name += f"_{FLAGS.torch_exporter}"
    paths = attribution.write(doc, out, name)
    print(f"ort_attribution: wrote {', '.join(paths)}", file=sys.stderr)


if __name__ == "__main__":
    app.run(main)
