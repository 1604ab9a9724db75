"""Where a second thread pays on the small CNNs: end-to-end latency of a torch-corpus model
at the portable thresholds and with one threshold moved at a time, beside ORT, with the
parallel regions each setting opens per run.

MobileNetV3-small at 224x224 is ~60 M multiply-adds in 47 nodes at level all: at the
portable thresholds nearly every node runs serially (6 regions per run at 2 threads: the
first convolution, two depthwise convolutions and the two classifier GEMVs), so a second
thread can neither help much nor hurt much. This measures what lowering a family's
threshold buys: Conv/FusedConv parallel.minimum_tasks (GEMM-path convolutions, units of
64^3 multiply-adds), parallel.depthwise_minimum_multiply_adds (depthwise), and
SqueezeExcitation's parallel.minimum_elements. Each runtime and setting is timed in its
own block (ort_reference.block_samples). The corpus comes from //tools:torch_corpus.

    ./bazelw run //benchmarks:cnn_thresholds -- --models=mobilenet_v3_small,efficientnet_b0
    ./bazelw run //benchmarks:cnn_thresholds -- --repeats=1 --warmup=0 --minimum_tasks=8   # smoke
"""

import os
import statistics
import sys
from typing import Any

import numpy as np
import onnx_light
from absl import app, flags
from onnx_light import kernel_tuning
from onnx_light_dev import torch_corpus

from benchmarks.ort_reference import block_samples, ort_session

FLAGS = flags.FLAGS
flags.DEFINE_list("models", ["mobilenet_v3_small", "efficientnet_b0"], "torch-corpus models (cached .onnx files)")
flags.DEFINE_string("cache_dir", None, "the corpus cache root (default: torch_corpus.DEFAULT_CACHE)")
flags.DEFINE_string("torch_version", "2.13.0+cpu", "the torch release whose export to read")
flags.DEFINE_list("threads", ["1", "2"], "thread counts; the threshold sweep runs at every count above 1")
flags.DEFINE_list("minimum_tasks", ["8", "4", "2"], "Conv/FusedConv parallel.minimum_tasks values to try")
flags.DEFINE_list("depthwise_minimum", ["262144", "65536"], "parallel.depthwise_minimum_multiply_adds values")
flags.DEFINE_list("se_minimum", ["16384"], "SqueezeExcitation parallel.minimum_elements values")
flags.DEFINE_integer("repeats", 50, "timed runs per block")
flags.DEFINE_integer("warmup", 10, "untimed runs before each block")

CONV_KEYS = ("onnx_light/ai.onnx/Conv/float/conv@2", "onnx_light/com.microsoft/FusedConv/float/conv@2")
SE_KEY = "onnx_light/ai.onnx_light/SqueezeExcitation/float/conv@2"


def _settings() -> list[tuple[str, dict[str, dict[str, Any]]]]:
    """(label, explicit tuning values): the portable defaults, then one parameter moved."""
    found: list[tuple[str, dict[str, dict[str, Any]]]] = [("portable", {})]
    for value in FLAGS.minimum_tasks:
        found.append((f"conv minimum_tasks={value}", {k: {"parallel.minimum_tasks": int(value)} for k in CONV_KEYS}))
    for value in FLAGS.depthwise_minimum:
        found.append(
            (
                f"depthwise minimum={value}",
                {k: {"parallel.depthwise_minimum_multiply_adds": int(value)} for k in CONV_KEYS},
            )
        )
    for value in FLAGS.se_minimum:
        found.append((f"SE minimum={value}", {SE_KEY: {"parallel.minimum_elements": int(value)}}))
    return found


def _feeds(session: onnx_light.InferenceSession) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(torch_corpus.FEED_SEED)
    return {
        i.name: rng.standard_normal([d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
        for i in session.get_inputs()
    }


def main(argv: list[str]) -> None:
    del argv
    directory = torch_corpus.model_dir(FLAGS.cache_dir, FLAGS.torch_version)
    print("| model | threads | runtime / setting | median ms | vs portable | regions per run |")
    print("|---|---|---|---|---|---|")
    for name in FLAGS.models:
        path = os.path.join(directory, f"{name}.onnx")
        if not os.path.exists(path):
            raise app.UsageError(f"{path} is missing: run //tools:torch_corpus first")
        with open(path, "rb") as f:
            data = f.read()
        for threads in (int(t) for t in FLAGS.threads):
            baseline = None
            for label, explicit in _settings() if threads > 1 else _settings()[:1]:
                source = kernel_tuning.tuning_source(profiles_path=None, explicit=explicit, num_threads=threads)
                session = onnx_light.InferenceSession(
                    data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads), tuning_profile=source
                )
                feeds = _feeds(session)
                _, _, regions = session.run_with_events(None, feeds)
                median = statistics.median(block_samples(session, feeds, FLAGS.warmup, FLAGS.repeats))
                baseline = baseline or median
                print(f"| {name} | {threads} | {label} | {median:.3f} | {median / baseline:.2f} | {len(regions)} |")
                sys.stdout.flush()
            ort = ort_session(data, threads)
            median = statistics.median(block_samples(ort, _feeds(session), FLAGS.warmup, FLAGS.repeats))
            print(f"| {name} | {threads} | ORT (default level) | {median:.3f} | {median / baseline:.2f} | - |")


if __name__ == "__main__":
    app.run(main)
