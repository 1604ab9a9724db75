"""Interleaved A/B of gemm_engine_bench (before, after): alternating processes, R rounds.
Per process: --reps reps, median GFLOP/s from thread CPU time. Prints every raw sample."""

import os
import statistics
import subprocess
import sys

bins = {
    "before": os.environ.get("A", "/tmp/h102/gemm_engine_bench.before"),
    "after": os.environ.get("B", "/tmp/h102/gemm_engine_bench.after"),
}
shapes = [s.split("x") for s in sys.argv[2].split(",")]
rounds = int(sys.argv[1])
extra = sys.argv[3:]


def run(b, shape):
    out = subprocess.run(
        [bins[b], "--threads=1", "--reps=5", *extra, *shape], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split(",") for line in out.strip().splitlines()[1:]]
    return [float(r[9]) for r in rows], rows[0][0]


for shape in shapes:
    print(f"shape {'x'.join(shape)} {' '.join(extra)}")
    ratios = []
    for r in range(rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        res = {}
        load = os.getloadavg()[0]
        for b in order:
            g, kernel = run(b, shape)
            res[b] = (statistics.median(g), g, kernel)
        ratio = res["after"][0] / res["before"][0]
        ratios.append(ratio)
        print(
            f"  round {r} load {load:.1f} kernel {res['after'][2]} before {res['before'][0]:.1f} {res['before'][1]} after {res['after'][0]:.1f} {res['after'][1]} after/before {ratio:.3f}",
            flush=True,
        )
    print(
        f"  median ratio after/before (GFLOP/s, >1 = faster) {statistics.median(ratios):.3f}  min {min(ratios):.3f} max {max(ratios):.3f}",
        flush=True,
    )
