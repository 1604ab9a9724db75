"""Runs the native kernel_baseline binary and checks the document it writes.

The native binary (benchmarks/kernel_baseline) measures; this module finds it, passes the
source revision and Bazel config, runs it natively or under qemu, and validates that
every field the report needs is filled.
"""

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from onnx_light_dev import environment

NATIVE_BINARY = "benchmarks/kernel_baseline/kernel_baseline_native"
BUILD_INFO = "benchmarks/kernel_baseline/build_info.txt"
QEMU_AARCH64 = ["/usr/bin/qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]

CASE_FIELDS = (
    "family",
    "op",
    "size",
    "work_units",
    "policy",
    "threads",
    "samples_ns",
    "median_ns",
    "cpu_ns",
    "cpu_utilization",
    "participants",
    "grain",
    "peak_scratch_bytes",
    "allocations",
    "copies",
    "outputs_identical_to_serial",
)


def native_binary() -> str:
    return os.path.join(environment.runfiles_root(), NATIVE_BINARY)


def build_config() -> str:
    """'<compilation mode> <target cpu>' of the build the tool runs from."""
    try:
        with open(os.path.join(environment.runfiles_root(), BUILD_INFO), encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def run_baseline(
    binary: str,
    *,
    revision: str,
    build_config_text: str,
    threads: int = 0,
    repetitions: int = 15,
    min_time_ms: float = 200,
    smallest: bool = False,
    ops: Sequence[str] | None = None,
    prefix: Sequence[str] = (),
    emulated: bool = False,
    architecture: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Runs one baseline and returns its document (dict)."""
    args = list(prefix) + [
        binary,
        f"--threads={threads}",
        f"--repetitions={repetitions}",
        f"--min_time_ms={min_time_ms}",
        f"--revision={revision}",
        f"--build_config={build_config_text}",
    ]
    if smallest:
        args.append("--smallest")
    if ops:
        args.append("--ops=" + ",".join(ops))
    out = subprocess.run(
        args, stdout=subprocess.PIPE, stderr=None if progress else subprocess.DEVNULL, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"kernel_baseline_native exited {out.returncode}")
    doc = json.loads(out.stdout)
    doc["metadata"]["emulated"] = emulated
    doc["metadata"]["timings"] = "emulated (qemu-user): not hardware timings" if emulated else "native"
    if architecture:
        doc["metadata"]["architecture"] = architecture
    else:
        doc["metadata"]["architecture"] = doc["metadata"]["processor"]["architecture"]
    return doc


def problems(doc: dict[str, Any]) -> list[str]:
    """Fields missing or empty in a baseline document (the test asserts there are none)."""
    found = []
    for key in ("revision", "build_config", "processor", "execution", "architecture"):
        if doc.get("metadata", {}).get(key) in (None, "", {}):
            found.append(f"metadata.{key} is empty")
    if not doc.get("cases"):
        found.append("no cases")
    for i, case in enumerate(doc.get("cases", [])):
        if "error" in case:
            found.append(f"case {i} ({case.get('op')} {case.get('size')} {case.get('policy')}): {case['error']}")
            continue
        for field in CASE_FIELDS:
            if field not in case:
                found.append(f"case {i} ({case.get('op')}): missing {field}")
        if not case.get("samples_ns"):
            found.append(f"case {i} ({case.get('op')}): no samples")
        if case.get("outputs_identical_to_serial") is False:
            found.append(f"case {i} ({case.get('op')} {case.get('size')}): parallel output differs from serial")
    return found


def write(doc: dict[str, Any], path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
