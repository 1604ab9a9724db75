"""A short, bounded atheris run of fuzz_model.py (a fixed number of inputs from a fixed
seed), and a replay of every input a fuzz run ever crashed on (fuzz_regressions/)."""

import glob
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuzz_model  # noqa: E402

REGRESSIONS = sorted(glob.glob(os.path.join(HERE, "fuzz_regressions", "*.bin")))


def test_a_short_fuzz_run_finds_nothing(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run(
        [
            sys.executable,
            os.path.join(HERE, "fuzz_model.py"),
            "-runs=300",
            "-seed=18",
            "-rss_limit_mb=6144",
            "-timeout=120",
            f"-artifact_prefix={tmp_path}{os.sep}",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert "Done 300 runs" in result.stdout, result.stdout[-2000:]
    assert not os.listdir(tmp_path), result.stdout[-4000:]


@pytest.mark.parametrize("path", REGRESSIONS, ids=[os.path.basename(p) for p in REGRESSIONS])
def test_a_past_crash_input_now_ends_in_a_clear_error(path):
    with open(path, "rb") as f:
        fuzz_model.TestOneInput(f.read())
