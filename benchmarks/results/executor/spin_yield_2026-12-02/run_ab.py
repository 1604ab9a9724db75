"""One process's interleaved blocks of a torch-corpus model (issue 14, h115).

    TAG=A PYTHONPATH=<package A> python3 run_ab.py mobilenet_v3_small 4 150 ol1,ol2,ort1,ort2

Blocks of `runs` runs each: onnx-light at 1/2 threads (ol1, ol2), ONNX Runtime at its
defaults with 1/2 intra-op threads (ort1, ort2); the block order rotates per round. Prints
one JSON line per round: load average, tag and every sample (ms). Base and branch packages
were run in alternating processes (A, B, A, B, ...).
"""

import json
import os
import sys
import time

import numpy as np
import onnx
import onnx_light
import onnxruntime as ort


def main() -> None:
    name, rounds, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    configs = sys.argv[4].split(",") if len(sys.argv) > 4 else ["ol1", "ol2", "ort1", "ort2"]
    path = os.path.expanduser(f"~/.cache/onnx-light/corpus/torch-2.13.0+cpu/dynamo/{name}.onnx")
    graph_input = onnx.load(path, load_external_data=False).graph.input[0]
    shape = [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]
    feeds = {graph_input.name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
    sessions = {}
    for config in configs:
        threads = int(config[-1])
        if config.startswith("ol"):
            options = onnx_light.SessionOptions()
            options.intra_op_num_threads = threads
            sessions[config] = onnx_light.InferenceSession(path, sess_options=options)
        else:
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            sessions[config] = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for session in sessions.values():
        for _ in range(10):
            session.run(None, feeds)
    for r in range(rounds):
        order = configs[r % len(configs) :] + configs[: r % len(configs)]
        out: dict = {"round": r, "load": os.getloadavg()[0], "tag": os.environ.get("TAG", "")}
        for config in order:
            samples = []
            for _ in range(runs):
                start = time.perf_counter()
                sessions[config].run(None, feeds)
                samples.append(round((time.perf_counter() - start) * 1e3, 4))
            out[config] = samples
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
