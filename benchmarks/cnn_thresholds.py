"""Where a second thread pays on the small CNNs: end-to-end latency of a torch-corpus model
at the portable thresholds and with thresholds moved, every setting timed interleaved with
the others in one process, beside ORT.

MobileNetV3-small at 224x224 is ~60 M multiply-adds in 47 nodes at level all: at the
portable thresholds nearly every node runs serially (6 regions per run at 2 threads: the
first convolution, two depthwise convolutions and the two classifier GEMVs), so a second
thread can neither help much nor hurt much. This measures what lowering a family's
threshold buys: Conv/FusedConv parallel.minimum_tasks (GEMM-path convolutions, units of
64^3 multiply-adds), parallel.depthwise_minimum_multiply_adds (depthwise), and
SqueezeExcitation's parallel.minimum_elements, one at a time (--minimum_tasks,
--depthwise_minimum, --se_minimum) and together (--combined); and, at the portable
thresholds, workers that spin longer before parking (--spin_microseconds: with few
regions per run the gaps between them exceed the default 200 us spin, so every region may
wake a parked worker; the sequential sweep's gains from lower thresholds may come from the
extra regions keeping the workers awake rather than from splitting the convolutions).

The measurement rule (kernel_baseline/interleave.h's, for whole models): all sessions of
one (model, thread count) exist at once; block b runs every setting once, the order
rotated by b, each setting's turn being `warmup` untimed runs and `repeats` timed ones
(their median is the block's time). Every block gives one ratio per setting, its time /
the portable setting's time in the same block, so that a load change between blocks hits
both sides of a ratio. A setting's result is the median of its block ratios with the 95%
distribution-free interval of that median (median_interval). ORT is timed once per
(model, thread count), after the blocks and in a block of its own (its workers spin after
a run and would slow whatever ran next), as a reference, not a ratio.

    ./bazelw run //benchmarks:cnn_thresholds -- --models=mobilenet_v3_small,efficientnet_b0 \
        --threads=2 --blocks=20 --output_json=/tmp/cnn_thresholds.json
    ./bazelw run //benchmarks:cnn_thresholds -- --blocks=2 --repeats=1 --warmup=0   # smoke

The corpus comes from //tools:torch_corpus.
"""

import os
import statistics
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx_light
from absl import app, flags
from onnx_light import kernel_tuning
from onnx_light_dev import torch_corpus

from benchmarks.ort_reference import (  # block_order, median_interval: the interleaving rule, shared
    block_order,
    block_samples,
    conditions,
    finish_document,
    median_interval,
    ort_session,
)

FLAGS = flags.FLAGS
flags.DEFINE_list("models", ["mobilenet_v3_small", "efficientnet_b0"], "torch-corpus models (cached .onnx files)")
flags.DEFINE_string("cache_dir", None, "the corpus cache root (default: torch_corpus.DEFAULT_CACHE)")
flags.DEFINE_string("torch_version", "2.13.0+cpu", "the torch release whose export to read")
flags.DEFINE_list("threads", ["1", "2"], "thread counts; the threshold settings run at every count above 1")
flags.DEFINE_list("minimum_tasks", ["8", "4", "2", "1"], "Conv/FusedConv parallel.minimum_tasks values to try")
flags.DEFINE_list("depthwise_minimum", ["262144", "65536"], "parallel.depthwise_minimum_multiply_adds values")
flags.DEFINE_list("se_minimum", ["16384"], "SqueezeExcitation parallel.minimum_elements values")
flags.DEFINE_list(
    "combined",
    ["2/262144"],
    "settings moving Conv and depthwise together, each 'minimum_tasks/depthwise_minimum'",
)
flags.DEFINE_list(
    "spin_microseconds",
    ["5000"],
    "settings at the portable thresholds whose workers spin this long before parking (the "
    "policy's default is 200 us, shorter than the gaps between MobileNetV3's few regions)",
)
flags.DEFINE_integer("blocks", 20, "interleaved blocks per (model, thread count)")
flags.DEFINE_integer("repeats", 20, "timed runs per setting and block")
flags.DEFINE_integer("warmup", 5, "untimed runs before each setting's turn in a block")
flags.DEFINE_integer("ort_repeats", 200, "timed runs of ORT's one block")
flags.DEFINE_string("output_json", None, "also write every block's samples and the summary here")

CONV_KEYS = ("onnx_light/ai.onnx/Conv/float/conv@2", "onnx_light/com.microsoft/FusedConv/float/conv@2")
SE_KEY = "onnx_light/ai.onnx_light/SqueezeExcitation/float/conv@2"
MINIMUM_TASKS = "parallel.minimum_tasks"
DEPTHWISE_MINIMUM = "parallel.depthwise_minimum_multiply_adds"
SE_MINIMUM = "parallel.minimum_elements"

# (label, explicit tuning values, the workers' spin in microseconds or None for the default)
Setting = tuple[str, dict[str, dict[str, Any]], int | None]


def _conv(values: dict[str, int]) -> dict[str, dict[str, Any]]:
    return {key: dict(values) for key in CONV_KEYS}


