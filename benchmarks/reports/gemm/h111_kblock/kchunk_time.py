# usage (repo root): PYTHONPATH=PKG:. python3 kchunk_time.py PANEL_BYTES CASE[,CASE]
# One process, one conv.implicit_chunk_panel_bytes value (0: the portable default; else an explicit
# profile setting it on every schema that declares it). Prints case, median process-CPU ms
# per run (1 thread), SHA-1 prefix of the output, every raw sample. CASE "resnet50" runs
# the torch-corpus ResNet-50 (RESNET50 env var: its .onnx path).
import hashlib
import os
import sys
import time

import numpy as np
import onnx_light
import onnx_light.kernel_tuning as kt
from absl import flags

from benchmarks.conv_vs_ort import conv_model

flags.FLAGS(["x"])
CASES = {
    "conv3x3_512_7": (512, 512, 7, 3, 1, 1),
    "conv3x3_256_14": (256, 256, 14, 3, 1, 1),
    "conv3x3_128_28": (128, 128, 28, 3, 1, 1),
    "conv3x3_64_56": (64, 64, 56, 3, 1, 1),
}
chunk = int(sys.argv[1])
source = kt.portable_defaults()
if chunk > 0:
    for s in kt.schemas():
        if any(p["name"] == "conv.implicit_chunk_panel_bytes" for p in s["params"]):
            source.add(s["key"], "conv.implicit_chunk_panel_bytes", chunk, kt.EXPLICIT)
for name in sys.argv[2].split(","):
    if name == "resnet50":
        import onnx

        model = onnx.load(os.environ["RESNET50"])
        inp = model.graph.input[0]
        shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
        feeds = {inp.name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
        runs = 20
    else:
        model, feeds = conv_model(np.random.default_rng(0), *CASES[name])
        runs = 60
    s = onnx_light.InferenceSession(
        model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=1), tuning_profile=source
    )
    out = s.run(None, feeds)[0]
    for _ in range(3):
        s.run(None, feeds)
    samples = []
    for _ in range(runs):
        t = time.process_time()
        s.run(None, feeds)
        samples.append((time.process_time() - t) * 1e3)
    print(
        name,
        f"{np.median(samples):.4f}",
        hashlib.sha1(np.ascontiguousarray(out).tobytes()).hexdigest()[:12],
        " ".join(f"{x:.3f}" for x in samples),
        flush=True,
    )
