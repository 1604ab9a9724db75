"""A/B timing of onnx-light convolutions (and whole models) between two arms: two builds
(a package directory holding `onnx_light` each) or two tuning settings of one build, or
both. Benchmark, not a test. It replaces session 11's per-report conv_time.py,
kchunk_time.py, ab_conv.sh, ab_kchunk.sh and ab_summary.py (benchmarks/reports/gemm/).

    # two builds, 8 rounds:
    ./bazelw run //benchmarks:conv_ab -- --rounds=8 --cases=conv3x3_512_7,conv3x3_64_56 \\
        --a_path=/tmp/pkg_main --b_path=/tmp/pkg_branch --json=/tmp/ab.json
    # one build, two values of a tuning parameter (set on every schema declaring it):
    ./bazelw run //benchmarks:conv_ab -- --rounds=6 --cases=conv3x3_512_7,model:/path/resnet50.onnx \\
        --a_tuning=conv.implicit_chunk_panel_bytes=1125899906842624   # A never chunks K, B the default
    # the summary of a text log (this tool's stdout, or session 11's ab_*.txt files):
    ./bazelw run //benchmarks:conv_ab -- --summarize=$PWD/benchmarks/reports/gemm/h106_layout/ab_conv_layout.txt

Each round runs one process per arm, A first in even rounds and B first in odd ones; a
process builds a session per case (1 thread by default), runs it 3 times untimed, then
--runs timed runs (--model_runs for `model:PATH` cases), process CPU time per run. Per
process and case it prints one line

    round R load L ARM CASE MEDIAN_MS SHA1_PREFIX SAMPLE_MS...

(the load average at the round's start; a model:PATH case by its file's stem; the SHA-1
prefix of the first output, equal between arms when their bits are), then per case every round's B/A ratio of medians and
their median, min and max (< 1 = B faster). --json writes the samples, the per-round
medians and the conditions (ort_reference.conditions: CPU, the driver's build, load
before and after; each arm's build_info and package path as its process reports them).
"""

import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnx_light
import onnx_light.kernel_tuning as kt
from absl import app, flags

# conv_vs_ort's flags come with its conv_model; --json (where to write the raw samples) is its.
from benchmarks.conv_vs_ort import conv_model
from benchmarks.ort_reference import block_samples, conditions, finish_document

FLAGS = flags.FLAGS
flags.DEFINE_list("cases", ["conv3x3_512_7"], "CASES names, or model:PATH for a whole .onnx model")
flags.DEFINE_integer("rounds", 6, "rounds, each one process per arm")
flags.DEFINE_integer("runs", 60, "timed runs a process per Conv case (session 11's h102 used 15)")
flags.DEFINE_integer("model_runs", 20, "timed runs a process per model:PATH case")
flags.DEFINE_integer("num_threads", 1, "onnx-light threads")
flags.DEFINE_string("a_path", "", "directory holding arm A's onnx_light package (empty: this build's)")
flags.DEFINE_string("b_path", "", "directory holding arm B's onnx_light package (empty: this build's)")
flags.DEFINE_list("a_tuning", [], "arm A's PARAM=INT tuning values (empty: portable defaults)")
flags.DEFINE_list("b_tuning", [], "arm B's PARAM=INT tuning values (empty: portable defaults)")
flags.DEFINE_string("summarize", None, "only print the summary of this text log and exit")
flags.DEFINE_string("worker_arm", None, "internal: time the cases in this process as this arm")
flags.DEFINE_string("worker_tuning", "", "internal: the worker's PARAM=INT values, comma separated")

