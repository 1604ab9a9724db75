import os
import pickle
import sys
import time

import numpy as np
import onnxruntime as ort

for name in sys.argv[1].split(","):
    feeds = pickle.load(open(f"/tmp/h109/{name}.feeds", "rb"))
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(sys.argv[2])
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    s = ort.InferenceSession(f"/tmp/h109/{name}.onnx", so, providers=["CPUExecutionProvider"])
    for _ in range(3):
        s.run(None, feeds)
    ts = []
    for _ in range(int(sys.argv[3])):
        t0 = time.perf_counter()
        s.run(None, feeds)
        ts.append(time.perf_counter() - t0)
    print(
        f"ort {name} t{sys.argv[2]} median_us {np.median(ts) * 1e6:.1f} min_us {np.min(ts) * 1e6:.1f} load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
