"""The ONNX node test suite against onnx-light, under four policies: serial, the default
parallel one, and forced parallel (4 participants, every `parallel.*` threshold at its
minimum: onnx_light.kernel_tuning.forced_parallel_tuning), so that every kernel which can
split its work does, even on the suite's tiny inputs; all three at the default graph
optimisation level ("all"), and serial once more with graph optimisations disabled
("serial_unoptimized"), which must fail exactly the cases the serial run fails.

Each case runs through onnx_light.backend and is compared with the case's expected outputs
by onnx's own BackendTest comparison (same rtol/atol); under forced parallel its outputs
must also equal the serial run's bit for bit (the determinism contract), except for the
cases listed with a reason in conformance_forced_parallel_exceptions.txt. Known failures
live in conformance_known_failures.txt (`case<TAB>reason`); the run fails when a case
outside the list fails or a listed case passes, so the list stays true (likewise for the
exceptions). Cases run in forked worker processes: a crashing or hanging case is reported
as a failure of that case, not lost. The output says how many cases opened regions with
more than one participant under forced parallel (from the runs' region events).

    conformance.py            check against the list
    conformance.py --update   rewrite the list (bazel run //python:update_conformance_known_failures)
    conformance.py --installed_wheel W [--pip_install P ...]
                              install wheel W (and packages P, e.g. ml_dtypes==0.7.0) into a
                              fresh venv and check the installed package, not Bazel's runfiles
                              (the py_test does this with the wheel `bazel build //python:wheel`
                              makes: users run that package)
"""

import argparse
import multiprocessing
import multiprocessing.connection
import os
import re
import sys
import time
import traceback
import warnings

KNOWN_FAILURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conformance_known_failures.txt")
BITWISE_EXCEPTIONS = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "conformance_forced_parallel_exceptions.txt"
)
CASE_TIMEOUT_SECONDS = 60
POLICIES = ("serial", "parallel", "forced_parallel", "serial_unoptimized")
FORCED_PARALLEL_PARTICIPANTS = 4
FORCED_PARALLEL_JOIN_WAIT_MICROSECONDS = 100000


def load_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.loader import load_model_tests

        return {case.name: case for case in load_model_tests(kind="node")}


def one_line(error):
    text = f"{type(error).__name__}: {error}".replace("\t", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines[:2])[:300]


# ONNX leaves a Cast from floating point to a fixed-point type undefined out of the
# target's range. The suite computes those expected values with ml_dtypes' astype, which
# wraps in ml_dtypes 0.6 and gives 0 in 0.7, so for casts to the 2- and 4-bit integers
# (the types whose range the suite's inputs exceed) only the defined elements are compared.
_UNDEFINED_OUT_OF_RANGE_CAST = re.compile(r"^test_cast(like)?_(FLOAT|FLOAT16)_to_(U?INT[24])(_expanded)?$")
_FIXED_POINT_RANGE = {"INT2": (-2, 1), "UINT2": (0, 3), "INT4": (-8, 7), "UINT4": (0, 15)}


def _defined_elements_only(case_name, inputs, outputs, expected):
    """outputs with every undefined element (see above) replaced by the expected one."""
    match = _UNDEFINED_OUT_OF_RANGE_CAST.match(case_name)
    if not match:
        return outputs
    import numpy as np

    low, high = _FIXED_POINT_RANGE[match.group(3)]
    source = np.rint(np.asarray(inputs[0], dtype=np.float64))
    undefined = ~((source >= low) & (source <= high))  # NaN and infinities included
    output = np.array(outputs[0], copy=True)
    output[undefined] = expected[0][undefined]
    return [output] + list(outputs[1:])


def same_bits(a, b):
    """Whether two run outputs (arrays, lists for sequences, None) are identical bit for bit."""
    import numpy as np

    if isinstance(a, list) or isinstance(b, list):
        return (
            isinstance(a, list)
            and isinstance(b, list)
            and len(a) == len(b)
            and all(same_bits(x, y) for x, y in zip(a, b))
        )
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist()
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


class Outcome:
    """One case under one policy: reason (None = passed), the outputs of every data set,
    whether they differ from the serial run's bit for bit (None: not compared, a run gave
    no outputs), and the regions opened with more than one participant."""

    def __init__(self, reason=None, outputs=None, differs=None, multi_participant_regions=0):
        self.reason = reason
        self.outputs = outputs
        self.differs = differs
        self.multi_participant_regions = multi_participant_regions


