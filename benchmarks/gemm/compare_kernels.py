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

import argparse
import csv
import statistics
import subprocess

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


def bench_args(config):
    kernel, *blocking = config.split(":")
    args = [f"--kernel={kernel}"]
    for flag, value in zip(("--kc", "--nc"), blocking):
        if value and value != "0":
            args.append(f"{flag}={value}")
    return args


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--configs", "--kernels", dest="configs", default="avx512_8x48,avx512_12x32")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--shapes", default=";".join(SHAPES), help="'m n k' separated by ';'")
    parser.add_argument("--out", required=True)
    parser.add_argument("--summary", default="", help="CSV of medians per configuration and shape")
    args = parser.parse_args()
    configs = args.configs.split(",")
    rows, gflops = [], {}
    for shape in args.shapes.split(";"):
        for rnd in range(args.rounds):
            for config in configs:
                out = (
                    subprocess.run(
                        [
                            args.bench,
                            *bench_args(config),
                            f"--threads={args.threads}",
                            f"--reps={args.reps}",
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
                    rows.append([config, f[0], f[10], f[11], args.threads, f[2], f[3], f[4], rnd, *f[5:10]])
                    gflops.setdefault((shape, config), []).append(float(f[9]))
        print(shape, "  ".join(f"{c}: {statistics.median(gflops[(shape, c)]):.1f}" for c in configs), flush=True)
    with open(args.out, "w", newline="") as f:
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
    if args.summary:
        with open(args.summary, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["shape", *configs])
            for shape in args.shapes.split(";"):
                writer.writerow([shape, *(f"{statistics.median(gflops[(shape, c)]):.1f}" for c in configs)])


if __name__ == "__main__":
    main()
