"""Serving: 1, 2 and 4 Python threads calling run() on one session, onnx-light beside
ONNX Runtime in the same process and run. Per model and caller count: aggregate
throughput (runs/s) and p50/p99 latency, with every raw latency sample.

Each runtime is timed in its own block (ORT's workers spin after a run; alternating runs
would make the other runtime pay for it), after a warm-up, and blocks are separated by a
pause. Both runtimes use their default thread count (one per physical core).

    ./bazelw run //benchmarks:serving_vs_ort -- --output=benchmarks/reports/serving/serving.json
"""

import threading
import time

import numpy as np
import onnx_light
import onnxruntime as ort
from absl import app, flags
from onnx_light_dev import model_corpus

from benchmarks.ort_reference import conditions, finish_document

FLAGS = flags.DEFINE_string("output", "", "where to write the JSON results (default: stdout only)")
SECONDS = flags.DEFINE_float("seconds", 4.0, "timed length of each block")
CALLERS = flags.DEFINE_list("callers", ["1", "2", "4"], "Python caller threads")
MODELS = flags.DEFINE_list("models", ["resnet_cnn", "transformer_block"], "model_corpus models")


def block(session, feeds, callers, seconds):
    """Latencies (ms) of every run by `callers` threads in `seconds`, and the wall time."""
    latencies = [[] for _ in range(callers)]
    start_barrier = threading.Barrier(callers + 1)
    stop_at = [0.0]

    def caller(i):
        start_barrier.wait()
        while time.perf_counter() < stop_at[0]:
            t = time.perf_counter()
            session.run(None, feeds)
            latencies[i].append((time.perf_counter() - t) * 1e3)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    stop_at[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    start_barrier.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    return [x for per in latencies for x in per], wall


def summarize(latencies, wall):
    return {
        "runs": len(latencies),
        "wall_s": wall,
        "throughput_per_s": len(latencies) / wall,
        "p50_ms": float(np.percentile(latencies, 50)),
        "p99_ms": float(np.percentile(latencies, 99)),
        "samples_ms": [round(x, 4) for x in latencies],
    }


def main(argv):
    del argv
    doc = {
        "benchmark": "serving_vs_ort",
        "results": [],
        "conditions": conditions(
            seconds_per_block=SECONDS.value, threads="defaults of both runtimes (one per physical core)"
        ),
    }
    for name in MODELS.value:
        corpus_model = model_corpus.by_name(name)
        data = corpus_model.model.SerializeToString()
        sessions = {
            "onnx_light": onnx_light.InferenceSession(data),
            "ort": ort.InferenceSession(data, providers=["CPUExecutionProvider"]),
        }
        expected = sessions["ort"].run(None, corpus_model.feeds)
        for session in sessions.values():
            got = session.run(None, corpus_model.feeds)
            for a, b in zip(got, expected):
                np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)
        for callers in [int(c) for c in CALLERS.value]:
            row = {"model": name, "callers": callers}
            for side, session in sessions.items():
                block(session, corpus_model.feeds, callers, 0.5)  # warm-up
                row[side] = summarize(*block(session, corpus_model.feeds, callers, SECONDS.value))
                time.sleep(1.0)  # let ORT's spinning workers park before the next block
            row["throughput_ratio_ours_over_ort"] = (
                row["onnx_light"]["throughput_per_s"] / row["ort"]["throughput_per_s"]
            )
            doc["results"].append(row)
            print(
                f"{name:18s} callers {callers}: ours {row['onnx_light']['throughput_per_s']:8.1f}/s "
                f"p50 {row['onnx_light']['p50_ms']:7.3f} p99 {row['onnx_light']['p99_ms']:7.3f} ms | ORT "
                f"{row['ort']['throughput_per_s']:8.1f}/s p50 {row['ort']['p50_ms']:7.3f} p99 {row['ort']['p99_ms']:7.3f} ms"
                f" | throughput ours/ORT {row['throughput_ratio_ours_over_ort']:.2f}",
                flush=True,
            )
    finish_document(doc, FLAGS.value)


if __name__ == "__main__":
    app.run(main)
