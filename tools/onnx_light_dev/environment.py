"""Where the tools find their inputs and what they record about the machine.

Inputs (manifests, kernel sources, exemptions/, the coverage report) are read from the
runfiles tree: that is what a py_test sees, and `bazel run` builds the same tree. Writes
go to the workspace that `bazel run` was started from (BUILD_WORKSPACE_DIRECTORY).
"""

import os
import subprocess
from collections.abc import Callable
from typing import Any

from onnx_light import kernel_tuning

from onnx_light_dev import inventory

WORKSPACE_NAME = "onnx_light"
# Evidence is taken on the calling thread: a serial path runs there under every policy.
SERIAL_POLICY = {"num_threads": 1, "participants": 1}


def runfiles_root() -> str:
    for variable in ("RUNFILES_DIR", "TEST_SRCDIR"):
        base = os.environ.get(variable)
        if base and os.path.isdir(os.path.join(base, WORKSPACE_NAME)):
            return os.path.join(base, WORKSPACE_NAME)
    return os.getcwd()


def workspace_dir() -> str | None:
    """The source tree of `bazel run`, or None (tests, direct runs)."""
    return os.environ.get("BUILD_WORKSPACE_DIRECTORY") or None


def _git(workspace: str, *args: str) -> str | None:
    try:
        return subprocess.run(
            ["git", "-C", workspace, *args], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def revision(workspace: str | None) -> str | None:
    """git HEAD of the workspace, or None."""
    return _git(workspace, "rev-parse", "HEAD") if workspace else None


def has_uncommitted_changes(workspace: str | None) -> bool:
    return bool(workspace and _git(workspace, "status", "--porcelain", "--untracked-files=no"))


def processor_descriptor() -> dict[str, Any]:
    """The machine, as the tuning profiles name it (onnx_light.kernel_tuning.host_processor):
    its scalar fields; the ISA feature and cache lists stay in the profiles."""
    return {
        k: v
        for k, v in kernel_tuning.host_processor().items()
        if not isinstance(v, (list, dict)) and v not in ("", None)
    }


def bazel_family_problems(workspace: str, manifest_labels: set[str]) -> tuple[list[inventory.Problem], str]:
    """Cross-checks with `bazel query` that every kernel library under native/kernels (but the
    test-only ones) is a kernel_family whose manifest is collected (i.e. listed in families.bzl).
    Returns (problems, note)."""
    bazel = os.path.join(workspace, "bazelw")

    def query(expression: str) -> set[str]:
        out = subprocess.run(
            [bazel, "query", expression, "--output=label"], cwd=workspace, capture_output=True, text=True, timeout=300
        )
        if out.returncode != 0:
            raise RuntimeError((out.stderr.strip().splitlines() or ["bazel query failed"])[-1])
        return set(out.stdout.split())

    try:
        # Test-only kernel libraries (the calibrators' test kernels) are linked into test
        # binaries only, never into the product: not inventoried.
        libraries = query(
            "attr(alwayslink, 1, kind(cc_library, //native/kernels/...)) except attr(testonly, 1, //native/kernels/...)"
        )
        manifests = query("kind(family_manifest, //native/kernels/...)")
    except (OSError, subprocess.SubprocessError, RuntimeError) as e:
        return [], f"bazel query cross-check skipped: {e}"
    return (
        kernel_library_problems(libraries, manifests, manifest_labels),
        f"bazel query cross-check: {len(libraries)} kernel libraries",
    )


def kernel_library_problems(
    libraries: set[str], manifest_targets: set[str], collected_labels: set[str]
) -> list[inventory.Problem]:
    """Kernel libraries are the alwayslink cc_libraries (their registrations run at start-up);
    each must be a kernel_family (a <name>_manifest target exists) whose manifest the
    inventory collected (its label is in families.bzl). Plain helper libraries are not
    kernels and are not alwayslink."""
    problems = []
    for library in sorted(libraries):
        if library + "_manifest" not in manifest_targets:
            problems.append(
                inventory.Problem(
                    f"{library} is an alwayslink kernel library without a manifest",
                    "declare it with kernel_family() (native/kernels/kernel_family.bzl)",
                )
            )
        elif library not in collected_labels:
            problems.append(
                inventory.Problem(
                    f"kernel_family {library} is not in native/kernels/families.bzl",
                    "add its label there so that it is linked and inventoried",
                )
            )
    return problems


def wait_for_quiet(
    max_load: float,
    timeout_s: float,
    poll_s: float = 10.0,
    loadavg: Callable[[], tuple[float, float, float]] = os.getloadavg,
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> tuple[bool, float]:
    """Waits (at most timeout_s) until the 1-minute load average is at or below max_load, so
    that timings are not taken beside a compile. Returns (quiet, load): whether it got quiet
    and the last load seen; a caller records both with its result."""
    import time

    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    deadline = clock() + timeout_s
    while True:
        load = loadavg()[0]
        if load <= max_load:
            return True, load
        if clock() >= deadline:
            return False, load
        sleep(poll_s)
