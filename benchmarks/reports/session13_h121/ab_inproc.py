"""Interleaved A/B in one process (session 13, h121): each model of make_models.py in three
sessions, onnx-light with QLinearConv's algorithm.symmetric_indirect on ("new",
SymmetricConv) and off ("base", the channels-as-rows path, i.e. main before this branch
for these nodes), and ORT (intra-op spinning off). Per round each session runs 3 warm-ups
and RUNS timed runs, the order of the three rotated from round to round; one line per round
(medians, ratios, minimums, load average), then a summary with the bit-identity of new vs
base. Usage: PYTHONPATH=<runfiles>/onnx_light:<runfiles>/onnx_light/python
python3 ab_inproc.py MODELS THREADS RUNS ROUNDS."""

import os
import pickle
import sys
import time

import numpy as np
import onnx_light
import onnxruntime as ort
from onnx_light import kernel_tuning

D = "/tmp/h121"
PARAM = "algorithm.symmetric_indirect"


def main():
    names = sys.argv[1].split(",")
    threads, runs, rounds = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for name in names:
        feeds = pickle.load(open(f"{D}/{name}.feeds", "rb"))
        path = f"{D}/{name}.onnx"
        probe = onnx_light.InferenceSession(path)
        keys = {r.schema for r in probe.tuning_report() if r.parameter == PARAM}
        sess = {}
        for tag, on in (("new", True), ("base", False)):
            source = kernel_tuning.tuning_source(None, {k: {PARAM: on} for k in keys}, threads)
            policy = onnx_light.CpuExecutionPolicy(num_threads=threads)
            sess[tag] = onnx_light.InferenceSession(path, tuning_profile=source, cpu_execution=policy)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        sess["ort"] = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        outs = {t: s.run(None, feeds)[0] for t, s in sess.items()}
        same = np.array_equal(outs["new"], outs["base"])
        diff_ort = int(np.abs(outs["new"].astype(int) - outs["ort"].astype(int)).max())
        order = list(sess)
        med = {t: [] for t in order}
        mins = {t: [] for t in order}
        for r in range(rounds):
            for t in order[r % 3 :] + order[: r % 3]:
                for _ in range(3):
                    sess[t].run(None, feeds)
                ts = []
                for _ in range(runs):
                    t0 = time.perf_counter()
                    sess[t].run(None, feeds)
                    ts.append(time.perf_counter() - t0)
                med[t].append(np.median(ts) * 1e6)
                mins[t].append(np.min(ts) * 1e6)
            print(
                f"{name} t{threads} round {r} "
                + " ".join(f"{t} {med[t][-1]:.1f}" for t in order)
                + f" new/base {med['new'][-1] / med['base'][-1]:.3f} new/ort {med['new'][-1] / med['ort'][-1]:.3f}"
                + " | min "
                + " ".join(f"{t} {mins[t][-1]:.1f}" for t in order)
                + f" load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        print(
            f"{name} t{threads} SUMMARY bit-identical new vs base: {same}; max |new-ort| {diff_ort}; medians-of-rounds "
            + " ".join(f"{t} {np.median(med[t]):.1f}" for t in order)
            + " | min of mins "
            + " ".join(f"{t} {np.min(mins[t]):.1f}" for t in order),
            flush=True,
        )


if __name__ == "__main__":
    main()