def prepare(case, policy, tuning, level):
    """onnx_light.backend.prepare, at graph optimisation `level` (None: the default)."""
    import onnx
    import onnx_light.backend

    if level is None:
        return onnx_light.backend.prepare(case.model, "CPU", cpu_execution=policy, tuning_profile=tuning)
    onnx.checker.check_model(case.model)  # as prepare does
    session = onnx_light.InferenceSession(
        case.model, cpu_execution=policy, tuning_profile=tuning, graph_optimization_level=level
    )
    return onnx_light.backend.OnnxLightBackendRep(session)


def run_case(case, policy, tuning=None, serial=None, level=None):
    """The case's Outcome under `policy` (and `tuning`, graph optimisation `level`); with
    `serial` (the serial run's Outcome), also compares the outputs with it bit for bit and
    counts regions."""
    from onnx.backend.test.runner import Runner, _normalize_tensor

    outcome = Outcome(outputs=[])
    try:
        rep = prepare(case, policy, tuning, level)
        for inputs, expected in case.data_sets:
            # As onnx's runner does: data sets may hold TensorProtos (types numpy lacks).
            feeds = [_normalize_tensor(x) for x in inputs]
            if serial is None:
                outputs = list(rep.run(feeds))
            else:
                outputs, _, regions = rep.run_with_events(feeds)
                outcome.multi_participant_regions += sum(1 for r in regions if r.admitted_participants > 1)
            outcome.outputs.append(outputs)
            expected = [_normalize_tensor(x) for x in expected]
            outputs = _defined_elements_only(case.name, feeds, outputs, expected)
            Runner.assert_similar_outputs(expected, outputs, rtol=case.rtol, atol=case.atol)
    except Exception as error:  # noqa: BLE001  every failure is a result to report
        outcome.reason = one_line(error)
    # Compared whenever both runs produced outputs for every data set, even when these miss
    # the expected ones (a seeded random op that cannot reproduce numpy's stream must still
    # reproduce its own serial run).
    if serial is not None and len(serial.outputs or []) == len(outcome.outputs) == len(case.data_sets):
        outcome.differs = not same_bits(serial.outputs, outcome.outputs)
    outcome.outputs = None if serial is not None else outcome.outputs
    return outcome


def make_policies():
    """policy name -> (CpuExecutionPolicy, tuning source or None, graph optimisation level
    or None for the default)."""
    import onnx_light
    from onnx_light import kernel_tuning

    default = onnx_light.CpuExecutionPolicy()
    # "parallel" is the default policy, or two participants where the default is serial.
    parallel = default if default.effective_threads() > 1 else onnx_light.CpuExecutionPolicy(num_threads=2)
    # The caller waits (bounded) for its workers, so that every admitted participant runs
    # blocks even in the tiny regions of the node tests.
    forced = onnx_light.CpuExecutionPolicy(
        num_threads=FORCED_PARALLEL_PARTICIPANTS, join_wait_microseconds=FORCED_PARALLEL_JOIN_WAIT_MICROSECONDS
    )
    return {
        "serial": (onnx_light.CpuExecutionPolicy(num_threads=1), None, None),
        "parallel": (parallel, None, None),
        "forced_parallel": (forced, kernel_tuning.forced_parallel_tuning(), None),
        "serial_unoptimized": (onnx_light.CpuExecutionPolicy(num_threads=1), None, "disabled"),
    }


def worker(conn, cases, names):
    policies = make_policies()
    for name in names:
        serial = None
        for policy in POLICIES:
            conn.send(("start", name, policy))
            execution, tuning, level = policies[policy]
            outcome = run_case(cases[name], execution, tuning, serial if policy == "forced_parallel" else None, level)
            if policy == "serial":
                serial = outcome
            conn.send(("done", name, policy, (outcome.reason, outcome.differs, outcome.multi_participant_regions)))
    conn.close()


