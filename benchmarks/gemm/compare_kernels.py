"""Microkernel / blocking comparison on the native engine, raw samples as CSV.

Runs //native/kernels/gemm:gemm_engine_bench for each (kernel, shape), interleaving the
kernels round by round so that machine load hits them alike, and writes every
repetition (kernel x shape x round x repetition) to CSV with the median per pair.

    bazel build -c opt //native/kernels/gemm:gemm_engine_bench
    python3 benchmarks/gemm/compare_kernels.py --bench bazel-bin/native/kernels/gemm/gemm_engine_bench \
        --kernels avx512_8x48,avx512_12x32 --out benchmarks/reports/gemm/tiles.csv
"""

import argparse
import csv
import statistics
import subprocess

SHAPES = ["1024 1024 1024", "128 768 3072", "256 256 256", "64 3136 576", "128 784 1152", "256 196 2304",
          "512 49 4608", "256 3136 64"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--kernels", default="avx512_8x48,avx512_12x32")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--shapes", default=";".join(SHAPES), help="'m n k' separated by ';'")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    kernels = args.kernels.split(",")
    rows, gflops = [], {}
    for shape in args.shapes.split(";"):
        for rnd in range(args.rounds):
            for kernel in kernels:
                out = subprocess.run([args.bench, f"--kernel={kernel}", f"--threads={args.threads}",
                                      f"--reps={args.reps}", *shape.split()], capture_output=True, text=True,
                                     check=True).stdout.strip().splitlines()[1:]
                for line in out:
                    f = line.split(",")
                    rows.append([kernel, args.threads, f[2], f[3], f[4], rnd, *f[5:10]])
                    gflops.setdefault((shape, kernel), []).append(float(f[9]))
        print(shape, "  ".join(f"{k}: {statistics.median(gflops[(shape, k)]):.1f}" for k in kernels), flush=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["kernel", "threads", "m", "n", "k", "round", "rep", "wall_seconds", "cpu_seconds",
                         "process_cpu_seconds", "gflops"])
        writer.writerows(rows)


if __name__ == "__main__":
    main()
