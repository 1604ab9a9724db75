"""Session creation: time and peak memory of onnx-light beside ONNX Runtime on models of
about 50 MB and 250 MB (random weights), from a path with the weights inline and from a
path with external data. Each measurement runs in a fresh process (so the peak RSS is
that of one creation), `--repeats` times; medians and raw samples are written. The peak
RSS growth is reported as a multiple of the model file's size for both runtimes (the
target: at most 1.2x), with our session's own accounting of its constant memory
(initializers retained and released once their kernels absorbed them, packed forms held).

    ./bazelw run //benchmarks:model_load_vs_ort -- --output=benchmarks/reports/model_load/model_load.json
    # the same with transparent huge pages off in the measured processes:
    ./bazelw run //benchmarks:model_load_vs_ort -- --no_huge_pages --output=/tmp/model_load_no_thp.json
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper

from benchmarks.ort_reference import conditions, finish_document

OUTPUT = flags.DEFINE_string("output", "", "where to write the JSON results")
REPEATS = flags.DEFINE_integer("repeats", 5, "fresh processes per case")
SIZES_MB = flags.DEFINE_list("sizes_mb", ["50", "250"], "model sizes")
HIDDEN = flags.DEFINE_integer("hidden", 2048, "width of the MLP's square weight matrices")
NO_HUGE_PAGES = flags.DEFINE_bool(
    "no_huge_pages",
    False,
    "children of both runtimes create their session with transparent huge pages disabled for "
    "the process (prctl PR_SET_THP_DISABLE): on a VM whose freed memory returns to the host, "
    "the first touch of a fresh huge page is what packing the weights mostly costs",
)

# One creation in a fresh process: prints a JSON line with the seconds, the peak RSS growth
# (KiB) it caused (the peak, VmHWM, is reset to the current RSS just before: imports do not
# count), the transparent huge pages faulted in meanwhile and, for onnx-light, the
# session's constant memory accounting.
CHILD = r"""
import json, sys, time
runtime, path = sys.argv[1], sys.argv[2]
if sys.argv[3] == "no_huge_pages":
    import ctypes
    if ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0) != 0:  # PR_SET_THP_DISABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_THP_DISABLE) failed")
if runtime == "ort":
    import onnxruntime as ort
    create = lambda: ort.InferenceSession(path, providers=["CPUExecutionProvider"])
else:
    import onnx_light
    create = lambda: onnx_light.InferenceSession(path)
import numpy  # imported by both; kept out of the measured growth

def status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field))

def huge_page_faults():
    with open("/proc/vmstat") as f:
        return next((int(line.split()[1]) for line in f if line.startswith("thp_fault_alloc ")), 0)

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
before = status_kib("VmRSS:")
thp_before = huge_page_faults()
start = time.perf_counter()
session = create()
seconds = time.perf_counter() - start
result = {"seconds": seconds, "rss_growth_kib": status_kib("VmHWM:") - before,
          "huge_page_faults": huge_page_faults() - thp_before}
if runtime != "ort":
    result["constant_memory"] = session.constant_memory().to_dict()
print(json.dumps(result))
"""


def mlp_of_size(megabytes, hidden):
    """x[1, hidden] through MatMul+Relu layers of hidden x hidden float weights."""
    layers = max(1, round(megabytes * 2**20 / (hidden * hidden * 4)))
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        w = f"w{i}"
        inits.append(numpy_helper.from_array(rng.standard_normal((hidden, hidden), dtype=np.float32) * 0.02, w))
        nodes += [
            helper.make_node("MatMul", [x, w], [f"m{i}"], name=f"matmul{i}"),
            helper.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"relu{i}"),
        ]
        x = f"r{i}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, hidden])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, hidden])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def measure(runtime, path, repeats, model_mib):
    seconds, rss, huge_pages, accounting = [], [], [], None
    env = dict(os.environ)
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, runtime, path, "no_huge_pages" if NO_HUGE_PAGES.value else "default"],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        ).stdout.splitlines()
        result = json.loads(out[-1])
        seconds.append(result["seconds"])
        rss.append(result["rss_growth_kib"] / 1024)
        huge_pages.append(result["huge_page_faults"])
        accounting = result.get("constant_memory", accounting)  # the same in every run
    row = {
        "seconds": seconds,
        "median_ms": float(np.median(seconds) * 1e3),
        "rss_growth_mib": rss,
        "median_rss_growth_mib": float(np.median(rss)),
        "rss_growth_over_model_size": float(np.median(rss)) / model_mib,
        # Transparent huge pages faulted in machine-wide during each creation (2 MiB each;
        # /proc/vmstat thp_fault_alloc): where the packed weights' first touch went.
        "huge_page_faults": huge_pages,
    }
    if accounting is not None:
        row["constant_memory"] = accounting
    return row


def main(argv):
    del argv
    doc = {
        "benchmark": "model_load_vs_ort",
        "results": [],
        "conditions": conditions(repeats=REPEATS.value, no_huge_pages=NO_HUGE_PAGES.value),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in SIZES_MB.value]:
            model = mlp_of_size(size, HIDDEN.value)
            inline = os.path.join(tmp, f"mlp{size}.onnx")
            onnx.save(model, inline)
            external_dir = os.path.join(tmp, f"external{size}")
            os.makedirs(external_dir)
            external = os.path.join(external_dir, "model.onnx")
            onnx.save(model, external, save_as_external_data=True, location="weights.bin")
            model_mib = os.path.getsize(inline) / 2**20
            for form, path in (("inline", inline), ("external_data", external)):
                row = {"size_mib": model_mib, "form": form}
                for runtime in ("onnx_light", "ort"):
                    row[runtime] = measure(runtime, path, REPEATS.value, model_mib)
                row["time_ratio_ours_over_ort"] = row["onnx_light"]["median_ms"] / row["ort"]["median_ms"]
                row["rss_over_model_size"] = row["onnx_light"]["rss_growth_over_model_size"]
                row["ort_rss_over_model_size"] = row["ort"]["rss_growth_over_model_size"]
                doc["results"].append(row)
                kept = row["onnx_light"]["constant_memory"]
                print(
                    f"{model_mib:6.0f} MiB {form:13s}: ours {row['onnx_light']['median_ms']:8.1f} ms "
                    f"rss +{row['onnx_light']['median_rss_growth_mib']:6.0f} MiB | ORT {row['ort']['median_ms']:8.1f} ms "
                    f"rss +{row['ort']['median_rss_growth_mib']:6.0f} MiB | time ours/ORT "
                    f"{row['time_ratio_ours_over_ort']:.2f}, RSS/model ours {row['rss_over_model_size']:.2f} "
                    f"ORT {row['ort_rss_over_model_size']:.2f} | initializers retained "
                    f"{kept['retained_bytes'] / 2**20:.1f} MiB, released {kept['released_bytes'] / 2**20:.1f} MiB, "
                    f"packed {kept['absorbed_held_bytes'] / 2**20:.1f} MiB",
                    flush=True,
                )
    finish_document(doc, OUTPUT.value)


if __name__ == "__main__":
    app.run(main)
