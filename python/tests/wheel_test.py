"""The wheel installs with pip into a fresh venv and runs a model outside Bazel."""

import glob
import os
import subprocess
import sys
import zipfile

RUN_A_MODEL = r"""
import numpy as np, onnx_light
from onnx import TensorProto, helper
body = helper.make_graph([], "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
    [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("i", TensorProto.INT64, [])])
graph = helper.make_graph([helper.make_node("Loop", ["M", ""], ["iterations"], body=body)], "g",
    [helper.make_tensor_value_info("M", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("iterations", TensorProto.INT64, [None])])
session = onnx_light.InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString())
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
        assert "onnx_light/__init__.py" in names
        dist_info = [n for n in names if n.endswith(".dist-info/RECORD")]
        assert len(dist_info) == 1
        record = wheel.read(dist_info[0]).decode()
        for name in names:
            assert name in record


def test_pip_installs_the_wheel_into_a_venv_and_runs_a_model(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", find_wheel()], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    result = subprocess.run([python, "-c", RUN_A_MODEL], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    installed_at, iterations = result.stdout.strip().splitlines()[-2:]
    assert installed_at.startswith(str(venv)), installed_at
    assert iterations == "[0, 1, 2]"
