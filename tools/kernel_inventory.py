"""Kernel inventory: every kernel path with its coverage state, derived from the native
registry, the kernel_family manifests and the sources.

    ./bazelw run //tools:kernel_inventory                       # summary + paths
    ./bazelw run //tools:kernel_inventory -- --format=csv --state=serial
    ./bazelw run //tools:kernel_inventory -- --write_coverage   # benchmarks/reports/coverage.md
"""

import sys

from absl import app, flags
from onnx_light_dev import coverage, environment, validation
from onnx_light_dev import inventory as inventory_lib
from onnx_light_dev import tree as tree_lib

FLAGS = flags.FLAGS
flags.DEFINE_enum("format", "text", ["text", "json", "csv"], "Output format.")
flags.DEFINE_multi_string("family", [], "Only these implementation families (repeatable).")
flags.DEFINE_multi_enum("state", [], list(inventory_lib.STATES), "Only paths in these states (repeatable).")
flags.DEFINE_bool("write_coverage", False, f"Regenerate {coverage.COVERAGE_PATH} in the workspace.")
flags.DEFINE_bool("bazel_query", True, "Under `bazel run`, cross-check the families with `bazel query`.")


def main(argv: list[str]) -> None:
    del argv
    tree, notes = tree_lib.load_current_tree(FLAGS.bazel_query, exemptions_from_workspace=FLAGS.write_coverage)
    validation.attach_dispositions(tree.inventory, tree.exemption_files)
    paths = tree.inventory.filtered(FLAGS.family, FLAGS.state)
    if FLAGS.format == "json":
        print(inventory_lib.format_json(tree.inventory, paths))
    elif FLAGS.format == "csv":
        sys.stdout.write(inventory_lib.format_csv(paths))
    else:
        print(inventory_lib.format_text(tree.inventory, paths))
        for note in notes:
            print(note)
    if FLAGS.write_coverage:
        workspace = environment.workspace_dir()
        if not workspace:
            sys.exit("--write_coverage needs `bazel run` (BUILD_WORKSPACE_DIRECTORY)")
        target = tree_lib.write_coverage(workspace, coverage.render_coverage(tree.inventory))
        print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    app.run(main)
