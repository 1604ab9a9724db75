"""Builds the onnx_light wheel: the package's .py files and _native.so with the METADATA,
WHEEL and RECORD files of the wheel format (Bazel 4.2 has no offline py_wheel).

    build_wheel.py --out onnx_light-<version>-<tag>.whl --version V [--status_file F] files...

Each file lands at its path from the last "onnx_light/" on (.../onnx_light/_native.so too).
"""

import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

from absl import app, flags

OUT = flags.DEFINE_string("out", None, "the wheel to write", required=True)
VERSION = flags.DEFINE_string("version", None, "the package version", required=True)
STATUS_FILE = flags.DEFINE_string("status_file", None, "Bazel's stable-status.txt (the revision)")

# Run-time dependencies, with the ranges CI tests: the pins of requirements.txt, and for
# ml_dtypes also its newest release (.ci/run installs the wheel into fresh venvs with each
# and runs the conformance suite against the installed package).
REQUIRES = ["numpy>=2.4.6,<2.5", "onnx>=1.23.2,<1.24", "ml_dtypes>=0.6.0,<0.8"]


def revision(status_file):
    """STABLE_ONNX_LIGHT_REVISION from Bazel's stable-status.txt (tools/workspace_status.sh)."""
    if status_file:
        with open(status_file, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.strip().partition(" ")
                if key == "STABLE_ONNX_LIGHT_REVISION":
                    return value
    return "unknown"


def python_tag():
    """The interpreter the extension was built against: cp311-cp311-linux_x86_64."""
    version = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{version}-{version}-{platform}"


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main(argv: list[str]) -> None:
    sources = argv[1:]  # package files (.py, .pyi, .so) under onnx_light/
    if not sources:
        sys.exit("build_wheel: no package files given")

    tag = python_tag()
    expected = f"onnx_light-{VERSION.value}-{tag}.whl"
    if os.path.basename(OUT.value) != expected:
        sys.exit(
            f"build_wheel: this interpreter makes {expected}, but the target declares "
            f"{os.path.basename(OUT.value)}: update WHEEL_TAG in python/BUILD"
        )

    files = {}
    for source in sources:
        relative = source[source.rindex("onnx_light/") :]
        with open(source, "rb") as f:
            files[relative] = f.read()
    if "onnx_light/_native.so" not in files:
        sys.exit("build_wheel: no onnx_light/_native.so among the files")
    files["onnx_light/REVISION"] = (revision(STATUS_FILE.value) + "\n").encode()

    dist_info = f"onnx_light-{VERSION.value}.dist-info"
    files[f"{dist_info}/METADATA"] = (
        "\n".join(
            [
                "Metadata-Version: 2.1",
                "Name: onnx-light",
                f"Version: {VERSION.value}",
                "Summary: Native CPU kernels for ONNX models with an ONNX Runtime style Python API",
                f"Requires-Python: =={sys.version_info[0]}.{sys.version_info[1]}.*",
            ]
            + [f"Requires-Dist: {r}" for r in REQUIRES]
        ).encode()
        + b"\n"
    )
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: onnx_light build_wheel\nRoot-Is-Purelib: false\nTag: {tag}\n".encode()
    )
    record = [record_line(path, data) for path, data in sorted(files.items())]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    # Fixed timestamps and order: the same inputs give the same bytes.
    with zipfile.ZipFile(OUT.value, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for path, data in sorted(files.items()):
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if ".so" in os.path.basename(path) else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)


if __name__ == "__main__":
    app.run(main)
