"""Peak RSS of each phase of InferenceSession creation, as multiples of the model's size:
where the memory of a creation goes (issue 12). Each model is created in a fresh process;
python, numpy, onnx and onnx_light are imported before measuring, as in model_load_vs_ort.
The process's peak (VmHWM) is reset to its current RSS (clear_refs 5) before creation and
after each phase; a phase's peak is then VmHWM minus the RSS before creation, and the RSS
after it is split into anonymous and file-backed pages. The phases are the steps of
InferenceSession.__init__ (session.py), wrapped in the child: load_model_and_weights
(native load), validate_model, prepare_model, graph_rewrites.optimize, build_graph,
release_payloads, Session.create (kernels pack the weights), then the rest of __init__ (rest_of_init).

    ./bazelw run //benchmarks:creation_phases -- /path/to/model.onnx [more.onnx ...]
    ./bazelw run //benchmarks:creation_phases -- --mlp_mib=48,256   # the MLPs of model_load_vs_ort
"""

import os
import subprocess
import sys
import tempfile

import onnx
from absl import app, flags

from benchmarks.model_load_vs_ort import mlp_of_size

MLP_MIB = flags.DEFINE_list("mlp_mib", [], "also measure model_load_vs_ort's MLPs of these sizes (weights inline)")

CHILD = r"""
import os, sys
import numpy, onnx
import onnx_light
from onnx_light import session as S

def kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field))

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS

rows = []
def mark(name):
    rows.append((name, kib("VmHWM:") - base, kib("RssAnon:") - anon, kib("RssFile:") - file_backed))
    reset_peak()

def wrap(owner, name, label=None):
    original = getattr(owner, name)
    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        mark(label or name)
        return result
    setattr(owner, name, wrapped)

for name in ("load_model_and_weights", "validate_model", "prepare_model", "build_graph"):
    wrap(S, name)
wrap(S.graph_rewrites, "optimize", "graph_rewrites.optimize")

class Weights:  # the LoadedModel, with release_payloads marked
    def __init__(self, w):
        self.w = w
    def __getattr__(self, name):
        return getattr(self.w, name)
    def __len__(self):
        return len(self.w)
    def __contains__(self, key):
        return key in self.w
    def release_payloads(self):
        self.w.release_payloads()
        mark("release_payloads")

rewritten = S._rewritten_model
def rewritten_marked(*args, **kwargs):
    proto, weights = rewritten(*args, **kwargs)
    return proto, Weights(weights) if weights is not None else None
S._rewritten_model = rewritten_marked
build_graph = S.build_graph
S.build_graph = lambda proto, base_dir, weights: build_graph(proto, base_dir, getattr(weights, "w", weights))

class Native:  # _native, with Session.create marked
    def __getattr__(self, name):
        return getattr(onnx_light._native, name)
class Session:
    @staticmethod
    def create(*args):
        session = onnx_light._native.Session.create(*args)
        mark("Session.create")
        return session
native = Native()
native.Session = Session
S._native = native

reset_peak()
base, anon, file_backed = kib("VmRSS:"), kib("RssAnon:"), kib("RssFile:")
session = onnx_light.InferenceSession(sys.argv[1])
mark("rest_of_init")
for row in rows:
    print(*row)
"""


def measure(path: str, label: str) -> None:
    # The model's size: its file and the external data files its initializers name.
    model = onnx.load(path, load_external_data=False)
    locations = {
        entry.value
        for t in model.graph.initializer
        if t.data_location == onnx.TensorProto.EXTERNAL
        for entry in t.external_data
        if entry.key == "location"
    }
    folder = os.path.dirname(path)
    size_kib = (os.path.getsize(path) + sum(os.path.getsize(os.path.join(folder, f)) for f in locations)) / 1024
    out = subprocess.run([sys.executable, "-c", CHILD, path], check=True, capture_output=True, text=True).stdout
    print(f"{label} ({size_kib / 1024:.1f} MiB)")
    for line in out.splitlines():
        name, peak, anon, file_backed = line.split()
        peak, anon, file_backed = int(peak), int(anon), int(file_backed)
        print(
            f"  {name:24s} peak +{peak / 1024:7.1f} MiB ({peak / size_kib:.2f}x)   after: anonymous "
            f"+{anon / 1024:7.1f} MiB, file-backed +{file_backed / 1024:5.1f} MiB"
        )


def main(argv):
    for path in argv[1:]:
        measure(path, os.path.basename(path))
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in MLP_MIB.value]:
            path = os.path.join(tmp, f"mlp{size}.onnx")
            onnx.save(mlp_of_size(size, 2048), path)
            measure(path, f"{size} MiB MLP inline")


if __name__ == "__main__":
    app.run(main)
