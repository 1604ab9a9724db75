"""ONNX Runtime sessions for side-by-side benchmarks, configured alike everywhere, and the
interleaved sampling the single-op comparisons share, and the per-runtime blocks the others use.

ORT's intra-op workers spin after each run (session.intra_op.allow_spinning=1 by
default), holding a core for a while. The benchmarks that interleave onnx-light and ORT
sample by sample switch spinning off (ort_session's default), or a spinning ORT worker
would sit on the second core during our 2-thread runs. The benchmarks that time each
runtime in its own block (paired_blocks) may leave ORT at its defaults: a pause of
ORT_PAUSE_S after every ORT block (and after the agreement run before it) lets ORT's
workers go to sleep before onnx-light runs again. ORT is otherwise left at its defaults
(all graph optimizations, its own thread pool with the requested size).
"""

import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import onnxruntime as ort

# Longer than ORT's workers spin after a run (tools/onnx_light_dev/attribution.py's
# BLOCK_PAUSE_S, found in session 8: on 2 cores a runtime timed right after ORT's block
# otherwise lost its second core).
ORT_PAUSE_S = 0.5


def ort_session(
    model,
    threads,
    graph_optimization_level=None,
    profile_prefix=None,
    optimized_model_path=None,
    spinning=False,
):
    """An ORT CPU session on `threads` intra-op threads; model: ModelProto or bytes.
    profile_prefix: enable ORT's profiler (end_profiling() writes <prefix>_<time>.json);
    optimized_model_path: where ORT saves the graph it runs (after its fusions);
    spinning: leave ORT's intra-op spinning at its default (on) instead of switching it off
    (only for runtimes timed in blocks with a pause after ORT's: paired_blocks)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if graph_optimization_level is not None:
        options.graph_optimization_level = graph_optimization_level
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    if optimized_model_path is not None:
        options.optimized_model_filepath = optimized_model_path
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def interleaved_samples(ours, theirs, feeds, repeats, per_repeat=None):
    """onnx-light and ORT run alternately `repeats` times, so that load from other processes
    hits both alike. Returns {"onnx_light": wall ms, "ort": wall ms, "onnx_light_kernel":
    onnx-light's summed node time (run_with_events) in ms}, one entry per repeat;
    `per_repeat()` (optional) runs once per repeat as well."""
    samples = {"onnx_light": [], "ort": [], "onnx_light_kernel": []}
    for _ in range(repeats):
        for name, session in (("onnx_light", ours), ("ort", theirs)):
            start = time.perf_counter()
            session.run(None, feeds)
            samples[name].append((time.perf_counter() - start) * 1e3)
        _, nodes, _ = ours.run_with_events(None, feeds)
        samples["onnx_light_kernel"].append(sum(e.duration_ns for e in nodes) / 1e6)
        if per_repeat is not None:
            per_repeat()
    return samples


def block_samples(session, feeds, warmup, repeats, clock=time.perf_counter):
    """Milliseconds of `repeats` runs of one session after `warmup` untimed ones, by `clock`
    (wall clock; time.process_time for process CPU time): one runtime's block, for the
    benchmarks that time each runtime in its own block (so that neither pays for the
    other's spinning workers)."""
    for _ in range(warmup):
        session.run(None, feeds)
    samples = []
    for _ in range(repeats):
        start = clock()
        session.run(None, feeds)
        samples.append((clock() - start) * 1e3)
    return samples


def paired_blocks(
    ours: Any,
    theirs: Any,
    feeds: dict[str, Any],
    warmup: int,
    repeats: int,
    pause_s: float = ORT_PAUSE_S,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, list[float]]:
    """onnx-light's block, then ORT's (block_samples each), with a pause of `pause_s` before
    onnx-light's (whatever ran before may have been ORT: the agreement run, the previous
    case's block) and after ORT's, so that no onnx-light run meets ORT's spinning workers.
    Returns {"onnx_light": wall ms, "ort": wall ms}."""
    sleep(pause_s)
    samples = {"onnx_light": block_samples(ours, feeds, warmup, repeats)}
    samples["ort"] = block_samples(theirs, feeds, warmup, repeats)
    sleep(pause_s)
    return samples


def block_timing_conditions(spinning: bool, pause_s: float) -> dict[str, Any]:
    """What paired_blocks' timing was, for a benchmark's JSON conditions."""
    return {
        "timing": "blocks: onnx-light's warm-up and samples, then ORT's, each case and thread count",
        "ort_intra_op_spinning": "on (ORT's default)" if spinning else "off (session.intra_op.allow_spinning=0)",
        "pause_after_ort_s": pause_s,
        "pause_rule": "a pause before onnx-light's block (after the agreement run) and after ORT's block",
    }


def write_results(path, results, started):
    """Every case's medians and raw samples, with the conditions taken when the run started
    (`started`, from conditions()) and the load average after it."""
    finish_document({"onnxruntime": ort.__version__, "conditions": started, "results": results}, path)


def cpu_model():
    with open("/proc/cpuinfo") as f:
        return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown")


def conditions(**extra):
    """What every published timing records beside its samples: the CPU, the build it ran
    (onnx_light.build_info(): compilation mode, ISA, revision), ORT's version and the load
    average before the run (finish_document adds the one after)."""
    import os

    import onnx_light

    return {
        "cpu": cpu_model(),
        "build": onnx_light.build_info(),
        "onnxruntime": ort.__version__,
        "load_average_before": os.getloadavg(),
        **extra,
    }


def finish_document(doc, path):
    """Records the load average after the run and writes doc to path (if one is given)."""
    import os

    doc["conditions"]["load_average_after"] = os.getloadavg()
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)


def block_order(count: int, block: int) -> list[int]:
    """The order in which block `block` runs `count` settings: 0..count-1 rotated by the block."""
    return [(block + i) % count for i in range(count)]


def median_interval(values: Sequence[float]) -> tuple[float, float, float, bool]:
    """(median, low, high, exact): the median and its 95% distribution-free confidence
    interval, the order statistics x(j) and x(n + 1 - j) with the largest j such that
    P(Binomial(n, 1/2) < j) <= 2.5% (kernel_baseline/interleave.h's MedianInterval);
    exact is False, and the interval the sample's range, when n is too small (< 6)."""
    x = sorted(values)
    n = len(x)
    if n == 0:
        raise ValueError("median_interval of no values")
    median = statistics.median(x)
    j = 0
    cumulative = 0.0
    for i in range(n):
        cumulative += math.comb(n, i) / 2.0**n  # P(X <= i)
        if cumulative > 0.025:
            break
        j = i + 1
    if j == 0:
        return median, x[0], x[-1], False
    return median, x[j - 1], x[n - j], True
