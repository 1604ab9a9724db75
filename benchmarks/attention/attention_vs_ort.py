"""Attention (opset 23) in onnx-light beside ONNX Runtime, interleaved in one run.

The machine is shared, so rounds alternate between the two runtimes (each round: the
onnx-light kernel binary for `--reps` samples after its warm-ups, then ORT for as many)
and both see the same load. Prints every raw sample, the medians and minimums, and the
speed ratio ORT time / onnx-light time (>= 1 means onnx-light is faster).

    bazel run --config=opt //benchmarks/attention:attention_vs_ort -- --threads=1,2
"""

import json
import os
import statistics
import subprocess
import time

import numpy as np
from absl import app, flags
from onnx import TensorProto, helper

from benchmarks.ort_reference import ort_session

FLAGS = flags.FLAGS
flags.DEFINE_integer("batch", 1, "batch size")
flags.DEFINE_integer("heads", 12, "attention heads")
flags.DEFINE_integer("seq", 512, "sequence length")
flags.DEFINE_integer("head_size", 64, "size of one head")
flags.DEFINE_boolean("causal", False, "causal mask")
flags.DEFINE_list("threads", ["1", "2"], "thread counts to compare")
flags.DEFINE_integer("rounds", 6, "interleaved rounds")
flags.DEFINE_integer("reps", 5, "samples per runtime and round")
flags.DEFINE_string(
    "binary", os.path.join(os.path.dirname(__file__), "attention_bench"), "the onnx-light kernel binary"
)


def ort_attention_session(shape, threads, causal):
    node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=int(causal))
    graph = helper.make_graph(
        [node],
        "attention",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "QKV"],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    return ort_session(model, threads)


def ort_samples(session, feeds, reps):
    for _ in range(2):  # warm-ups, as the native bench
        session.run(None, feeds)
    wall, cpu = [], []
    for _ in range(reps):
        cpu_start, start = time.process_time(), time.perf_counter()
        session.run(None, feeds)
        wall.append((time.perf_counter() - start) * 1e3)
        cpu.append((time.process_time() - cpu_start) * 1e3)
    return wall, cpu


def ours_samples(binary: str, threads: int, reps: int) -> tuple[list[float], list[float]]:
    out = subprocess.run(
        [
            binary,
            f"--batch={FLAGS.batch}",
            f"--heads={FLAGS.heads}",
            f"--seq={FLAGS.seq}",
            f"--head_size={FLAGS.head_size}",
            f"--causal={int(FLAGS.causal)}",
            f"--threads={threads}",
            f"--reps={reps}",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["samples_ms"], result["cpu_ms"]


def main(argv: list[str]) -> None:
    del argv  # flags only
    shape = [FLAGS.batch, FLAGS.heads, FLAGS.seq, FLAGS.head_size]
    rng = np.random.default_rng(0)
    feeds = {n: rng.uniform(-1, 1, shape).astype(np.float32) for n in "QKV"}
    print(f"Attention fp32 {shape} causal={FLAGS.causal}, {FLAGS.rounds} interleaved rounds x {FLAGS.reps} reps")
    for threads in [int(t) for t in FLAGS.threads]:
        session = ort_attention_session(shape, threads, FLAGS.causal)
        ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
        for _ in range(FLAGS.rounds):
            wall, cpu = ours_samples(FLAGS.binary, threads, FLAGS.reps)
            ours += wall
            ours_cpu += cpu
            wall, cpu = ort_samples(session, feeds, FLAGS.reps)
            theirs += wall
            theirs_cpu += cpu
        result = {
            "threads": threads,
            "onnx_light_wall_ms": [round(x, 3) for x in ours],
            "ort_wall_ms": [round(x, 3) for x in theirs],
            "onnx_light_cpu_ms": [round(x, 3) for x in ours_cpu],
            "ort_cpu_ms": [round(x, 3) for x in theirs_cpu],
            "median_wall_ms": {"onnx_light": statistics.median(ours), "ort": statistics.median(theirs)},
            "min_wall_ms": {"onnx_light": min(ours), "ort": min(theirs)},
            "median_cpu_ms": {"onnx_light": statistics.median(ours_cpu), "ort": statistics.median(theirs_cpu)},
            # ORT time / onnx-light time: >= 1 means onnx-light is faster.
            "speed_ratio_median_wall": statistics.median(theirs) / statistics.median(ours),
            "speed_ratio_min_wall": min(theirs) / min(ours),
            "speed_ratio_median_cpu": statistics.median(theirs_cpu) / statistics.median(ours_cpu),
        }
        print(json.dumps(result))


if __name__ == "__main__":
    app.run(main)
