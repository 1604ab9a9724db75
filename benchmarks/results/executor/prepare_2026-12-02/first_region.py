"""Each run's first region at 2 threads after an idle gap (h122): dispatch, first join,
wall and the run's wall, from region events.

    TAG=A python3 first_region.py mobilenet_v3_small 200 2.0

Every run sleeps `gap_ms` first (the worker parks), then runs with events. Prints one JSON
line with every sample (us) and the load average.
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
    options = onnx_light.SessionOptions()
    options.intra_op_num_threads = 2
    session = onnx_light.InferenceSession(path, sess_options=options)
    for _ in range(10):
        session.run(None, feeds)
    out: dict = {"model": name, "load": os.getloadavg()[0], "tag": os.environ.get("TAG", ""), "gap_ms": gap_ms}
    fields = ("dispatch_ns", "first_join_ns", "wall_ns", "cpu_ns")
    samples: dict = {f: [] for f in fields}
    samples["run_us"] = []
    for _ in range(runs):
        time.sleep(gap_ms / 1e3)
        start = time.perf_counter()
        _, _, regions = session.run_with_events(None, feeds)
        samples["run_us"].append(round((time.perf_counter() - start) * 1e6, 1))
        for f in fields:
            value = getattr(regions[0], f)
            samples[f].append(-1 if value < 0 else round(value / 1e3, 2))  # first join -1: none joined
    out.update(samples)
    out["first_label"] = regions[0].label
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