# name: conv_vs_ort.conv_model's (cin, cout, hw, kernel, stride, group); every cell the
# session 11 reports timed.
CASES = {
    "conv3x3_512_7": (512, 512, 7, 3, 1, 1),
    "conv3x3_256_14": (256, 256, 14, 3, 1, 1),
    "conv3x3_128_28": (128, 128, 28, 3, 1, 1),
    "conv3x3_64_56": (64, 64, 56, 3, 1, 1),
    "conv3x3_32_56": (32, 32, 56, 3, 1, 1),
    "conv3x3_96_28": (96, 96, 28, 3, 1, 1),
    "conv3x3_160_7": (160, 160, 7, 3, 1, 1),
    "conv3x3_256to512_7": (256, 512, 7, 3, 1, 1),
    "conv3x3_128to512_7": (128, 512, 7, 3, 1, 1),
    "conv3x3_24to40_28": (24, 40, 28, 3, 1, 1),
    "conv1x1_512to2048_7": (512, 2048, 7, 1, 1, 1),
    "conv1x1_2048to512_7": (2048, 512, 7, 1, 1, 1),
}


def parse_tuning(values):
    """[(param, int)] of PARAM=INT strings; raises ValueError naming a malformed one."""
    parsed = []
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"tuning value {item!r} is not PARAM=INT")
        parsed.append((name.strip(), int(value)))
    return parsed


def validate_flags():
    """Checks the driver's flags before any process starts; raises app.UsageError."""
    if FLAGS.rounds < 1 or FLAGS.runs < 1 or FLAGS.model_runs < 1:
        raise app.UsageError("--rounds, --runs and --model_runs must be >= 1")
    for case in FLAGS.cases:
        if case not in CASES and not case.startswith("model:"):
            raise app.UsageError(f"unknown case {case!r}: one of {', '.join(CASES)} or model:PATH")
    try:
        parse_tuning(FLAGS.a_tuning)
        parse_tuning(FLAGS.b_tuning)
    except ValueError as e:
        raise app.UsageError(str(e)) from e
    for path in (FLAGS.a_path, FLAGS.b_path):
        if path and not os.path.isdir(os.path.join(path, "onnx_light")):
            raise app.UsageError(f"{path} holds no onnx_light package")


def case_name(case):
    """The name a case has in the output: model:PATH by its file's stem (model:.../resnet50.onnx: resnet50)."""
    return os.path.splitext(os.path.basename(case))[0] if case.startswith("model:") else case


def case_model(case):
    """(serialized model, feeds, timed runs) of a case."""
    rng = np.random.default_rng(0)
    if case.startswith("model:"):
        model = onnx.load(case[len("model:") :])
        inp = model.graph.input[0]
        shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
        return model.SerializeToString(), {inp.name: rng.standard_normal(shape).astype(np.float32)}, FLAGS.model_runs
    model, feeds = conv_model(rng, *CASES[case])
    return model.SerializeToString(), feeds, FLAGS.runs


def tuning_profile(values):
    """The portable defaults with each (param, value) set explicitly on every schema declaring it."""
    source = kt.portable_defaults()
    for name, value in values:
        keys = [s["key"] for s in kt.schemas() if any(p["name"] == name for p in s["params"])]
        if not keys:
            raise ValueError(f"no kernel schema declares tuning parameter {name!r}")
        for key in keys:
            source.add(key, name, value, kt.EXPLICIT)
    return source


def worker():
    """Times every case in this process; prints one JSON object per case."""
    source = tuning_profile(parse_tuning([v for v in FLAGS.worker_tuning.split(",") if v]))
    for case in FLAGS.cases:
        model, feeds, runs = case_model(case)
        session = onnx_light.InferenceSession(
            model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=FLAGS.num_threads), tuning_profile=source
        )
        out = session.run(None, feeds)[0]
        samples = block_samples(session, feeds, 3, runs, clock=time.process_time)
        record = {
            "case": case_name(case),
            "median_ms": statistics.median(samples),
            "sha1": hashlib.sha1(np.ascontiguousarray(out).tobytes()).hexdigest()[:12],
            "samples_ms": samples,
            "build": onnx_light.build_info(),
            "package": os.path.dirname(os.path.dirname(os.path.abspath(onnx_light.__file__))),
        }
        print(json.dumps(record), flush=True)


