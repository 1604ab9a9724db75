"""Cast float -> float16 in onnx-light vs ONNX Runtime, same model, same process.

    ./bazelw run --config=opt //benchmarks/tensor:cast_vs_ort

Sizes 1K / 64K / 16M elements, 1 and 2 threads each; prints medians, the ratio to ONNX
Runtime and the raw samples (microseconds). A benchmark, not a test.
"""

import statistics
import time

import numpy as np
import onnx_light
from absl import app
from onnx import TensorProto, helper

from benchmarks.ort_reference import ort_session

SIZES = [1024, 65536, 16 * 1024 * 1024]
THREADS = [1, 2]


def cast_model(n):
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)],
        "cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [n])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def samples(run, n):
    # Enough repetitions for ~0.3 s per configuration, at least 5.
    run()
    start = time.perf_counter()
    run()
    once = time.perf_counter() - start
    reps = max(5, min(2000, int(0.3 / max(once, 1e-7))))
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        out.append((time.perf_counter() - start) * 1e6)
    return out


def main(argv: list[str]) -> None:
    del argv  # no flags
    rng = np.random.default_rng(0)
    print(f"{'elements':>10} {'threads':>7} {'onnx-light us':>14} {'ORT us':>10} {'ratio ol/ort':>12}")
    raw = []
    for n in SIZES:
        model = cast_model(n)
        x = (rng.standard_normal(n) * 100).astype(np.float32)
        for threads in THREADS:
            ol = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
            rt = ort_session(model, threads)
            assert np.array_equal(ol.run(None, {"x": x})[0].view(np.uint16), rt.run(None, {"x": x})[0].view(np.uint16))
            ours = samples(lambda ol=ol, x=x: ol.run(None, {"x": x}), n)
            theirs = samples(lambda rt=rt, x=x: rt.run(None, {"x": x}), n)
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"{n:>10} {threads:>7} {a:>14.1f} {b:>10.1f} {a / b:>12.2f}")
            raw.append((n, threads, ours, theirs))
    print("\nraw samples (us), first 20 of each:")
    for n, threads, ours, theirs in raw:
        print(f"n={n} threads={threads} onnx-light: {[round(s, 1) for s in ours[:20]]}")
        print(f"n={n} threads={threads} ORT:        {[round(s, 1) for s in theirs[:20]]}")


if __name__ == "__main__":
    app.run(main)
