"""The wheel installs with pip into a fresh venv, runs a model outside Bazel, and is the
optimised build we benchmark, whatever flags built it."""

import glob
import json
import os
import re
import subprocess
import sys
import zipfile

RUN_A_MODEL = r"""
import json
import numpy as np, onnx_light
from onnx import TensorProto, helper
body = helper.make_graph([], "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
    [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("i", TensorProto.INT64, [])])
graph = helper.make_graph([helper.make_node("Loop", ["M", ""], ["iterations"], body=body)], "g",
    [helper.make_tensor_value_info("M", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("iterations", TensorProto.INT64, [None])])
session = onnx_light.InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString())
print(json.dumps(onnx_light.build_info()))
print(onnx_light.__file__)
print(session.run(None, {"M": np.array(3, np.int64)})[0].tolist())
"""


def find_wheel():
    root = os.environ.get("TEST_SRCDIR", os.getcwd())
    wheels = glob.glob(os.path.join(root, "**", "onnx_light-*.whl"), recursive=True)
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_contents():
    with zipfile.ZipFile(find_wheel()) as wheel:
        names = wheel.namelist()
        assert "onnx_light/_native.so" in names
        assert "onnx_light/libprotobuf-lite.so.32" in names  # the native loader's runtime
        assert "onnx_light/__init__.py" in names
        dist_info = [n for n in names if n.endswith(".dist-info/RECORD")]
        assert len(dist_info) == 1
        record = wheel.read(dist_info[0]).decode()
        for name in names:
            assert name in record
        metadata = wheel.read(dist_info[0].replace("RECORD", "METADATA")).decode()
        requires = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
        # Every run-time dependency with the range CI tests (a floor and a ceiling).
        assert sorted(r.split(">=")[0] for r in requires) == ["ml_dtypes", "numpy", "onnx"]
        assert all(">=" in r and "<" in r for r in requires), requires
        assert wheel.read("onnx_light/REVISION").decode().strip(), "the wheel records its source revision"


def test_wheel_ships_type_information_and_no_development_tools():
    with zipfile.ZipFile(find_wheel()) as wheel:
        names = wheel.namelist()
        # PEP 561: the marker and the extension's stub (python/onnx_light/_native.pyi).
        assert "onnx_light/py.typed" in names
        stub = wheel.read("onnx_light/_native.pyi").decode()
        assert "class KernelRegistration" in stub and "def registered_kernels() -> list[KernelRegistration]" in stub
        # The runtime only: the development tools (//tools:onnx_light_dev) stay out, and
        # nothing in the package imports their dependencies.
        package = [n for n in names if n.startswith("onnx_light/")]
        assert not [n for n in package if n.startswith(("onnx_light/tools/", "onnx_light_dev/"))], package
        assert not [n for n in names if n.split("/")[0] not in ("onnx_light", *_dist_info(names))], names
        for name in package:
            if name.endswith(".py"):
                imports = re.findall(r"^\s*(?:import|from) ([\w.]+)", wheel.read(name).decode(), re.MULTILINE)
                assert not [m for m in imports if m.split(".")[0] in ("onnxruntime", "onnx_light_dev")], name


def _dist_info(names):
    return {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}


def test_pip_installs_the_wheel_into_a_venv_and_runs_a_model(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", find_wheel()], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    result = subprocess.run([python, "-c", RUN_A_MODEL], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    info, installed_at, iterations = result.stdout.strip().splitlines()[-3:]
    assert installed_at.startswith(str(venv)), installed_at
    assert iterations == "[0, 1, 2]"
    # The wheel is optimised even though this test target builds in whatever mode the
    # command line asked for (python/optimized.bzl).
    info = json.loads(info)
    assert info["compilation_mode"] == "opt", info
    assert info["optimized"] is True and info["assertions"] is False, info
    assert "portable" in info["isa_compiled"] and info["isa_selected"] in info["isa_compiled"], info
    # The extension finds the protobuf runtime the wheel carries (RUNPATH $ORIGIN), not only
    # a system copy.
    mapped = subprocess.run(
        [
            python,
            "-c",
            "import onnx_light; print(next(line.split()[-1] for line in open('/proc/self/maps') "
            "if 'libprotobuf-lite' in line))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert mapped.returncode == 0, mapped.stderr
    assert mapped.stdout.strip().startswith(str(venv)), mapped.stdout
