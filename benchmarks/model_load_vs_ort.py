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

With --page_policies, it compares instead the page policies of the packed weights
(native/core/page_policy.h, selected per process with ONNX_LIGHT_CONSTANT_PAGES): for each
model, `--rounds` rounds, each a fresh process per policy in an order that rotates round by
round; each process creates the session (timed) and then runs it (`--runs` timed runs
after one warm-up: the run-time side of the trade, TLB misses over the weights). Per round,
each policy's creation time and median run time over the first policy's; the median of
those ratios with its 95% interval (median_interval) and the raw samples are written.

    ./bazelw run //benchmarks:model_load_vs_ort -- --page_policies=huge,small,small+prefault,system \
        --sizes_mb=50,250 --rounds=12 --runs=50 \
        --paths=$HOME/.cache/onnx-light/corpus/torch-2.13.0+cpu/dynamo/bert_base_encoder.onnx \
        --output=$PWD/benchmarks/reports/model_load/page_policies.json
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper

from benchmarks.ort_reference import block_order, conditions, finish_document, median_interval

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
PAGE_POLICIES = flags.DEFINE_list(
    "page_policies",
    [],
    "packed-weight page policies to compare (huge, system, small, each optionally +prefault; the "
    "first is the reference): interleaved fresh processes, creation and run time, instead of ORT",
)
ROUNDS = flags.DEFINE_integer("rounds", 12, "--page_policies: rounds (one fresh process per policy each)")
RUNS = flags.DEFINE_integer("runs", 30, "--page_policies: timed runs per process, after one warm-up")
PATHS = flags.DEFINE_list("paths", [], "--page_policies: .onnx files to compare as well (random inputs)")

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

# One creation and `runs` runs in a fresh process under the page policy its environment
# names: prints a JSON line with the policy the native side applied, the creation seconds,
# the seconds of each run and the huge pages faulted in machine-wide while creating.
POLICY_CHILD = r"""
import json, sys, time
import numpy as np
path, runs = sys.argv[1], int(sys.argv[2])
import onnx_light
from onnx_light import _native

def huge_page_faults():
    with open("/proc/vmstat") as f:
        return next((int(line.split()[1]) for line in f if line.startswith("thp_fault_alloc ")), 0)

thp_before = huge_page_faults()
start = time.perf_counter()
session = onnx_light.InferenceSession(path)
created = time.perf_counter() - start
thp = huge_page_faults() - thp_before
rng = np.random.default_rng(0)
feeds = {}
for arg in session.get_inputs():
    shape = [d if isinstance(d, int) and d > 0 else 1 for d in (arg.shape or [])]
    if arg.type == "tensor(float)":
        feeds[arg.name] = rng.standard_normal(shape).astype(np.float32)
    elif arg.type in ("tensor(int64)", "tensor(int32)"):
        feeds[arg.name] = np.zeros(shape, np.int64 if arg.type == "tensor(int64)" else np.int32)
    else:
        raise SystemExit(f"input {arg.name!r} of type {arg.type}: no generated feed")
session.run(None, feeds)
times = []
for _ in range(runs):
    start = time.perf_counter()
    session.run(None, feeds)
    times.append(time.perf_counter() - start)
print(json.dumps({"policy": _native.constant_page_policy(), "create_seconds": created, "run_seconds": times,
                  "huge_page_faults": thp}))
"""


def policy_process(path: str, policy: str, runs: int) -> dict:
    """One POLICY_CHILD run under `policy`; SystemExit if the native side applied another."""
    env = dict(os.environ, ONNX_LIGHT_CONSTANT_PAGES=policy)
    out = subprocess.run(
        [sys.executable, "-c", POLICY_CHILD, path, str(runs)], check=True, capture_output=True, text=True, env=env
    ).stdout.splitlines()
    result = json.loads(out[-1])
    if result["policy"] != policy:
        raise SystemExit(f"asked for page policy {policy!r}, the process applied {result['policy']!r}")
    return result


def compare_page_policies(label: str, path: str, policies: list[str], rounds: int, runs: int) -> dict:
    """Interleaved rounds of fresh processes, one per policy: creation and median run time per
    process, their ratios to the first policy's in the same round, medians with intervals."""
    create = {p: [] for p in policies}
    run = {p: [] for p in policies}
    huge_pages = {p: [] for p in policies}
    for r in range(rounds):
        for i in block_order(len(policies), r):
            result = policy_process(path, policies[i], runs)
            create[policies[i]].append(result["create_seconds"])
            run[policies[i]].append(statistics.median(result["run_seconds"]))
            huge_pages[policies[i]].append(result["huge_page_faults"])
    reference = policies[0]
    row: dict = {"model": label, "reference": reference, "policies": {}}
    for p in policies:
        entry = {
            "create_seconds": create[p],
            "run_median_seconds": run[p],
            "huge_page_faults": huge_pages[p],
            "median_create_ms": statistics.median(create[p]) * 1e3,
            "median_run_ms": statistics.median(run[p]) * 1e3,
        }
        for what, values in (("create", create), ("run", run)):
            ratios = [v / ref for v, ref in zip(values[p], values[reference])]
            median, low, high, exact = median_interval(ratios)
            entry[f"{what}_ratio"] = {"median": median, "low": low, "high": high, "interval_exact": exact}
        row["policies"][p] = entry
    for p, e in row["policies"].items():
        c, u = e["create_ratio"], e["run_ratio"]
        exact = "" if c["interval_exact"] else " (n<6: range)"
        print(
            f"{label:32s} {p:16s} create {e['median_create_ms']:8.1f} ms x{c['median']:.3f} "
            f"[{c['low']:.3f}, {c['high']:.3f}] | run {e['median_run_ms']:8.3f} ms x{u['median']:.3f} "
            f"[{u['low']:.3f}, {u['high']:.3f}]{exact} | huge pages {statistics.median(e['huge_page_faults']):.0f}",
            flush=True,
        )
    return row


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


def page_policy_main():
    """--page_policies: the policies compared on the MLPs (weights inline) and --paths."""
    policies = [str(p) for p in PAGE_POLICIES.value]
    doc = {
        "benchmark": "model_load_page_policies",
        "results": [],
        "conditions": conditions(rounds=ROUNDS.value, runs=RUNS.value, policies=policies),
    }
    with tempfile.TemporaryDirectory() as tmp:
        models = []
        for size in [int(s) for s in SIZES_MB.value]:
            path = os.path.join(tmp, f"mlp{size}.onnx")
            onnx.save(mlp_of_size(size, HIDDEN.value), path)
            models.append((f"{size} MiB MLP inline", path))
        models += [(os.path.basename(p), p) for p in PATHS.value]
        for label, path in models:
            doc["results"].append(compare_page_policies(label, path, policies, ROUNDS.value, RUNS.value))
    finish_document(doc, OUTPUT.value)


def main(argv):
    del argv
    if PAGE_POLICIES.value:
        page_policy_main()
        return
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
