# usage (repo root): PYTHONPATH=PKG:. python3 conv_time.py CASE[,CASE] ; prints case median_cpu_ms hash
import hashlib
import sys
import time

import numpy as np
import onnx_light
from absl import flags

from benchmarks.conv_vs_ort import conv_model

flags.FLAGS(["x"])
RUNS = 60  # timed runs a process (h102 used 15)
CASES = {
    "conv3x3_512_7": (512, 512, 7, 3, 1, 1),
    "conv3x3_96_28": (96, 96, 28, 3, 1, 1),
    "conv3x3_256to512_7": (256, 512, 7, 3, 1, 1),
    "conv3x3_128to512_7": (128, 512, 7, 3, 1, 1),
    "conv3x3_32_56": (32, 32, 56, 3, 1, 1),
    "conv3x3_160_7": (160, 160, 7, 3, 1, 1),
    "conv3x3_128_28": (128, 128, 28, 3, 1, 1),
    "conv3x3_24to40_28": (24, 40, 28, 3, 1, 1),
    "conv3x3_64_56": (64, 64, 56, 3, 1, 1),
    "conv3x3_256_14": (256, 256, 14, 3, 1, 1),
    "conv1x1_512to2048_7": (512, 2048, 7, 1, 1, 1),
    "conv1x1_2048to512_7": (2048, 512, 7, 1, 1, 1),
}
for name in sys.argv[1].split(","):
    model, feeds = conv_model(np.random.default_rng(0), *CASES[name])
    s = onnx_light.InferenceSession(
        model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=1)
    )
    out = s.run(None, feeds)[0]
    for _ in range(3):
        s.run(None, feeds)
    samples = []
    for _ in range(RUNS):
        t = time.process_time()
        s.run(None, feeds)
        samples.append((time.process_time() - t) * 1e3)
    print(
        name,
        f"{np.median(samples):.4f}",
        hashlib.sha1(np.ascontiguousarray(out).tobytes()).hexdigest()[:12],
        " ".join(f"{x:.3f}" for x in samples),
    )
