"""Runs the native kernel_baseline binary and checks the document it writes.

The native binary (benchmarks/kernel_baseline) measures, with the interleaved rule of
benchmarks/kernel_baseline/interleave.h; this module finds it, passes the source revision,
Bazel config and measurement bounds, runs it natively or under qemu, lists its cells,
writes the calibrated values it compares, and validates that every field the report needs
is filled.
"""

import dataclasses
import glob
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from onnx_light_dev import environment

NATIVE_BINARY = "benchmarks/kernel_baseline/kernel_baseline_native"
BUILD_INFO = "benchmarks/kernel_baseline/build_info.txt"
QEMU_AARCH64 = ["/usr/bin/qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
MAX_ISA_VARIABLE = "ONNX_LIGHT_MAX_ISA"

CASE_FIELDS = (
    "family",
    "op",
    "size",
    "work_units",
    "policy",
    "threads",
    "samples_ns",
    "median_ns",
    "blocks",
    "stopped_by",
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


@dataclasses.dataclass
class Bounds:
    """How long the native binary measures (the rule is in interleave.h)."""

    min_blocks: int = 6
    max_blocks: int = 200
    ci_width: float = 0.04
    cell_time_cap_ms: float = 1000
    deadline_ms: float = 0  # 0: none
    warmup: bool = True
    by_size: bool = False  # every small cell first, then crossover, then large

    def args(self) -> list[str]:
        return (
            [
                f"--min_blocks={self.min_blocks}",
                f"--max_blocks={self.max_blocks}",
                f"--ci_width={self.ci_width}",
                f"--cell_time_cap_ms={int(self.cell_time_cap_ms)}",
                f"--deadline_ms={int(self.deadline_ms)}",
            ]
            + ([] if self.warmup else ["--nowarmup"])
            + (["--by_size"] if self.by_size else [])
        )


def isa_environment(max_isa: str | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a measured process: `base` (default: this process's) with the
    kernels' ISA capped at max_isa (ONNX_LIGHT_MAX_ISA), or with no cap when None."""
    env = dict(os.environ if base is None else base)
    env.pop(MAX_ISA_VARIABLE, None)
    if max_isa:
        env[MAX_ISA_VARIABLE] = max_isa
    return env


@dataclasses.dataclass(frozen=True)
class ReportNames:
    """Where a report goes inside its output directory."""

    stem: str  # <stem>.md and <stem>.json
    plots: str  # plot directory
    native_dir: str  # the native architecture's runs and calibration profile

    def arch_dir(self, arch: str) -> str:
        return self.native_dir if arch == "x86_64" else arch


def report_names(max_isa: str | None) -> ReportNames:
    """The default report (kernel_report.md, plots/, x86_64/), or for an ISA-capped one its
    files beside it: kernel_report_<isa>.md, plots_<isa>/, x86_64_<isa>/ (the emulated
    aarch64 runs are not capped and stay in aarch64/)."""
    suffix = f"_{max_isa}" if max_isa else ""
    return ReportNames(f"kernel_report{suffix}", f"plots{suffix}", f"x86_64{suffix}")


def plan(cells: int, runs: int, budget_s: float, calibrate_s: float, setup_share: float) -> tuple[float, float]:
    """(per-cell time cap in ms, per-run deadline in ms) that fit `cells` cells x `runs`
    runs into budget_s after calibrate_s, keeping setup_share of each run for set-up."""
    per_run_s = max(budget_s - calibrate_s, 0.0) / max(runs, 1)
    cap_ms = 1000 * per_run_s * (1 - setup_share) / max(cells, 1)
    return cap_ms, 1000 * per_run_s


def list_cells(
    binary: str,
    *,
    smallest: bool = False,
    ops: Sequence[str] | None = None,
    prefix: Sequence[str] = (),
    by_size: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The corpus cells (family, op, element type, size, work units) in the order a run
    takes them, without running any."""
    args = list(prefix) + [binary, "--list"] + (["--by_size"] if by_size else [])
    if smallest:
        args.append("--smallest")
    if ops:
        args.append("--ops=" + ",".join(ops))
    out = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"kernel_baseline_native --list exited {out.returncode}")
    return json.loads(out.stdout)["cases"]


def write_calibrated_values(values: Sequence[tuple[str, str, Any]], path: str) -> None:
    """The --calibrated file of the native binary: key, parameter, kind, value per line."""
    kinds = {bool: "b", int: "i", float: "d", str: "s"}
    with open(path, "w", encoding="utf-8") as f:
        for key, param, value in values:
            text = (
                ("true" if value else "false")
                if isinstance(value, bool)
                else repr(value)
                if isinstance(value, float)
                else str(value)
            )
            f.write(f"{key}\t{param}\t{kinds[type(value)]}\t{text}\n")


def run_baseline(
    binary: str,
    *,
    revision: str,
    build_config_text: str,
    threads: int = 0,
    bounds: Bounds | None = None,
    smallest: bool = False,
    ops: Sequence[str] | None = None,
    calibrated: str | None = None,
    prefix: Sequence[str] = (),
    emulated: bool = False,
    architecture: str | None = None,
    progress: bool = True,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Runs one baseline and returns its document (dict). calibrated: a values file
    (write_calibrated_values) timed as a third policy. env: the process's environment
    (isa_environment); the document records the ISA cap it set, if any."""
    args = (
        list(prefix)
        + [binary, f"--threads={threads}", f"--revision={revision}", f"--build_config={build_config_text}"]
        + (bounds or Bounds()).args()
    )
    if smallest:
        args.append("--smallest")
    if ops:
        args.append("--ops=" + ",".join(ops))
    if calibrated:
        args.append(f"--calibrated={calibrated}")
    out = subprocess.run(
        args,
        stdout=subprocess.PIPE,
        stderr=None if progress else subprocess.DEVNULL,
        text=True,
        check=False,
        env=env,
    )
    if out.returncode != 0:
        raise RuntimeError(f"kernel_baseline_native exited {out.returncode}")
    doc = json.loads(out.stdout)
    doc["metadata"]["max_isa"] = (env if env is not None else os.environ).get(MAX_ISA_VARIABLE) or "none"
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
        if "skipped" in case:
            continue  # listed by skipped(): a budget, not a broken field
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


def skipped(doc: dict[str, Any]) -> list[str]:
    """Cells the time budget left unmeasured ("op element_type size policy")."""
    return [
        f"{c['op']} {c.get('element_type', '')} {c['size']} {c['policy']}"
        for c in doc.get("cases", [])
        if "skipped" in c
    ]


def write(doc: dict[str, Any], path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def read_runs(directory: str, revision: str) -> list[dict[str, Any]]:
    """The baseline_run*.json documents under `directory`, all of `revision` (else ValueError):
    runs taken earlier in the same revision, published together with new ones."""
    paths = sorted(glob.glob(os.path.join(directory, "baseline_run*.json")))
    if not paths:
        raise ValueError(f"no baseline_run*.json under {directory}")
    docs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        found = doc.get("metadata", {}).get("revision")
        if found != revision:
            raise ValueError(f"{path} is of revision {found}, not {revision}")
        docs.append(doc)
    return docs


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