def run_arm(arm, path, tuning):
    """One worker process of an arm: its records, in case order."""
    env = dict(os.environ)
    # The arm's package first, then everything this process imports from (absl, numpy, benchmarks).
    env["PYTHONPATH"] = os.pathsep.join(([path] if path else []) + [p for p in sys.path if p])
    command = [sys.executable, os.path.abspath(__file__), f"--worker_arm={arm}", f"--cases={','.join(FLAGS.cases)}"]
    command += [f"--runs={FLAGS.runs}", f"--model_runs={FLAGS.model_runs}", f"--num_threads={FLAGS.num_threads}"]
    command += [f"--worker_tuning={','.join(tuning)}"]
    done = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, text=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def text_line(r, load, arm, record):
    samples = " ".join(f"{x:.3f}" for x in record["samples_ms"])
    return f"round {r} load {load} {arm} {record['case']} {record['median_ms']:.4f} {record['sha1']} {samples}"


def summarize(lines):
    """Per case: every round's A and B medians and B/A, then their median, min and max, and
    the output hashes per arm (from text lines as text_line writes them)."""
    medians, loads, hashes = {}, {}, {}
    for line in lines:
        p = line.split()
        if len(p) < 8 or p[0] != "round":
            continue
        r, load, arm, case, median, sha1 = int(p[1]), p[3], p[4], p[5], float(p[6]), p[7]
        medians.setdefault(case, {}).setdefault(r, {})[arm] = median
        loads[(case, r)] = load
        hashes.setdefault(case, set()).add((arm, sha1))
    report = []
    for case in sorted(medians):
        ratios = []
        for r in sorted(medians[case]):
            m = medians[case][r]
            if "A" in m and "B" in m:
                ratios.append(m["B"] / m["A"])
                report.append(
                    f"{case} round {r} load {loads[(case, r)]} A {m['A']:.4f} ms B {m['B']:.4f} ms B/A {ratios[-1]:.3f}"
                )
        if ratios:
            report.append(
                f"{case}: median time ratio B/A {statistics.median(ratios):.3f} (<1 = B faster) "
                f"min {min(ratios):.3f} max {max(ratios):.3f}; output hashes {sorted(hashes[case])}"
            )
    return report


def main(argv):
    del argv  # flags only
    if FLAGS.summarize:
        with open(FLAGS.summarize) as f:
            print("\n".join(summarize(f)))
        return
    if FLAGS.worker_arm:
        worker()
        return
    validate_flags()

    arms = {"A": (FLAGS.a_path, FLAGS.a_tuning), "B": (FLAGS.b_path, FLAGS.b_tuning)}
    started = conditions(
        threads=FLAGS.num_threads,
        runs=FLAGS.runs,
        model_runs=FLAGS.model_runs,
        timing="process CPU time per run, median per process; processes alternate A/B, order flipped each round",
        arms={arm: {"path": path or "(this build)", "tuning": tuning} for arm, (path, tuning) in arms.items()},
    )
    lines, rounds = [], []
    for r in range(FLAGS.rounds):
        load = f"{os.getloadavg()[0]:.2f}"
        entry = {"round": r, "load_average": load}
        for arm in ("A", "B") if r % 2 == 0 else ("B", "A"):
            entry[arm] = run_arm(arm, *arms[arm])
            for record in entry[arm]:
                lines.append(text_line(r, load, arm, record))
                print(lines[-1], flush=True)
        rounds.append(entry)
    summary = summarize(lines)
    print("\n".join(summary))
    started["arm_builds"] = {
        arm: {"build": rounds[0][arm][0]["build"], "package": rounds[0][arm][0]["package"]} for arm in arms
    }
    doc = {"conditions": started, "cases": FLAGS.cases, "rounds": rounds, "summary": summary}
    finish_document(doc, FLAGS.json or None)


if __name__ == "__main__":
    app.run(main)