def run_all(cases, names, workers):
    """{(case, policy): reason or None}; crashes and hangs become reasons."""
    ctx = multiprocessing.get_context("fork")
    pending = list(names)
    results = {}
    details = {}  # (case, policy) -> (differs from serial bit for bit, multi-participant regions)
    chunk = max(1, len(pending) // (workers * 4))
    active = {}  # connection -> [process, current (name, policy), started, assigned names]

    def launch():
        assigned, pending[:] = pending[:chunk], pending[chunk:]
        parent, child = ctx.Pipe(duplex=False)
        process = ctx.Process(target=worker, args=(child, cases, assigned), daemon=True)
        process.start()
        child.close()
        active[parent] = [process, None, time.monotonic(), assigned]

    def abandon(conn, reason):
        process, current, _, assigned = active.pop(conn)
        process.kill()
        process.join()
        if current is not None:
            results[current] = reason
        # Cases the worker did not finish go back to the queue.
        unfinished = [n for n in assigned if any((n, p) not in results for p in POLICIES)]
        for n in unfinished:
            if current is not None and n == current[0]:
                for p in POLICIES:
                    results.setdefault((n, p), f"not run: {reason} under the {current[1]} policy")
            else:
                pending.insert(0, n)

    while pending and len(active) < workers:
        launch()
    while active:
        ready = multiprocessing.connection.wait(list(active), timeout=1.0)
        for conn in ready:
            try:
                message = conn.recv()
            except EOFError:
                process = active[conn][0]
                process.join()
                if process.exitcode == 0:
                    active.pop(conn)
                else:
                    abandon(conn, f"crash: the worker process died (exit code {process.exitcode})")
                if pending:
                    launch()
                continue
            if message[0] == "start":
                active[conn][1] = (message[1], message[2])
                active[conn][2] = time.monotonic()
            else:
                reason, differs, multi = message[3]
                results[(message[1], message[2])] = reason
                details[(message[1], message[2])] = (differs, multi)
                active[conn][1] = None
        for conn, (_process, current, started, _) in list(active.items()):
            if current is not None and time.monotonic() - started > CASE_TIMEOUT_SECONDS:
                abandon(conn, f"hang: no result within {CASE_TIMEOUT_SECONDS} s")
                if pending:
                    launch()
    return results, details


def read_known_failures(path):
    known = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line and not line.startswith("#"):
                    name, _, reason = line.partition("\t")
                    known[name] = reason
    return known


def case_reason(results, name):
    """A case fails when any policy fails; differing outcomes are reported as such."""
    reasons = [results[(name, policy)] for policy in POLICIES]
    if all(r is None for r in reasons):
        return None
    if all(r == reasons[0] for r in reasons):
        return reasons[0]
    return " | ".join(f"{policy}: {r or 'passed'}" for policy, r in zip(POLICIES, reasons))


def run_in_venv_with_wheel(wheel, pip_install, argv):
    """Runs this script under a fresh venv's Python with `wheel` installed; its exit code."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="conformance-venv-") as venv:
        # System site packages give onnx, numpy and ml_dtypes at their pins; the venv's own
        # packages (the wheel, and pip_install overrides) come first on sys.path.
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run(pip + ["--no-index", "--no-deps", wheel], check=True)
        if pip_install:
            subprocess.run(pip + list(pip_install), check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
        check = (
            f"import onnx_light, ml_dtypes; assert onnx_light.__file__.startswith({venv!r}), onnx_light.__file__; "
            "print('conformance: installed onnx_light', onnx_light.build_info(), "
            "'ml_dtypes', ml_dtypes.__version__)"
        )
        subprocess.run([python, "-c", check], check=True, env=env, cwd=venv)
        return subprocess.run([python, os.path.abspath(__file__)] + argv, env=env, cwd=venv).returncode


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a.startswith("--installed_wheel") for a in argv):
        pre = argparse.ArgumentParser()
        pre.add_argument("--installed_wheel")
        pre.add_argument("--pip_install", action="append", default=[])
        wheel_args, rest = pre.parse_known_args(argv)
        if "--known_failures" not in rest:
            rest += ["--known_failures", KNOWN_FAILURES]
        return run_in_venv_with_wheel(os.path.abspath(wheel_args.installed_wheel), wheel_args.pip_install, rest)

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="rewrite the known-failures list")
    parser.add_argument("--known_failures", default=None, help="list to read or write")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument(
        "--bitwise_exceptions",
        default=BITWISE_EXCEPTIONS,
        help="cases whose forced-parallel outputs may differ from the serial run's, with reasons",
    )
    args = parser.parse_args(argv)
    path = args.known_failures
    if path is None:
        workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
        path = (
            os.path.join(workspace, "python/tests/conformance_known_failures.txt")
            if args.update and workspace
            else KNOWN_FAILURES
        )

    started = time.monotonic()
    cases = load_cases()
    names = sorted(n for n in cases if args.filter in n)
    results, details = run_all(cases, names, args.workers)
    for policy in POLICIES:
        passed = sum(1 for n in names if results[(n, policy)] is None)
        print(f"conformance: {passed} passed of {len(names)} ({policy} policy)")
    forced = [details.get((n, "forced_parallel"), (None, 0)) for n in names]
    multi = sum(1 for _, regions in forced if regions > 0)
    print(
        f"forced_parallel: {multi} of {len(names)} cases opened regions with more than one participant "
        f"({sum(regions for _, regions in forced)} such regions)"
    )
    differs = {n for n in names if details.get((n, "forced_parallel"), (None, 0))[0]}
    failures = {n: case_reason(results, n) for n in names}
    failures = {n: r for n, r in failures.items() if r is not None}

    exceptions_path = args.bitwise_exceptions
    exceptions = read_known_failures(exceptions_path)
    if args.filter:
        exceptions = {n: r for n, r in exceptions.items() if args.filter in n}
    if args.update:
        with open(path, "w", encoding="utf-8") as f:
            f.write("# ONNX node test cases onnx-light fails, with the reason. Regenerate with\n")
            f.write("#   ./bazelw run //python:update_conformance_known_failures\n")
            for name in sorted(failures):
                f.write(f"{name}\t{failures[name]}\n")
        print(f"wrote {len(failures)} known failures to {path} ({time.monotonic() - started:.0f} s)")
        return 0

    known = read_known_failures(path)
    if args.filter:
        known = {n: r for n, r in known.items() if args.filter in n}
    # A case whose outputs differ from the serial run's fails the run unless it is a listed
    # exception, whether or not it is also a known failure.
    unexpected_differences = sorted(differs - set(exceptions))
    for name in unexpected_differences:
        print(f"DIFFERS FROM SERIAL {name}: forced-parallel outputs are not the serial run's bit for bit")
    compared = {n for n in names if details.get((n, "forced_parallel"), (None, 0))[0] is not None}
    # Unseeded random cases (the exception's reason starts with "unseeded") draw a fresh seed
    # on every run: they usually differ from serial and from the reference but can match by
    # chance (a 10-element Bernoulli does about once in 1,024 runs). Neither outcome says
    # anything about the kernels, so no check below fails on them.
    unseeded = {n for n, reason in exceptions.items() if reason.startswith("unseeded")}
    identical = sorted(n for n in exceptions if n in cases and n in compared and n not in differs | unseeded)
    for name in identical:
        print(f"NOW IDENTICAL {name} (remove it from {os.path.basename(exceptions_path)})")
    for name in sorted(differs & set(exceptions)):
        print(f"differs from serial (listed exception): {name}: {exceptions[name]}")
    new_failures = sorted(set(failures) - set(known))
    now_passing = sorted(n for n in known if n in cases and n not in failures and n not in unseeded)
    vanished = sorted(n for n in known if n not in cases)
    for name in new_failures:
        print(f"NEW FAILURE  {name}: {failures[name]}")
    for name in now_passing:
        print(f"NOW PASSES   {name} (remove it from the known failures)")
    for name in vanished:
        print(f"NO SUCH CASE {name} (remove it from the known failures)")
    print(f"{len(failures)} failing, {len(known)} known ({time.monotonic() - started:.0f} s)")
    # Graph optimisations must not change which cases pass.
    level_differences = sorted(
        n
        for n in names
        if n not in unseeded and (results[(n, "serial")] is None) != (results[(n, "serial_unoptimized")] is None)
    )
    for name in level_differences:
        print(
            f"OPTIMISATION CHANGES THE RESULT {name}: serial {results[(name, 'serial')] or 'passed'}; "
            f"serial_unoptimized {results[(name, 'serial_unoptimized')] or 'passed'}"
        )
    if level_differences:
        print("graph optimisations change which cases pass: fix the rewrite")
        return 1
    if identical or unexpected_differences:
        print("forced parallel and serial disagree with the exceptions list: fix the kernels or the list")
        return 1
    if new_failures or now_passing or vanished:
        print(
            "the known-failures list is out of date: fix the cases or run "
            "./bazelw run //python:update_conformance_known_failures"
        )
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(2)
