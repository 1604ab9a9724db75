"""kernel_baseline: every corpus case under the serial policy and the session threads.

    ./bazelw run //tools:kernel_baseline -- --output=/tmp/baseline.json

One JSON document: metadata (revision, processor and execution descriptors, affinity,
spin policy, Bazel config) and, per case, size and policy, every raw latency sample with
CPU time, participants, grain, scratch, allocations and copies.
"""

import json
import sys

from absl import app, flags
from onnx_light_dev import baseline, environment

FLAGS = flags.FLAGS
flags.DEFINE_string("output", None, "where to write the JSON document (default: stdout)")
flags.DEFINE_integer("threads", 0, "session threads (0 = one per physical core)")
flags.DEFINE_integer("repetitions", 15, "samples per cell, at least")
flags.DEFINE_integer("min_time_ms", 200, "sample each cell for at least this long")
flags.DEFINE_bool("smallest", False, "only the smallest size of each case")
flags.DEFINE_list("ops", [], "only these ops")


def main(argv: list[str]) -> None:
    del argv
    doc = baseline.run_baseline(
        baseline.native_binary(),
        revision=environment.revision(environment.workspace_dir()) or "unknown",
        build_config_text=baseline.build_config(),
        threads=FLAGS.threads,
        repetitions=FLAGS.repetitions,
        min_time_ms=FLAGS.min_time_ms,
        smallest=FLAGS.smallest,
        ops=FLAGS.ops,
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
