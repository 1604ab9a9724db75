"""Per region of a run (in order) at 2 threads: wall, CPU, dispatch, first join, end wait.

PYTHONPATH=<package> python3 region_table.py mobilenet_v3_small 100
"""

import collections
import os
import sys
import time

import numpy as np
import onnx
import onnx_light


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "mobilenet_v3_small"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    path = os.path.expanduser(f"~/.cache/onnx-light/corpus/torch-2.13.0+cpu/dynamo/{name}.onnx")
    graph_input = onnx.load(path, load_external_data=False).graph.input[0]
    shape = [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]
    feeds = {graph_input.name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
    options = onnx_light.SessionOptions()
    options.intra_op_num_threads = 2
    session = onnx_light.InferenceSession(path, sess_options=options)
    for _ in range(30):
        session.run(None, feeds)
    per_index = collections.defaultdict(list)
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        _, _, regions = session.run_with_events(None, feeds)
        walls.append(time.perf_counter() - start)
        for i, region in enumerate(regions):
            per_index[i].append(region)
    print("load", os.getloadavg(), "run ms median", np.median(walls) * 1e3, "min", min(walls) * 1e3)
    for i, rs in per_index.items():
        d, j, w, c, e = (
            np.array([getattr(r, f) for r in rs]) / 1e3
            for f in ("dispatch_ns", "first_join_ns", "wall_ns", "cpu_ns", "end_wait_ns")
        )
        joined = j[j >= 0]
        print(
            f"{i:2d} {rs[0].label:<30} tot={rs[0].total:4d} wall med {np.median(w):6.1f} max {w.max():7.1f} "
            f"cpu med {np.median(c):6.1f} disp med {np.median(d):5.1f} max {d.max():6.1f} "
            f"joined {100 * len(joined) / len(rs):3.0f}% join med {np.median(joined) if len(joined) else -1:6.1f} "
            f"endwait max {e.max():6.1f}"
        )


if __name__ == "__main__":
    main()
