"""One process of the alternating-process A/B (session 13, h121): the default session of
one onnx-light build (PYTHONPATH picks the build) on each model of make_models.py, 5
warm-ups then RUNS timed runs; prints the median and minimum (us), the load average and a
hash of the output (equal hashes: bit-identical builds). Usage: python3 alt_process.py
MODELS THREADS RUNS TAG."""

import hashlib
import os
import pickle
import sys
import time

import numpy as np
import onnx_light

D = "/tmp/h121"


def main():
    names, threads, runs, tag = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    for name in names:
        feeds = pickle.load(open(f"{D}/{name}.feeds", "rb"))
        policy = onnx_light.CpuExecutionPolicy(num_threads=threads)
        s = onnx_light.InferenceSession(f"{D}/{name}.onnx", cpu_execution=policy)
        out = np.ascontiguousarray(s.run(None, feeds)[0])
        for _ in range(5):
            s.run(None, feeds)
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            s.run(None, feeds)
            ts.append(time.perf_counter() - t0)
        digest = hashlib.sha256(out.tobytes()).hexdigest()[:12]
        print(
            f"{tag} {name} t{threads} median_us {np.median(ts) * 1e6:.1f} min_us {np.min(ts) * 1e6:.1f} "
            f"load {os.getloadavg()[0]:.2f} out {digest}",
            flush=True,
        )


if __name__ == "__main__":
    main()
