"""kernel_baseline: every corpus case under the serial policy and the session threads
(and a profile's values with --calibrated), interleaved per cell.

    ./bazelw run //tools:kernel_baseline -- --output=/tmp/baseline.json

One JSON document: metadata (revision, processor and execution descriptors, affinity,
spin policy, Bazel config) and, per case, size and policy, every raw latency sample with
CPU time, participants, grain, scratch, allocations and copies.
"""

import json
import os
import sys
import tempfile

from absl import app, flags
from onnx_light import kernel_tuning
from onnx_light_dev import baseline, environment

FLAGS = flags.FLAGS
flags.DEFINE_string("output", None, "where to write the JSON document (default: stdout)")
flags.DEFINE_integer("threads", 0, "session threads (0 = one per physical core)")
flags.DEFINE_integer("min_blocks", 6, "interleaved blocks per cell at least (benchmarks/kernel_baseline/interleave.h)")
flags.DEFINE_integer("max_blocks", 200, "interleaved blocks per cell at most")
flags.DEFINE_float("ci_width", 0.04, "a cell is decided when its speed-up interval has high/low <= 1 + this")
flags.DEFINE_integer("cell_time_cap_ms", 1000, "a cell stops, undecided, after this much sampling")
flags.DEFINE_string(
    "calibrated", None, "time a profile document's values (e.g. ~/.cache/onnx-light/tuning_profiles.json) too"
)
flags.DEFINE_bool("smallest", False, "only the smallest size of each case")
flags.DEFINE_list("ops", [], "only these ops")


def main(argv: list[str]) -> None:
    del argv
    calibrated = None
    if FLAGS.calibrated:
        calibrated = os.path.join(tempfile.mkdtemp(), "calibrated_values.tsv")
        baseline.write_calibrated_values(kernel_tuning.profiled_values(FLAGS.calibrated), calibrated)
    doc = baseline.run_baseline(
        baseline.native_binary(),
        revision=environment.revision(environment.workspace_dir()) or "unknown",
        build_config_text=baseline.build_config(),
        threads=FLAGS.threads,
        bounds=baseline.Bounds(FLAGS.min_blocks, FLAGS.max_blocks, FLAGS.ci_width, FLAGS.cell_time_cap_ms),
        smallest=FLAGS.smallest,
        ops=FLAGS.ops,
        calibrated=calibrated,
    )
    for problem in baseline.problems(doc):
        print(f"kernel_baseline: {problem}", file=sys.stderr)
    if FLAGS.output:
        baseline.write(doc, FLAGS.output)
        print(f"kernel_baseline: wrote {FLAGS.output}", file=sys.stderr)
    else:
        json.dump(doc, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    app.run(main)
