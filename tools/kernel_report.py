"""kernel_report: calibrate, then the baseline three times (x86-64) and a correctness run
(aarch64 under qemu), crossovers, losses, promotion, plots; within a stated time budget.

    ./bazelw run //tools:kernel_report                       # both, 15 + 15 minutes
    ./bazelw run //tools:kernel_report -- --architectures=x86_64 --budget_minutes=15
    ./bazelw run //tools:kernel_report -- --architectures=x86_64 --ops=MatMul --runs=1 \
        --budget_minutes=1 --calibrate_budget_ms=2000 --output_dir=/tmp/report  # a quick check
    ./bazelw run //tools:kernel_report -- --architectures=x86_64 --reuse=aarch64 --max_isa=avx2
        # the AVX2-capped report beside the default one, with the same aarch64 run

x86-64 runs natively: first `//tools:calibrate` within --calibrate_budget_ms writes a
profile for this machine into <output_dir>/x86_64/tuning_profiles.json; the values a
session would take from it are then timed as a third policy, interleaved with serial and
the default (benchmarks/kernel_baseline/interleave.h states the rule). The per-cell time
cap comes from the budget: what is left after calibration, divided over runs and cells,
less a share for set-up; each run also has a hard deadline (cells past it are written as
skipped and listed as not measured). The estimate is printed before anything runs.

ARM64 runs the same corpus built with --config=aarch64 under qemu-user once: outputs are
compared with serial for real (one block, no warm-up; every small cell first, then the
crossover and the large ones, so a deadline leaves out sizes, not ops), timings are
labelled emulated and never promote a default. The builds and the waits for a quiet machine are outside the
budgets (the waits are bounded by --quiet_timeout_s).

Writes <output_dir>/ (workspace-relative): <arch>/baseline_run<N>.json (raw samples),
kernel_report.json, kernel_report.md, plots/*.png. With --max_isa=avx2 the x86-64
calibration and runs take place with ONNX_LIGHT_MAX_ISA=avx2 (recorded in every run's
metadata and in the report) and go beside the default report: x86_64_avx2/,
kernel_report_avx2.{md,json}, plots_avx2/; the emulated aarch64 run is never capped.
"""

import os
import subprocess
import sys
import time

from absl import app, flags
from onnx_light import kernel_tuning
from onnx_light_dev import baseline, environment, publish

FLAGS = flags.FLAGS
flags.DEFINE_list("architectures", ["x86_64", "aarch64"], "which architectures to run")
flags.DEFINE_integer("runs", 3, "baseline runs of the native architecture")
flags.DEFINE_float("budget_minutes", 15, "total time of the native architecture: calibration and every run")
flags.DEFINE_float("emulated_budget_minutes", 15, "time of the aarch64 (qemu) correctness run")
flags.DEFINE_boolean("calibrate", True, "run //tools:calibrate first and time the calibrated profile too")
flags.DEFINE_float("calibrate_budget_ms", 90_000, "the calibration's budget (its --budget_ms), within budget_minutes")
flags.DEFINE_float("setup_share", 0.3, "share of each run's time kept for set-up (inputs, warm-up) beyond cell caps")
flags.DEFINE_integer("min_blocks", 6, "interleaved blocks per cell at least")
flags.DEFINE_integer("max_blocks", 200, "interleaved blocks per cell at most")
flags.DEFINE_float("ci_width", 0.04, "a cell is decided when its speed-up interval has high/low <= 1 + this")
flags.DEFINE_list(
    "reuse",
    [],
    "architectures whose runs of this same revision are read back from output_dir instead of measured "
    "(e.g. the emulated aarch64 run taken earlier, while the machine was not quiet: it checks outputs only)",
)
flags.DEFINE_list("ops", [], "only these ops (a quick check)")
flags.DEFINE_bool("smallest", False, "only each case's smallest size (a quick check)")
flags.DEFINE_string("output_dir", "benchmarks/reports", "report directory (workspace-relative or absolute)")
flags.DEFINE_float("quiet_load", 0.5, "before each run, wait until the 1-minute load average is at or below this")
flags.DEFINE_enum(
    "max_isa",
    None,
    ["avx2", "portable"],
    "cap the kernels' ISA of the x86-64 calibration and runs (ONNX_LIGHT_MAX_ISA: avx2, portable) and write "
    "the report beside the default one as kernel_report_<isa>.{md,json}",
)
flags.DEFINE_integer("quiet_timeout_s", 120, "how long to wait for quiet before a run (then it runs, marked not quiet)")


