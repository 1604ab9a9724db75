"""Microkernel / blocking comparison on the native engine, raw samples as CSV.

Runs //native/kernels/gemm:gemm_engine_bench for each (configuration, shape), where a
configuration is a kernel with optional cache blocking, "kernel[:kc[:nc]]" (e.g.
avx512_12x32:256:640; 0 or nothing keeps the kernel's own). Configurations are
interleaved round by round so that machine load hits them alike; every repetition
(configuration x shape x round x repetition) goes to CSV, with the median per pair
printed and, with --summary, written as a second CSV.

    bazel build -c opt //native/kernels/gemm:gemm_engine_bench
    python3 benchmarks/gemm/compare_kernels.py --bench bazel-bin/native/kernels/gemm/gemm_engine_bench \\
        --configs avx512_12x32,avx512_8x48,avx512_12x32:256,avx512_12x32:384:960 --out samples.csv
"""

import csv
import statistics
import subprocess

from absl import app, flags

SHAPES = [
    "1024 1024 1024",
    "128 768 3072",
    "256 256 256",
    "64 3136 576",
    "128 784 1152",
    "256 196 2304",
    "512 49 4608",
    "256 3136 64",
]


FLAGS = flags.FLAGS
flags.DEFINE_string("bench", None, "the gemm_engine_bench binary")
flags.DEFINE_string("configs", "avx512_8x48,avx512_12x32", "configurations, kernel[:kc[:nc]], comma separated")
flags.DEFINE_alias("kernels", "configs")
flags.DEFINE_integer("threads", 1, "threads of the engine")
flags.DEFINE_integer("rounds", 5, "interleaved rounds")
flags.DEFINE_integer("reps", 5, "repetitions per configuration, shape and round")
flags.DEFINE_string("shapes", ";".join(SHAPES), "'m n k' separated by ';'")
flags.DEFINE_string("out", None, "CSV of every repetition")
flags.DEFINE_string("summary", "", "CSV of medians per configuration and shape")


def bench_args(config):
    kernel, *blocking = config.split(":")
    args = [f"--kernel={kernel}"]
    for flag, value in zip(("--kc", "--nc"), blocking):
        if value and value != "0":
            args.append(f"{flag}={value}")
    return args


def main(argv: list[str]) -> None:
    del argv  # flags only
    configs = FLAGS.configs.split(",")
    rows, gflops = [], {}
    for shape in FLAGS.shapes.split(";"):
        for rnd in range(FLAGS.rounds):
            for config in configs:
                out = (
                    subprocess.run(
                        [
                            FLAGS.bench,
                            *bench_args(config),
                            f"--threads={FLAGS.threads}",
                            f"--reps={FLAGS.reps}",
                            *shape.split(),
                        ],
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    .stdout.strip()
                    .splitlines()[1:]
                )
                for line in out:
                    f = line.split(",")
                    rows.append([config, f[0], f[10], f[11], FLAGS.threads, f[2], f[3], f[4], rnd, *f[5:10]])
                    gflops.setdefault((shape, config), []).append(float(f[9]))
        print(shape, "  ".join(f"{c}: {statistics.median(gflops[(shape, c)]):.1f}" for c in configs), flush=True)
    with open(FLAGS.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "config",
                "kernel",
                "kc",
                "nc",
                "threads",
                "m",
                "n",
                "k",
                "round",
                "rep",
                "wall_seconds",
                "cpu_seconds",
                "process_cpu_seconds",
                "gflops",
            ]
        )
        writer.writerows(rows)
    if FLAGS.summary:
        with open(FLAGS.summary, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["shape", *configs])
            for shape in FLAGS.shapes.split(";"):
                writer.writerow([shape, *(f"{statistics.median(gflops[(shape, c)]):.1f}" for c in configs)])


if __name__ == "__main__":
    flags.mark_flags_as_required(["bench", "out"])
    app.run(main)
