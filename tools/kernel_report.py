"""kernel_report: the baseline three times per architecture, crossovers, promotion, plots.

    ./bazelw run //tools:kernel_report
    ./bazelw run //tools:kernel_report -- --architectures=x86_64 --runs=3

x86-64 runs natively. ARM64 runs the same corpus built with --config=aarch64 under
qemu-user: outputs are compared with serial for real, timings are labelled emulated and
never promote a default. Writes benchmarks/reports/ (in the workspace): <arch>/
baseline_run<N>.json (raw samples), kernel_report.json, kernel_report.md, plots/*.png.
"""

import os
import subprocess
import sys

from absl import app, flags
from onnx_light_dev import baseline, environment, publish

FLAGS = flags.FLAGS
flags.DEFINE_list("architectures", ["x86_64", "aarch64"], "which architectures to run")
flags.DEFINE_integer("runs", 3, "baseline runs per architecture")
flags.DEFINE_integer("repetitions", 15, "samples per cell (native)")
flags.DEFINE_integer("min_time_ms", 200, "sampling time per cell (native)")
flags.DEFINE_integer("emulated_repetitions", 3, "samples per cell under qemu (slow)")
flags.DEFINE_bool("smallest", False, "only each case's smallest size (a quick check)")
flags.DEFINE_string("output_dir", "benchmarks/reports", "workspace-relative report directory")
flags.DEFINE_float("quiet_load", 0.5, "before each run, wait until the 1-minute load average is at or below this")
flags.DEFINE_integer("quiet_timeout_s", 600, "how long to wait for quiet before a run (then it runs, marked not quiet)")


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


def main(argv: list[str]) -> None:
    del argv
    workspace = environment.workspace_dir()
    if not workspace:
        sys.exit("kernel_report: run it with `./bazelw run //tools:kernel_report` (it builds for aarch64)")
    revision = environment.revision(workspace) or "unknown"
    report_dir = os.path.join(workspace, FLAGS.output_dir)
    runs_by_arch = {}
    for arch in FLAGS.architectures:
        if arch == "x86_64":
            binary, prefix, emulated = baseline.native_binary(), (), False
            config, reps, min_ms = baseline.build_config(), FLAGS.repetitions, FLAGS.min_time_ms
        elif arch == "aarch64":
            binary, prefix, emulated = aarch64_binary(workspace), baseline.QEMU_AARCH64, True
            config, reps, min_ms = "opt aarch64 (qemu-user)", FLAGS.emulated_repetitions, 0
        else:
            sys.exit(f"kernel_report: unknown architecture {arch}")
        runs = []
        for n in range(1, FLAGS.runs + 1):
            baseline.progress(f"kernel_report: {arch} run {n}/{FLAGS.runs}")
            quiet, load_before = environment.wait_for_quiet(FLAGS.quiet_load, FLAGS.quiet_timeout_s)
            if not quiet:
                baseline.progress(
                    f"kernel_report: load {load_before:.2f} stayed above {FLAGS.quiet_load} for "
                    f"{FLAGS.quiet_timeout_s} s; running anyway, marked not quiet"
                )
            doc = baseline.run_baseline(
                binary,
                revision=revision,
                build_config_text=config,
                repetitions=reps,
                min_time_ms=min_ms,
                smallest=FLAGS.smallest,
                prefix=prefix,
                emulated=emulated,
                architecture=arch,
            )
            doc["metadata"]["conditions"] = {
                "load_before": round(load_before, 2),
                "load_after": round(os.getloadavg()[0], 2),
                "quiet_load": FLAGS.quiet_load,
                "quiet": quiet,
            }
            for problem in baseline.problems(doc):
                baseline.progress(f"kernel_report: {arch} run {n}: {problem}")
            baseline.write(doc, os.path.join(report_dir, arch, f"baseline_run{n}.json"))
            runs.append(doc)
        runs_by_arch[arch] = runs
    analysis = publish.analyse(runs_by_arch)
    decided = publish.decisions(analysis)
    plots = publish.plot(analysis, os.path.join(report_dir, "plots"))
    with open(os.path.join(report_dir, "kernel_report.json"), "w", encoding="utf-8") as f:
        f.write(publish.summary_json(analysis, decided, runs_by_arch))
    with open(os.path.join(report_dir, "kernel_report.md"), "w", encoding="utf-8") as f:
        f.write(publish.markdown(runs_by_arch, analysis, decided, plots, report_dir))
    print(f"kernel_report: wrote {report_dir}/kernel_report.md, kernel_report.json and {len(plots)} plots")


if __name__ == "__main__":
    app.run(main)