def aarch64_binary(workspace: str) -> str:
    """Builds the baseline for aarch64 (same commit, opt) and returns its path."""
    bazel = os.path.join(workspace, "bazelw")
    config = ["--config=aarch64", "--config=opt"]
    subprocess.run(
        [bazel, "build", *config, "//benchmarks/kernel_baseline:kernel_baseline_native"], cwd=workspace, check=True
    )
    bin_dir = subprocess.run(
        [bazel, "info", *config, "bazel-bin"], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout.strip()
    return os.path.join(bin_dir, "benchmarks/kernel_baseline/kernel_baseline_native")


def calibrate(workspace: str, profile: str, revision: str, env: dict[str, str]) -> list[tuple[str, str, object]]:
    """Runs //tools:calibrate into `profile` (in environment `env`) and returns the values a
    session takes from it."""
    if os.path.exists(profile):
        os.remove(profile)  # this report's calibration only, not an older one
    subprocess.run(
        [
            os.path.join(workspace, "bazelw"),
            "run",
            "//tools:calibrate",
            "--",
            f"--budget_ms={FLAGS.calibrate_budget_ms:.0f}",
            f"--output={profile}",
            f"--revision={revision}",
        ],
        cwd=workspace,
        check=True,
        env=env,
    )
    return kernel_tuning.profiled_values(profile)


def measure(
    arch: str, binary: str, prefix: list[str], runs: int, bounds: baseline.Bounds, calibrated: str | None, meta: dict
) -> list[dict]:
    """`runs` baseline runs of `arch`, written to <report_dir>/<meta["arch_dir"]>/baseline_run<N>.json."""
    docs = []
    for n in range(1, runs + 1):
        baseline.progress(f"kernel_report: {arch} run {n}/{runs}")
        quiet, load_before = environment.wait_for_quiet(FLAGS.quiet_load, FLAGS.quiet_timeout_s)
        if not quiet:
            baseline.progress(
                f"kernel_report: load {load_before:.2f} stayed above {FLAGS.quiet_load} for "
                f"{FLAGS.quiet_timeout_s} s; running anyway, marked not quiet"
            )
        doc = baseline.run_baseline(
            binary,
            revision=meta["revision"],
            build_config_text=meta["config"],
            bounds=bounds,
            smallest=FLAGS.smallest,
            ops=FLAGS.ops,
            calibrated=calibrated,
            prefix=prefix,
            emulated=meta["emulated"],
            architecture=arch,
            env=meta["env"],
        )
        doc["metadata"]["conditions"] = {
            "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2),
            "quiet_load": FLAGS.quiet_load,
            "quiet": quiet,
        }
        cap = meta["env"].get(baseline.MAX_ISA_VARIABLE)
        if cap and doc["metadata"].get("isa_selected") != cap:
            baseline.progress(
                f"kernel_report: WARNING: {arch} run {n}: the kernels ran at {doc['metadata'].get('isa_selected')}, "
                f"not at the cap {cap}"
            )
        for problem in baseline.problems(doc):
            baseline.progress(f"kernel_report: {arch} run {n}: {problem}")
        if baseline.skipped(doc):
            baseline.progress(f"kernel_report: {arch} run {n}: {len(baseline.skipped(doc))} cells skipped (budget)")
        baseline.write(doc, os.path.join(meta["report_dir"], meta["arch_dir"], f"baseline_run{n}.json"))
        docs.append(doc)
    return docs


def main(argv: list[str]) -> None:
    del argv
    workspace = environment.workspace_dir()
    if not workspace:
        sys.exit("kernel_report: run it with `./bazelw run //tools:kernel_report` (it builds for aarch64)")
    revision = environment.revision(workspace) or "unknown"
    report_dir = os.path.join(workspace, FLAGS.output_dir)
    names = baseline.report_names(FLAGS.max_isa)
    native_env = baseline.isa_environment(FLAGS.max_isa)
    cells = len(baseline.list_cells(baseline.native_binary(), smallest=FLAGS.smallest, ops=FLAGS.ops, env=native_env))
    budget_s = 60 * FLAGS.budget_minutes
    calibrate_s = FLAGS.calibrate_budget_ms / 1000 if FLAGS.calibrate else 0.0
    cap_ms, deadline_ms = baseline.plan(cells, FLAGS.runs, budget_s, calibrate_s, FLAGS.setup_share)
    settings = {}
    if FLAGS.max_isa:
        settings["ISA cap"] = (
            f"x86-64 calibration and runs with {baseline.MAX_ISA_VARIABLE}={FLAGS.max_isa} (aarch64 is never capped)"
        )
    if "x86_64" in FLAGS.architectures:
        settings["x86-64 budget"] = (
            f"{FLAGS.budget_minutes:g} min for calibration ({calibrate_s:g} s, `//tools:calibrate "
            f"--budget_ms={FLAGS.calibrate_budget_ms:.0f}`) and {FLAGS.runs} runs of {cells} cells: "
            f"cell cap {cap_ms:.0f} ms, run deadline {deadline_ms / 1000:.0f} s"
        )
    if "aarch64" in FLAGS.architectures:
        settings["aarch64 budget"] = (
            f"{FLAGS.emulated_budget_minutes:g} min for one qemu correctness run of {cells} cells (one block each)"
        )
    for text in settings.values():
        baseline.progress(f"kernel_report: estimate: {text}")
    baseline.progress(
        f"kernel_report: at most {FLAGS.budget_minutes if 'x86_64' in FLAGS.architectures else 0:g} + "
        f"{FLAGS.emulated_budget_minutes if 'aarch64' in FLAGS.architectures else 0:g} min of measuring, plus the "
        f"aarch64 build and at most {FLAGS.quiet_timeout_s} s of waiting for quiet before each run"
    )
    if cap_ms < 20:
        baseline.progress(f"kernel_report: WARNING: a cell cap of {cap_ms:.0f} ms leaves most cells undecided")
    started = time.monotonic()
    runs_by_arch = {}
    for arch in FLAGS.reuse:
        try:
            runs_by_arch[arch] = baseline.read_runs(os.path.join(report_dir, names.arch_dir(arch)), revision)
        except ValueError as e:
            sys.exit(f"kernel_report: --reuse={arch}: {e}")
        baseline.progress(f"kernel_report: {arch}: {len(runs_by_arch[arch])} run(s) of {revision} read back")
    if set(FLAGS.reuse) & set(FLAGS.architectures):
        sys.exit("kernel_report: an architecture is either measured (--architectures) or reused (--reuse)")
    for arch in FLAGS.architectures:
        meta = {
            "revision": revision,
            "report_dir": report_dir,
            "emulated": arch == "aarch64",
            "arch_dir": names.arch_dir(arch),
            "env": native_env if arch == "x86_64" else baseline.isa_environment(None),
        }
        if arch == "x86_64":
            calibrated = None
            if FLAGS.calibrate:
                arch_dir = os.path.join(report_dir, meta["arch_dir"])
                os.makedirs(arch_dir, exist_ok=True)
                values = calibrate(workspace, os.path.join(arch_dir, "tuning_profiles.json"), revision, native_env)
                calibrated = os.path.join(arch_dir, "calibrated_values.tsv")
                baseline.write_calibrated_values(values, calibrated)
                baseline.progress(f"kernel_report: {len(values)} calibrated values differ from the defaults")
            meta["config"] = baseline.build_config()
            bounds = baseline.Bounds(FLAGS.min_blocks, FLAGS.max_blocks, FLAGS.ci_width, cap_ms, deadline_ms)
            runs_by_arch[arch] = measure(arch, baseline.native_binary(), [], FLAGS.runs, bounds, calibrated, meta)
        elif arch == "aarch64":
            binary = aarch64_binary(workspace)
            meta["config"] = "opt aarch64 (qemu-user)"
            deadline_ms = 60_000 * FLAGS.emulated_budget_minutes
            bounds = baseline.Bounds(1, 1, FLAGS.ci_width, 0, deadline_ms, warmup=False, by_size=True)
            runs_by_arch[arch] = measure(arch, binary, baseline.QEMU_AARCH64, 1, bounds, None, meta)
        else:
            sys.exit(f"kernel_report: unknown architecture {arch}")
    settings["took"] = f"{(time.monotonic() - started) / 60:.1f} min (builds and quiet waits included)"
    analysis = publish.analyse(runs_by_arch)
    decided = publish.decisions(analysis)
    plots = publish.plot(analysis, os.path.join(report_dir, names.plots))
    with open(os.path.join(report_dir, f"{names.stem}.json"), "w", encoding="utf-8") as f:
        f.write(publish.summary_json(analysis, decided, runs_by_arch, settings))
    with open(os.path.join(report_dir, f"{names.stem}.md"), "w", encoding="utf-8") as f:
        f.write(publish.markdown(runs_by_arch, analysis, decided, plots, report_dir, settings))
    print(f"kernel_report: wrote {report_dir}/{names.stem}.md, {names.stem}.json and {len(plots)} plots")


if __name__ == "__main__":
    app.run(main)
