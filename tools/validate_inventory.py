"""validate_inventory: the merge gate between the kernel inventory and the reviewed serial
exemptions (exemptions/<family>.json). Exits non-zero with a readable list of failures,
each saying what to do.

    ./bazelw run //tools:validate_inventory
    ./bazelw run //tools:validate_inventory -- --write_templates [--family=X]   # after merging families
    ./bazelw run //tools:validate_inventory -- --write_templates --family=X --mark_reviewed
"""
import os
import sys

from absl import app
from absl import flags

from onnx_light.tools import coverage
from onnx_light.tools import environment
from onnx_light.tools import exemptions
from onnx_light.tools import measure
from onnx_light.tools import templates
from onnx_light.tools import tree as tree_lib
from onnx_light.tools import validation

FLAGS = flags.FLAGS
flags.DEFINE_bool("write_templates", False,
                  "Create/refresh exemption templates (and the coverage report) in the workspace.")
flags.DEFINE_multi_string("family", [], "With --write_templates: only these families (default: all).")
flags.DEFINE_bool("mark_reviewed", False,
                  "With --write_templates: record that stale entries were re-reviewed (moves them to "
                  "the current fingerprint and evidence).")
flags.DEFINE_bool("measure", True, "With --write_templates: time new serial paths (run_kernel, one participant).")
flags.DEFINE_bool("bazel_query", True, "Under `bazel run`, cross-check the families with `bazel query`.")


def write_templates(tree, workspace):
    runner = measure.native_runner if FLAGS.measure else None
    print("measurements: " + ("serial compute_ns on ONNX conformance inputs" if runner else "off (--nomeasure)"))
    evidence = templates.EvidenceCollector(environment.revision(workspace),
                                           environment.processor_descriptor(), runner)
    directory = os.path.join(workspace, tree_lib.EXEMPTIONS_DIR)
    os.makedirs(directory, exist_ok=True)
    for family in templates.families_to_refresh(tree.inventory, tree.exemption_files, FLAGS.family):
        if family not in tree.inventory.families and family not in tree.exemption_files:
            print(f"{family}: no such family (known: {', '.join(sorted(tree.inventory.families))})")
            continue
        existing = tree.exemption_files.get(family)
        text, changes = templates.refresh_family(family, tree.inventory, existing, evidence,
                                                 FLAGS.mark_reviewed)
        path = os.path.join(directory, exemptions.file_name(family))
        if text is None:
            if os.path.exists(path):
                os.remove(path)
                changes.append("no serial path left: file removed")
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        for change in changes:
            print(f"{path}: {change}")


def main(argv):
    del argv
    tree, notes = tree_lib.load_current_tree(FLAGS.bazel_query, exemptions_from_workspace=FLAGS.write_templates)
    workspace = environment.workspace_dir()
    if FLAGS.write_templates:
        if not workspace:
            sys.exit("--write_templates needs `bazel run` (BUILD_WORKSPACE_DIRECTORY)")
        write_templates(tree, workspace)
        tree.exemption_files = exemptions.load_exemption_files(os.path.join(workspace, tree_lib.EXEMPTIONS_DIR))
        validation.attach_dispositions(tree.inventory, tree.exemption_files)
        tree.coverage_text = coverage.render_coverage(tree.inventory)
        tree_lib.write_coverage(workspace, tree.coverage_text)
    evidence = None
    if workspace:
        evidence = templates.EvidenceCollector(environment.revision(workspace),
                                               environment.processor_descriptor()).context()
    failures = validation.validate(tree.inventory, tree.exemption_files, tree.coverage_text, evidence)
    for note in notes:
        print(note)
    print(validation.report(failures))
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    app.run(main)
