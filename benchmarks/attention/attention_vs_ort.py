"""Attention (opset 23) in onnx-light beside ONNX Runtime, interleaved in one run.

The machine is shared, so rounds alternate between the two runtimes (each round: the
onnx-light kernel binary for `--reps` samples after its warm-ups, then ORT for as many)
and both see the same load. Prints every raw sample, the medians and minimums, and the
speed ratio ORT time / onnx-light time (>= 1 means onnx-light is faster).

    bazel run --config=opt //benchmarks/attention:attention_vs_ort -- --threads=1,2
"""

import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np
from onnx import TensorProto, helper

from benchmarks.ort_reference import ort_session


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


def ours_samples(binary, args, threads, reps):
    out = subprocess.run(
        [
            binary,
            f"--batch={args.batch}",
            f"--heads={args.heads}",
            f"--seq={args.seq}",
            f"--head_size={args.head_size}",
            f"--causal={int(args.causal)}",
            f"--threads={threads}",
            f"--reps={reps}",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["samples_ms"], result["cpu_ms"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--head_size", type=int, default=64)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "attention_bench"))
    args = parser.parse_args()
    shape = [args.batch, args.heads, args.seq, args.head_size]
    rng = np.random.default_rng(0)
    feeds = {n: rng.uniform(-1, 1, shape).astype(np.float32) for n in "QKV"}
    print(f"Attention fp32 {shape} causal={args.causal}, {args.rounds} interleaved rounds x {args.reps} reps")
    for threads in [int(t) for t in args.threads.split(",")]:
        session = ort_attention_session(shape, threads, args.causal)
        ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
        for _ in range(args.rounds):
            wall, cpu = ours_samples(args.binary, args, threads, args.reps)
            ours += wall
            ours_cpu += cpu
            wall, cpu = ort_samples(session, feeds, args.reps)
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
    main()
