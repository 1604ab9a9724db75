"""Calibrates kernel tuning values on this machine within a budget and saves a profile.

    ./bazelw run //tools:calibrate -- --ops=Add,Mul --budget_ms=2000 --output=/tmp/p.json
    ./bazelw run //tools:calibrate -- --list          # schemas and their current values

Shows progress while it runs, then a table of what changed and by how much (the median
serial and parallel times at the sizes around the chosen threshold).
"""

import datetime
import json
import os
import subprocess
import sys
from typing import Any

import onnx_light
from absl import app, flags
from onnx_light import kernel_tuning as kt

FLAGS = flags.FLAGS
flags.DEFINE_list("ops", None, "ops to calibrate (default: every calibratable schema)")
flags.DEFINE_list("types", None, "element types to calibrate, e.g. float,double (default: all)")
flags.DEFINE_float("budget_ms", 2000, "total time budget of the measurements, shared by the schemas")
flags.DEFINE_float("memory_mb", 256, "memory budget (inputs and outputs alive at once)")
flags.DEFINE_integer("threads", 0, "participants of the parallel candidate (0: one per physical core)")
flags.DEFINE_string("output", None, "profile document to merge into (default: the user cache path)")
flags.DEFINE_boolean("dry_run", False, "measure and report, but write no profile")
flags.DEFINE_string("revision", None, "source revision to record (default: git describe of the workspace)")
flags.DEFINE_integer("min_size", 1 << 10, "smallest problem size of the crossover search")
flags.DEFINE_integer("max_size", 1 << 24, "largest problem size of the crossover search")
flags.DEFINE_integer("repetitions", 5, "timed runs per candidate and size (median)")
flags.DEFINE_float("margin", 0.10, "a candidate must win by this fraction on consecutive sizes")
flags.DEFINE_boolean("list", False, "list schemas with their current values and sources, then exit")


def source_revision() -> str:
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY", ".")
    try:
        return subprocess.run(
            ["git", "-C", workspace, "describe", "--always", "--dirty", "--tags"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record_conditions(output: str, started: str, load_before: float) -> None:
    """Adds the measurement conditions (load average, build, processor ISA) to the evidence of
    every profile this run wrote (created at or after `started`)."""
    info = onnx_light.build_info()
    conditions = {
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "build": f"{info.get('compilation_mode')} {info.get('compiler', '')}".strip(),
        "isa_selected": info.get("isa_selected"),
    }
    with open(output, encoding="utf-8") as f:
        doc = json.load(f)
    for profile in doc.get("profiles", []):
        if profile.get("created", "") >= started:
            profile.setdefault("evidence", {})["conditions"] = conditions
    with open(output, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def print_current_values(output: str | None) -> None:
    rows = kt.current_values(kt.tuning_source(output or ""))
    print(f"{'schema':<62} {'parameter':<28} {'value':>10} {'source':<24} default")
    for r in rows:
        print(f"{r['schema_key']:<62} {r['param']:<28} {r['value']!s:>10} {r['source']:<24} {r['default']}")
    print(f"{len(rows)} parameters; {sum(1 for r in rows if r['calibratable'])} calibratable")


def progress(done: int, total: int, schema: dict[str, Any], report: dict[str, Any] | None) -> None:
    if report is None:
        line = f"[{done + 1}/{total}] calibrating {schema['op']} {schema['element_type']} ..."
    else:
        b = report["budget"]
        line = (
            f"[{done}/{total}] {schema['op']} {schema['element_type']}: {b['spent_ns'] / 1e6:.0f} ms, {b['runs']} runs"
        )
    end = "\r" if sys.stderr.isatty() and report is None else "\n"
    print(f"{line:<78}", end=end, file=sys.stderr, flush=True)


def around(report: dict[str, Any], value: Any) -> str:
    """Median serial/parallel ms at the measured size nearest the selected threshold."""
    sizes = [s for s in report["evidence"]["sizes"] if "parallel" in s["median_ns"]]
    if not sizes:
        return "-"
    s = min(sizes, key=lambda s: abs(s["size"] - value) if isinstance(value, int) else 0)
    serial, parallel = s["median_ns"]["serial"], s["median_ns"]["parallel"]
    return f"@{s['size']}: serial {serial / 1e3:.1f} us, parallel {parallel / 1e3:.1f} us ({serial / max(parallel, 1):.2f}x)"


def print_summary(result: kt.CalibrationResult) -> None:
    print()
    print(f"{'op':<14} {'type':<10} {'parameter':<26} {'default':>9} {'selected':>9} {'change':>8}  evidence")
    for r in result.reports:
        _, domain, op, element_type, _ = r["schema_key"].split("/", 4)
        for c in r["choices"]:
            change = "kept"
            if c["changed"] and isinstance(c["default"], (int, float)) and c["default"]:
                change = f"{(c['selected'] - c['default']) / c['default']:+.0%}"
            print(
                f"{op:<14} {element_type:<10} {c['name']:<26} {c['default']!s:>9} {c['selected']!s:>9} {change:>8}"
                f"  {around(r, c['selected']) if c['measured'] else '-'}"
            )
            print(f"{'':<14} {c['reason']}")
    for s in result.skipped:
        print(f"skipped: {s}")
    changed = sum(1 for r in result.reports for c in r["choices"] if c["changed"])
    print(
        f"\n{len(result.reports)} schemas calibrated, {changed} values changed; "
        f"spent {result.spent_ns / 1e6:.0f} of {result.budget_ns / 1e6:.0f} ms (the harness's own accounting)"
    )


def main(argv: list[str]) -> int:
    del argv
    if FLAGS.list:
        print_current_values(FLAGS.output)
        return 0
    output = None if FLAGS.dry_run else (FLAGS.output or kt.default_profile_path())
    load, cores = os.getloadavg()[0], kt.host_processor()["logical_cores"]
    if load > cores:
        print(
            f"warning: load average {load:.1f} on {cores} CPUs: other processes compete for the cores, so "
            "parallel candidates will measure worse than on a quiet machine",
            file=sys.stderr,
        )
    budget = kt.CalibrationBudget(time_ms=FLAGS.budget_ms, memory_mb=FLAGS.memory_mb, threads=FLAGS.threads)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    try:
        result = kt.calibrate(
            ops=FLAGS.ops,
            element_types=FLAGS.types,
            budget=budget,
            num_threads=FLAGS.threads,
            output=output,
            revision=FLAGS.revision or source_revision(),
            min_size=FLAGS.min_size,
            max_size=FLAGS.max_size,
            repetitions=FLAGS.repetitions,
            margin=FLAGS.margin,
            progress=progress,
        )
    except (ValueError, kt.ProfileError) as e:
        print(f"calibrate: {e}", file=sys.stderr)
        return 2
    if not result.reports and not result.skipped:
        print("nothing to calibrate: no calibratable schema matches the selection", file=sys.stderr)
        return 1
    print_summary(result)
    if output:
        record_conditions(output, started, load)
        print(f"profiles merged into {output}")
    return 0


if __name__ == "__main__":
    app.run(main)
