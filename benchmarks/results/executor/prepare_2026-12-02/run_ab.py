"""One process's blocks of a torch-corpus model, back to back and with idle gaps (h122).

    TAG=A python3 run_ab.py mobilenet_v3_small 150 2.0

Blocks of `runs` runs each at 1 and 2 threads, in two modes: back to back ("tight", the
whole-model benchmark's loop, where the worker never parks between runs) and with `gap_ms`
of sleep before every run ("gap", a server between requests: the worker has parked by the
next run, so each run's first region meets a parked worker). Only run() is timed. Prints
one JSON line: load average, tag and every sample (ms). Base and branch packages run in
alternating processes (A, B, A, B, ...) from the shell loop in README.md.
"""

import json
import os
import sys
import time

import numpy as np
import onnx
import onnx_light


def main() -> None:
    name, runs, gap_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    path = os.path.expanduser(f"~/.cache/onnx-light/corpus/torch-2.13.0+cpu/dynamo/{name}.onnx")
    graph_input = onnx.load(path, load_external_data=False).graph.input[0]
    shape = [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]
    feeds = {graph_input.name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
    sessions = {}
    for threads in (1, 2):
        options = onnx_light.SessionOptions()
        options.intra_op_num_threads = threads
        sessions[threads] = onnx_light.InferenceSession(path, sess_options=options)
        for _ in range(10):
            sessions[threads].run(None, feeds)
    out: dict = {"model": name, "load": os.getloadavg()[0], "tag": os.environ.get("TAG", ""), "gap_ms": gap_ms}
    for mode in ("tight", "gap"):
        for threads, session in sessions.items():
            samples = []
            for _ in range(runs):
                if mode == "gap":
                    time.sleep(gap_ms / 1e3)
                start = time.perf_counter()
                session.run(None, feeds)
                samples.append(round((time.perf_counter() - start) * 1e3, 4))
            out[f"{mode}{threads}"] = samples
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