def settings(
    minimum_tasks: Sequence[str],
    depthwise_minimum: Sequence[str],
    se_minimum: Sequence[str],
    combined: Sequence[str],
    spin_microseconds: Sequence[str] = (),
) -> list[Setting]:
    """The portable defaults first, then one parameter moved at a time, then the combined
    Conv/depthwise settings, then the portable thresholds with longer worker spins."""
    found: list[Setting] = [("portable", {}, None)]
    for value in minimum_tasks:
        found.append((f"conv minimum_tasks={value}", _conv({MINIMUM_TASKS: int(value)}), None))
    for value in depthwise_minimum:
        found.append((f"depthwise minimum={value}", _conv({DEPTHWISE_MINIMUM: int(value)}), None))
    for value in se_minimum:
        found.append((f"SE minimum={value}", {SE_KEY: {SE_MINIMUM: int(value)}}, None))
    for pair in combined:
        tasks, _, depthwise = pair.partition("/")
        if not tasks or not depthwise:
            raise app.UsageError(f"--combined entry {pair!r} is not 'minimum_tasks/depthwise_minimum'")
        found.append(
            (
                f"conv minimum_tasks={tasks} + depthwise minimum={depthwise}",
                _conv({MINIMUM_TASKS: int(tasks), DEPTHWISE_MINIMUM: int(depthwise)}),
                None,
            )
        )
    for value in spin_microseconds:
        found.append((f"portable, workers spin {int(value)} us", {}, int(value)))
    return found


def block_ratios(block_medians: Sequence[Sequence[float]]) -> list[list[float]]:
    """Per block, every setting's median / the first (portable) setting's median."""
    return [[m / block[0] for m in block] for block in block_medians]


def _feeds(session: onnx_light.InferenceSession) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(torch_corpus.FEED_SEED)
    return {
        i.name: rng.standard_normal([d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
        for i in session.get_inputs()
    }


def _measure(name: str, data: bytes, threads: int, chosen: list[Setting]) -> dict[str, Any]:
    """The interleaved blocks of one (model, thread count), then ORT's block."""
    sessions = []
    for _, explicit, spin in chosen:
        source = kernel_tuning.tuning_source(profiles_path=None, explicit=explicit, num_threads=threads)
        policy = (
            onnx_light.CpuExecutionPolicy(num_threads=threads)
            if spin is None
            else onnx_light.CpuExecutionPolicy(num_threads=threads, spin_microseconds=spin)
        )
        sessions.append(onnx_light.InferenceSession(data, cpu_execution=policy, tuning_profile=source))
    feeds = _feeds(sessions[0])
    regions = [len(session.run_with_events(None, feeds)[2]) for session in sessions]
    samples: list[list[list[float]]] = [[] for _ in chosen]  # [setting][block] -> ms
    medians: list[list[float]] = []  # [block][setting]
    for block in range(FLAGS.blocks):
        block_median = [0.0] * len(chosen)
        for s in block_order(len(chosen), block):
            taken = block_samples(sessions[s], feeds, FLAGS.warmup, FLAGS.repeats)
            samples[s].append(taken)
            block_median[s] = statistics.median(taken)
        medians.append(block_median)
    ratios = block_ratios(medians)
    ort = block_samples(ort_session(data, threads), feeds, FLAGS.warmup, FLAGS.ort_repeats)
    rows = []
    for s, (label, explicit, spin) in enumerate(chosen):
        median, low, high, exact = median_interval([r[s] for r in ratios])
        rows.append(
            {
                "setting": label,
                "explicit": explicit,
                "spin_microseconds": spin,
                "regions_per_run": regions[s],
                "median_ms": statistics.median(m[s] for m in medians),
                "ratio": median,
                "ratio_low": low,
                "ratio_high": high,
                "interval_exact": exact,
                "samples_ms": samples[s],
            }
        )
    return {"model": name, "threads": threads, "blocks": FLAGS.blocks, "settings": rows, "ort_ms": ort}


def _print(result: dict[str, Any]) -> None:
    for row in result["settings"]:
        interval = f"[{row['ratio_low']:.2f}, {row['ratio_high']:.2f}]" + ("" if row["interval_exact"] else " (n<6)")
        print(
            f"| {result['model']} | {result['threads']} | {row['setting']} | {row['median_ms']:.3f} | "
            f"{row['ratio']:.3f} | {interval} | {row['regions_per_run']} |"
        )
    portable = result["settings"][0]["median_ms"]
    ort = statistics.median(result["ort_ms"])
    print(
        f"| {result['model']} | {result['threads']} | ORT (default level, own block) | {ort:.3f} | "
        f"{ort / portable:.3f} (not interleaved) | - | - |"
    )
    sys.stdout.flush()


def main(argv: list[str]) -> None:
    del argv
    if FLAGS.blocks < 1 or FLAGS.repeats < 1 or FLAGS.warmup < 0:
        raise app.UsageError("--blocks and --repeats must be at least 1, --warmup at least 0")
    directory = torch_corpus.model_dir(FLAGS.cache_dir, FLAGS.torch_version)
    everything = settings(
        FLAGS.minimum_tasks, FLAGS.depthwise_minimum, FLAGS.se_minimum, FLAGS.combined, FLAGS.spin_microseconds
    )
    print(f"{FLAGS.blocks} interleaved blocks of {FLAGS.warmup} + {FLAGS.repeats} runs per setting")
    print(
        "| model | threads | setting | median of block medians ms | ratio to portable (median of blocks) "
        "| 95% interval | regions per run |"
    )
    print("|---|---|---|---|---|---|---|")
    results = []
    measured = conditions(blocks=FLAGS.blocks, repeats=FLAGS.repeats, warmup=FLAGS.warmup)
    for name in FLAGS.models:
        path = os.path.join(directory, f"{name}.onnx")
        if not os.path.exists(path):
            raise app.UsageError(f"{path} is missing: run //tools:torch_corpus first")
        with open(path, "rb") as f:
            data = f.read()
        for threads in (int(t) for t in FLAGS.threads):
            chosen = everything if threads > 1 else everything[:1]
            results.append(_measure(name, data, threads, chosen))
            _print(results[-1])
    document = {"blocks": FLAGS.blocks, "repeats": FLAGS.repeats, "conditions": measured, "results": results}
    finish_document(document, FLAGS.output_json)


if __name__ == "__main__":
    app.run(main)
