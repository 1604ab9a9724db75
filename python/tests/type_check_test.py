"""The onnx_light package type-checks with mypy against the extension's stub (_native.pyi):
the annotations of the public API agree with each other and with the bindings."""

import os
import subprocess
import sys


def test_the_package_type_checks(tmp_path):
    python_dir = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"], "python")
    assert os.path.exists(os.path.join(python_dir, "onnx_light", "_native.pyi"))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--python-version=3.11",
            "--ignore-missing-imports",
            f"--cache-dir={tmp_path}",
            "-p",
            "onnx_light",
        ],
        cwd=python_dir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
