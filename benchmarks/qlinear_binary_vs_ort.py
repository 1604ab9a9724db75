"""QLinearAdd / QLinearMul (com.microsoft) alone: onnx-light vs ONNX Runtime, one thread.

    bazel run //benchmarks:qlinear_binary_vs_ort -- [--runs=200] [--rounds=1]

Per case (uint8, 64x56x56: same shape, and B broadcast per channel [1, 64, 1, 1], the
residual-add shapes of int8 ResNet-18 at its first stage): a session per runtime on one
thread, warm-up runs, then --runs timed run() calls; prints the median and the minimum in
microseconds, one line per case and runtime. For an A/B of two onnx-light builds, run the
binaries of the two trees alternately (wall-clock on a shared machine is noisy: report every
round). The models are also instructions_vs_ort's qlinear cases.
"""

import time

import numpy as np
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper

FLAGS = flags.FLAGS
flags.DEFINE_integer("timed_runs", 200, "timed run() calls per case and runtime")
flags.DEFINE_string("cases", "", "comma-separated substrings: only the cases whose name contains one")
flags.DEFINE_string("runtimes", "onnx_light,ort", "comma-separated: onnx_light, ort")
flags.DEFINE_bool("exhaustive", False, "instead of timing: every uint8/int8 value pair vs ORT, for a few scale sets")


TYPICAL = (0.0123, 0.0377, 0.0291, 3, 250, 131)  # (sa, sb, sc, za, zb, zc), zero points as uint8


def qlinear_binary_model(rng, op, a_shape, b_shape, dtype=np.uint8, params=TYPICAL):
    """A one-node QLinearAdd/QLinearMul model (inputs a, b; typical CNN scales) and its feeds."""
    elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    zp = (lambda v: v) if dtype == np.uint8 else (lambda v: v - 128)
    sa, sb, sc, za, zb, zc = params
    inits = [
        numpy_helper.from_array(np.array(sa, np.float32), "sa"),
        numpy_helper.from_array(np.array(zp(za), dtype), "za"),
        numpy_helper.from_array(np.array(sb, np.float32), "sb"),
        numpy_helper.from_array(np.array(zp(zb), dtype), "zb"),
        numpy_helper.from_array(np.array(sc, np.float32), "sc"),
        numpy_helper.from_array(np.array(zp(zc), dtype), "zc"),
    ]
    node = helper.make_node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"], domain="com.microsoft")
    graph = helper.make_graph(
        [node],
        op.lower(),
        [helper.make_tensor_value_info("a", elem, a_shape), helper.make_tensor_value_info("b", elem, b_shape)],
        [helper.make_tensor_value_info("c", elem, None)],
        inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1)],
        ir_version=9,
    )
    info = np.iinfo(dtype)
    feeds = {
        "a": rng.integers(info.min, info.max + 1, a_shape).astype(dtype),
        "b": rng.integers(info.min, info.max + 1, b_shape).astype(dtype),
    }
    return model, feeds


# name: (op, A shape, B shape)
CASES = {
    "qlinearadd_u8_64x56x56": ("QLinearAdd", [1, 64, 56, 56], [1, 64, 56, 56]),
    "qlinearadd_u8_64x56x56_bcast_c": ("QLinearAdd", [1, 64, 56, 56], [1, 64, 1, 1]),
    "qlinearmul_u8_64x56x56": ("QLinearMul", [1, 64, 56, 56], [1, 64, 56, 56]),
}


def _session(runtime, model):
    if runtime == "ort":
        from benchmarks.ort_reference import ort_session  # noqa: PLC0415

        return ort_session(model, 1)
    import onnx_light  # noqa: PLC0415

    return onnx_light.InferenceSession(
        model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=1)
    )


def exhaustive():
    """Every pair of values, same shape, for a few scale sets: bytes differing from ORT."""
    scale_sets = [
        TYPICAL,
        (0.5, 0.25, 0.5, 100, 140, 128),
        (7.1e-3, 2.9e-5, 1.3e-2, 128, 0, 255),
        (0.02, 0.02, 0.04, 128, 128, 128),
        (0.1, 0.003, 0.0007, 10, 20, 30),
    ]
    for dtype in (np.uint8, np.int8):
        info = np.iinfo(dtype)
        values = np.arange(info.min, info.max + 1, dtype=np.int32).astype(dtype)
        a, b = np.repeat(values, 256), np.tile(values, 256)
        for op in ("QLinearAdd", "QLinearMul"):
            for params in scale_sets:
                model, _ = qlinear_binary_model(np.random.default_rng(0), op, [65536], [65536], dtype, params)
                feeds = {"a": a, "b": b}
                ours = _session("onnx_light", model).run(None, feeds)[0].astype(np.int32)
                theirs = _session("ort", model).run(None, feeds)[0].astype(np.int32)
                diff = np.abs(ours - theirs)
                print(
                    f"{op} {np.dtype(dtype).name} scales {params}: {int((diff > 0).sum())} of 65536 pairs differ "
                    f"from ORT (max {int(diff.max())})",
                    flush=True,
                )


def main(argv):
    del argv
    if FLAGS.exhaustive:
        exhaustive()
        return
    only = [s for s in FLAGS.cases.split(",") if s]
    for name, (op, a_shape, b_shape) in CASES.items():
        if only and not any(s in name for s in only):
            continue
        model, feeds = qlinear_binary_model(np.random.default_rng(0), op, a_shape, b_shape)
        outputs = {}
        for runtime in FLAGS.runtimes.split(","):
            session = _session(runtime, model)
            for _ in range(20):
                session.run(None, feeds)
            samples = []
            for _ in range(FLAGS.timed_runs):
                t0 = time.perf_counter()
                session.run(None, feeds)
                samples.append((time.perf_counter() - t0) * 1e6)
            outputs[runtime] = session.run(None, feeds)[0]
            print(f"{name} {runtime} median_us {np.median(samples):.1f} min_us {np.min(samples):.1f}", flush=True)
        if len(outputs) == 2:
            diff = np.abs(outputs["onnx_light"].astype(np.int32) - outputs["ort"].astype(np.int32))
            print(f"{name} bytes_differing_from_ort {int((diff > 0).sum())} max_diff {int(diff.max())}", flush=True)


if __name__ == "__main__":
    app.run(main)
