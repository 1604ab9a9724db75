"""validate_inventory: the merge gate between the kernel inventory and the reviewed serial
exemptions (exemptions/<family>.json). Exits non-zero with a readable list of failures,
each saying what to do.

    ./bazelw run //tools:validate_inventory
    ./bazelw run //tools:validate_inventory -- --write_templates [--family=X]   # after merging families
    ./bazelw run //tools:validate_inventory -- --write_templates --family=X --mark_reviewed
"""

import os
import sys

import onnx_light
from absl import app, flags
from onnx_light_dev import coverage, environment, exemptions, measure, templates, validation
from onnx_light_dev import tree as tree_lib

FLAGS = flags.FLAGS
flags.DEFINE_bool(
    "write_templates", False, "Create/refresh exemption templates (and the coverage report) in the workspace."
)
flags.DEFINE_multi_string("family", [], "With --write_templates: only these families (default: all).")
flags.DEFINE_bool(
    "mark_reviewed",
    False,
    "With --write_templates: record that stale entries were re-reviewed (moves them to "
    "the current fingerprint and evidence).",
)
flags.DEFINE_bool("measure", True, "With --write_templates: time new serial paths (run_kernel, one participant).")
flags.DEFINE_float("quiet_load", 0.5, "With measurements: wait until the 1-minute load average is at or below this")
flags.DEFINE_integer("quiet_timeout_s", 600, "How long to wait for quiet (then measure anyway, recorded as not quiet)")
flags.DEFINE_bool("bazel_query", True, "Under `bazel run`, cross-check the families with `bazel query`.")


def write_templates(tree: tree_lib.Tree, workspace: str) -> None:
    """Refreshes exemptions/ and the coverage report in the workspace; reloads them."""
    if environment.has_uncommitted_changes(workspace):
        print(
            "warning: uncommitted changes; the evidence records HEAD as the revision, so commit "
            "the kernel sources first and rerun for exact provenance"
        )
    runner = measure.native_runner if FLAGS.measure else None
    print("measurements: " + ("serial compute_ns on ONNX conformance inputs" if runner else "off (--nomeasure)"))
    build, load = None, None
    if runner is not None:
        # Timings only from the optimised build, and only on a quiet machine (recorded).
        info = onnx_light.build_info()
        if not info["optimized"]:
            sys.exit(f"--write_templates measures: the extension is not optimised ({info['compilation_mode']})")
        build = {k: info[k] for k in ("compilation_mode", "optimized", "compiler", "isa_selected")}
        quiet, before = environment.wait_for_quiet(FLAGS.quiet_load, FLAGS.quiet_timeout_s)
        load = {"load_1min_before": round(before, 2), "quiet_load": FLAGS.quiet_load, "quiet": quiet}
        print(f"build {build}; load {load}")
    evidence = templates.EvidenceCollector(
        environment.revision(workspace), environment.processor_descriptor(), runner, build, load
    )
    directory = os.path.join(workspace, tree_lib.EXEMPTIONS_DIR)
    for line in templates.write_templates(
        directory, tree.inventory, tree.exemption_files, evidence, FLAGS.family, FLAGS.mark_reviewed
    ):
        print(line)
    tree.exemption_files = exemptions.load_exemption_files(directory)
    validation.attach_dispositions(tree.inventory, tree.exemption_files)
    tree.coverage_text = coverage.render_coverage(tree.inventory)
    tree_lib.write_coverage(workspace, tree.coverage_text)


def main(argv: list[str]) -> None:
    del argv
    tree, notes = tree_lib.load_current_tree(FLAGS.bazel_query, exemptions_from_workspace=FLAGS.write_templates)
    workspace = environment.workspace_dir()
    if FLAGS.write_templates:
        if not workspace:
            sys.exit("--write_templates needs `bazel run` (BUILD_WORKSPACE_DIRECTORY)")
        write_templates(tree, workspace)
    evidence = None
    if workspace:
        evidence = templates.EvidenceCollector(
            environment.revision(workspace), environment.processor_descriptor()
        ).context()
    failures = validation.validate(tree.inventory, tree.exemption_files, tree.coverage_text, evidence)
    for note in notes:
        print(note)
    print(validation.report(failures))
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    app.run(main)
