"""Runs per CPU-second of the process (and per wall second) with C Python callers of one
session, ours and ORT's at their default threads, blocks alternating (h122). Runs per
CPU-second say how efficiently the process turns the CPU it got into runs, which other
processes on the machine move less than runs per second.

    PYTHONPATH=.:tools python3 callers_efficiency.py resnet_cnn 4 2 1,2,4 ol,ort
"""

import json
import os
import resource
import sys
import threading
import time

import onnx_light
import onnxruntime as ort
from onnx_light_dev import model_corpus

name = sys.argv[1]
rounds = int(sys.argv[2])
secs = float(sys.argv[3])
callers_list = [int(c) for c in sys.argv[4].split(",")]
sides = sys.argv[5].split(",") if len(sys.argv) > 5 else ["ol"]
m = model_corpus.by_name(name)
data = m.model.SerializeToString()
sess = {}
if "ol" in sides:
    sess["ol"] = onnx_light.InferenceSession(data)
if "ort" in sides:
    sess["ort"] = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
for s in sess.values():
    for _ in range(30):
        s.run(None, m.feeds)


def block(s, callers):
    counts = [0] * callers
    stop = [0.0]
    bar = threading.Barrier(callers + 1)

    def f(i):
        bar.wait()
        while time.perf_counter() < stop[0]:
            s.run(None, m.feeds)
            counts[i] += 1

    ts = [threading.Thread(target=f, args=(i,)) for i in range(callers)]
    for t in ts:
        t.start()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    stop[0] = time.perf_counter() + secs
    w0 = time.perf_counter()
    bar.wait()
    for t in ts:
        t.join()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter() - w0
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return sum(counts), wall, cpu, r1.ru_nivcsw - r0.ru_nivcsw, r1.ru_nvcsw - r0.ru_nvcsw


for r in range(rounds):
    for side, s in sess.items():
        for c in callers_list if r % 2 == 0 else callers_list[::-1]:
            time.sleep(0.3)
            n, wall, cpu, inv, vol = block(s, c)
            print(
                json.dumps(
                    {
                        "round": r,
                        "side": side,
                        "callers": c,
                        "runs": n,
                        "per_wall_s": round(n / wall, 1),
                        "per_cpu_s": round(n / cpu, 1),
                        "cpu_per_wall": round(cpu / wall, 2),
                        "invol_per_run": round(inv / n, 2),
                        "vol_per_run": round(vol / n, 2),
                        "load": os.getloadavg()[0],
                    }
                ),
                flush=True,
            )
