"""Serving: 1, 2 and 4 Python threads calling run() on one session, onnx-light beside
ONNX Runtime in the same process and run. Per model and caller count: aggregate
throughput (runs/s) and p50/p99 latency, with every raw latency sample.

Each runtime is timed in its own block (ORT's workers spin after a run; alternating runs
would make the other runtime pay for it), after a warm-up, and blocks are separated by a
pause. Both runtimes use their default thread count (one per physical core) unless
--threads gives one for both. Each block also records the context switches of the
process's threads per run (voluntary: a thread blocked, e.g. an idle worker parking after
its spin window; involuntary: a thread preempted), which no load on the machine creates
for an idle worker that keeps spinning.

    ./bazelw run //benchmarks:serving_vs_ort -- --output=benchmarks/reports/serving/serving.json
    # one caller, serial beside two threads, and a longer spin window for our workers:
    ./bazelw run //benchmarks:serving_vs_ort -- --callers=1 --threads=1
    ./bazelw run //benchmarks:serving_vs_ort -- --callers=1 --threads=2 --spin_microseconds=2000
"""

import glob
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
THREADS = flags.DEFINE_integer(
    "threads", 0, "threads per session for both runtimes (0: each runtime's default, one per physical core)"
)
SPIN_MICROSECONDS = flags.DEFINE_integer(
    "spin_microseconds", None, "our idle workers' spin window before they park (default: the policy's)"
)


def context_switches():
    """(voluntary, involuntary) context switches summed over this process's threads."""
    voluntary = involuntary = 0
    for path in glob.glob("/proc/self/task/*/status"):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        voluntary += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        involuntary += int(line.split()[1])
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return voluntary, involuntary


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
    switches_before = context_switches()
    stop_at[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    start_barrier.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    switches = [after - before for after, before in zip(context_switches(), switches_before)]
    return [x for per in latencies for x in per], wall, switches


def summarize(latencies, wall, switches):
    runs = max(1, len(latencies))
    return {
        "runs": len(latencies),
        "wall_s": wall,
        "throughput_per_s": len(latencies) / wall,
        "p50_ms": float(np.percentile(latencies, 50)),
        "p99_ms": float(np.percentile(latencies, 99)),
        "voluntary_switches_per_run": switches[0] / runs,
        "involuntary_switches_per_run": switches[1] / runs,
        "samples_ms": [round(x, 4) for x in latencies],
    }


def sessions_for(data):
    """Our session and ORT's for the serialized model, at --threads (and our --spin_microseconds)."""
    policy = {}
    if THREADS.value:
        policy["num_threads"] = THREADS.value
    if SPIN_MICROSECONDS.value is not None:
        policy["spin_microseconds"] = SPIN_MICROSECONDS.value
    ort_options = ort.SessionOptions()
    if THREADS.value:
        ort_options.intra_op_num_threads = THREADS.value
    return {
        "onnx_light": onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(**policy)),
        "ort": ort.InferenceSession(data, ort_options, providers=["CPUExecutionProvider"]),
    }


def main(argv):
    del argv
    doc = {
        "benchmark": "serving_vs_ort",
        "results": [],
        "conditions": conditions(
            seconds_per_block=SECONDS.value,
            threads=THREADS.value or "defaults of both runtimes (one per physical core)",
            spin_microseconds=SPIN_MICROSECONDS.value
            if SPIN_MICROSECONDS.value is not None
            else onnx_light.CpuExecutionPolicy().spin_microseconds,
        ),
    }
    for name in MODELS.value:
        corpus_model = model_corpus.by_name(name)
        data = corpus_model.model.SerializeToString()
        sessions = sessions_for(data)
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
                f" | throughput ours/ORT {row['throughput_ratio_ours_over_ort']:.2f} | voluntary switches/run "
                f"ours {row['onnx_light']['voluntary_switches_per_run']:.1f} ORT {row['ort']['voluntary_switches_per_run']:.1f}",
                flush=True,
            )
    finish_document(doc, FLAGS.value)


if __name__ == "__main__":
    app.run(main)
