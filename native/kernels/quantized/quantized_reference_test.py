"""ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul against onnx.reference on random
cases, bit for bit (integer results and the reference's round-half-to-even requantisation
are exact): both signednesses, zero points 0/128/255 (and their int8 counterparts),
per-channel weight zero points and scales, groups, depthwise, strides, pads, dilations,
1-D/2-D/3-D, batched and broadcast matmuls. Weights both as constant initializers (packed
once at session creation) and as graph inputs (packed per run), serial and two threads.
"""

import numpy as np
import onnx
import onnx.reference
import onnx_light
import pytest
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20261201)
POLICIES = {"serial": 1, "two_threads": 2}
TYPES = {
    np.uint8: TensorProto.UINT8,
    np.int8: TensorProto.INT8,
    np.int32: TensorProto.INT32,
    np.float32: TensorProto.FLOAT,
}


def _bytes(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, size=shape).astype(dtype)


def _zero_point(dtype, index):
    """Zero points 0, 128, 255 for uint8; -128, 0, 127 for int8."""
    values = [0, 128, 255] if dtype == np.uint8 else [-128, 0, 127]
    return np.array(values[index % 3], dtype=dtype)


def _y_scale(x, x_zp, w, w_zp, k, scale):
    """A y_scale that maps the accumulators' typical magnitude to about 50 steps: most
    outputs land inside the 8-bit range, a few saturate."""
    xs = x.astype(np.float64) - x_zp.astype(np.float64)
    ws = w.astype(np.float64) - np.mean(w_zp.astype(np.float64))
    typical = np.sqrt(k) * xs.std() * ws.std() + k * abs(xs.mean() * ws.mean())
    return np.array(scale * typical / 50.0, dtype=np.float32)


def _model(op, inputs, constants, attrs):
    """A one-node model: `inputs` (name -> array) become graph inputs unless named in `constants`."""
    graph_inputs, initializers, names = [], [], []
    for name, value in inputs.items():
        names.append(name if value is not None else "")
        if value is None:
            continue
        if name in constants:
            initializers.append(numpy_helper.from_array(value, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, TYPES[value.dtype.type], list(value.shape)))
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        graph_inputs,
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        initializer=initializers,
    )
    opset = 21 if op == "QLinearMatMul" else 13
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(op, inputs, constants, attrs, threads):
    model = _model(op, inputs, constants, attrs)
    feeds = {k: v for k, v in inputs.items() if v is not None and k not in constants}
    want = onnx.reference.ReferenceEvaluator(model).run(None, feeds)[0]
    session = onnx_light.InferenceSession(
        model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
    )
    for _ in range(2):  # the second run reuses what the first prepared
        got = np.asarray(session.run(None, feeds)[0])
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)
    return session


def _expect_weights_absorbed(session, w, attrs, absorbed):
    """A constant W with a constant zero point is packed at creation and released (held:
    at least its bytes, packed); a depthwise W (read by the direct loop) or one whose zero
    point is a graph input is kept."""
    memory = session.constant_memory()
    depthwise = attrs.get("group", 1) == w.shape[0] and w.shape[1] == 1
    if absorbed and not depthwise:
        assert memory.released_initializers == 1 and memory.released_bytes == w.nbytes, memory
        assert memory.absorbed_held_bytes >= w.nbytes, memory
    else:
        assert memory.released_initializers == 0 and memory.absorbed_held_bytes == 0, memory


# (x shape, w shape, attributes); W is (M, C / group, kernel...).
CONV_CASES = [
    ((1, 32, 28, 28), (64, 32, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 3, 9, 8), (4, 3, 3, 3), {"pads": [1, 0, 2, 1], "strides": [2, 1]}),
    ((1, 6, 11, 10), (9, 2, 3, 2), {"group": 3, "dilations": [2, 1], "pads": [2, 1, 0, 1]}),
    ((2, 8, 7, 9), (8, 1, 3, 3), {"group": 8, "pads": [1, 1, 1, 1], "strides": [2, 2]}),  # depthwise
    ((1, 5, 6, 6), (7, 5, 1, 1), {}),
    ((1, 4, 17), (5, 4, 3), {"pads": [2, 1], "dilations": [2]}),  # 1-D
    ((2, 4, 40), (5, 4, 3), {"pads": [1, 2]}),  # 1-D on the padded-width grid
    ((1, 3, 5, 6, 4), (4, 3, 2, 3, 2), {"pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 1]}),  # 3-D
    ((1, 40, 5, 5), (24, 40, 3, 3), {"auto_pad": "SAME_UPPER"}),
    ((1, 7, 17, 16), (7, 1, 5, 5), {"group": 7, "strides": [2, 2], "dilations": [2, 2], "pads": [3, 3, 3, 3]}),
    ((2, 6, 9, 11), (13, 6, 1, 1), {"strides": [2, 2]}),  # 1x1 strided: im2col, not in place
    # strided im2col over 400 positions: column blocks that start inside an output row
    ((1, 4, 40, 40), (8, 4, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 4, 41), (5, 4, 3), {"pads": [1, 1], "strides": [2]}),  # 1-D strided
    ((1, 3, 23, 20), (6, 3, 2, 2), {"strides": [3, 2], "pads": [0, 1, 1, 0]}),  # uneven strides
    ((1, 5, 4, 4), (6, 5, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),  # strided 3x3 on a 4x4 plane
]


def _conv_ids():
    return [f"x{c[0]}_w{c[1]}_{'_'.join(c[2])}" for c in CONV_CASES]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("constant_w", [True, False], ids=["constant_w", "input_w"])
@pytest.mark.parametrize(
    "types",
    [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8), (np.int8, np.uint8)],
    ids=["u8s8", "s8s8", "u8u8", "s8u8"],
)
@pytest.mark.parametrize("case", range(len(CONV_CASES)), ids=_conv_ids())
def test_qlinear_conv(case, types, constant_w, policy):
    x_shape, w_shape, attrs = CONV_CASES[case]
    x_type, w_type = types
    m = w_shape[0]
    per_channel = len(x_shape) == 4  # the reference expands per-channel scales for 2-D only
    k = int(np.prod(w_shape[1:]))
    inputs = {
        "x": _bytes(x_shape, x_type),
        "x_scale": np.array(0.02, dtype=np.float32),
        "x_zero_point": _zero_point(x_type, case),
        "w": _bytes(w_shape, w_type),
        "w_scale": (RNG.uniform(0.002, 0.02, size=m).astype(np.float32) if per_channel else np.array(0.01, np.float32)),
        "w_zero_point": (_bytes((m,), w_type) if per_channel else _zero_point(w_type, case + 1)),
        "y_scale": None,  # below, from the data
        "y_zero_point": _zero_point(np.uint8 if case % 2 else np.int8, case),
        "B": RNG.integers(-20000, 20000, size=m).astype(np.int32),
    }
    inputs["y_scale"] = _y_scale(
        inputs["x"],
        inputs["x_zero_point"],
        inputs["w"],
        inputs["w_zero_point"],
        k,
        0.02 * float(np.mean(inputs["w_scale"])),
    )
    constants = {"w", "w_scale", "w_zero_point", "B", "x_scale", "x_zero_point", "y_scale", "y_zero_point"}
    if not constant_w:
        constants -= {"w", "w_zero_point"}
    session = _check("QLinearConv", inputs, constants, attrs, POLICIES[policy])
    _expect_weights_absorbed(session, inputs["w"], attrs, constant_w)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("constant_w", [True, False], ids=["constant_w", "input_w"])
@pytest.mark.parametrize(
    "types",
    [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8), (np.int8, np.uint8)],
    ids=["u8s8", "s8s8", "u8u8", "s8u8"],
)
@pytest.mark.parametrize("case", range(len(CONV_CASES)), ids=_conv_ids())
def test_conv_integer(case, types, constant_w, policy):
    x_shape, w_shape, attrs = CONV_CASES[case]
    x_type, w_type = types
    per_channel = len(x_shape) == 4  # the reference expands per-channel zero points for 2-D only
    inputs = {
        "x": _bytes(x_shape, x_type),
        "w": _bytes(w_shape, w_type),
        "x_zero_point": _zero_point(x_type, case + 2),
        "w_zero_point": _bytes((w_shape[0],), w_type) if per_channel else _zero_point(w_type, case),
    }
    constants = {"x_zero_point", "w", "w_zero_point"} if constant_w else {"x_zero_point"}
    session = _check("ConvInteger", inputs, constants, attrs, POLICIES[policy])
    _expect_weights_absorbed(session, inputs["w"], attrs, constant_w)


@pytest.mark.parametrize("op", ["ConvInteger", "QLinearConv"])
def test_constant_weights_with_a_zero_point_fed_at_run_time_are_kept(op):
    """W constant, its zero point a graph input: the packed W serves only runs whose zero
    point is the one packed (never, here), so W stays and every run packs it."""
    x_shape, w_shape, attrs = CONV_CASES[0]
    m = w_shape[0]
    inputs = {"x": _bytes(x_shape, np.uint8), "w": _bytes(w_shape, np.int8)}
    if op == "ConvInteger":
        inputs.update({"x_zero_point": np.array(128, np.uint8), "w_zero_point": _bytes((m,), np.int8)})
    else:
        inputs = {
            "x": inputs["x"],
            "x_scale": np.array(0.02, np.float32),
            "x_zero_point": np.array(128, np.uint8),
            "w": inputs["w"],
            "w_scale": RNG.uniform(0.002, 0.02, size=m).astype(np.float32),
            "w_zero_point": _bytes((m,), np.int8),
            "y_scale": np.array(0.5, np.float32),
            "y_zero_point": np.array(120, np.uint8),
        }
    constants = set(inputs) - {"x", "w_zero_point"}
    session = _check(op, inputs, constants, attrs, 1)
    _expect_weights_absorbed(session, inputs["w"], attrs, absorbed=False)


# (A shape, B shape): odd sizes, K = 1, batches and broadcasting.
MATMUL_CASES = [
    ((5, 1), (1, 7)),
    ((13, 33), (33, 17)),
    ((3, 7, 37), (37, 19)),
    ((2, 3, 5, 64), (3, 64, 65)),
    ((2, 1, 4, 9), (3, 9, 31)),
    ((97, 300), (300, 40)),
    ((11,), (11, 6)),
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("constant_b", [True, False], ids=["constant_b", "input_b"])
@pytest.mark.parametrize("per_column", [True, False], ids=["per_column", "per_tensor"])
@pytest.mark.parametrize(
    "types",
    [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8), (np.int8, np.uint8)],
    ids=["u8s8", "s8s8", "u8u8", "s8u8"],
)
@pytest.mark.parametrize("case", range(len(MATMUL_CASES)), ids=[f"{a}x{b}" for a, b in MATMUL_CASES])
def test_matmul_integer(case, types, per_column, constant_b, policy):
    a_shape, b_shape = MATMUL_CASES[case]
    a_type, b_type = types
    n = b_shape[-1]
    inputs = {
        "a": _bytes(a_shape, a_type),
        "b": _bytes(b_shape, b_type),
        "a_zero_point": _zero_point(a_type, case),
        "b_zero_point": _bytes((n,), b_type) if per_column else _zero_point(b_type, case + 1),
    }
    constants = {"a_zero_point", "b", "b_zero_point"} if constant_b else {"a_zero_point"}
    _check("MatMulInteger", inputs, constants, {}, POLICIES[policy])


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("constant_b", [True, False], ids=["constant_b", "input_b"])
@pytest.mark.parametrize("per_column", [True, False], ids=["per_column", "per_tensor"])
@pytest.mark.parametrize(
    "types",
    [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8), (np.int8, np.uint8)],
    ids=["u8s8", "s8s8", "u8u8", "s8u8"],
)
@pytest.mark.parametrize("case", range(len(MATMUL_CASES)), ids=[f"{a}x{b}" for a, b in MATMUL_CASES])
def test_qlinear_matmul(case, types, per_column, constant_b, policy):
    a_shape, b_shape = MATMUL_CASES[case]
    a_type, b_type = types
    n, k = b_shape[-1], b_shape[-2]
    inputs = {
        "a": _bytes(a_shape, a_type),
        "a_scale": np.array(0.03, dtype=np.float32),
        "a_zero_point": _zero_point(a_type, case),
        "b": _bytes(b_shape, b_type),
        "b_scale": RNG.uniform(0.002, 0.02, size=n).astype(np.float32) if per_column else np.array(0.01, np.float32),
        "b_zero_point": _bytes((n,), b_type) if per_column else _zero_point(b_type, case + 1),
        "y_scale": None,  # below, from the data
        "y_zero_point": _zero_point(np.int8 if case % 2 else np.uint8, case),
    }
    inputs["y_scale"] = _y_scale(
        inputs["a"],
        inputs["a_zero_point"],
        inputs["b"],
        inputs["b_zero_point"],
        k,
        0.03 * float(np.mean(inputs["b_scale"])),
    )
    constants = {"a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"}
    if not constant_b:
        constants -= {"b", "b_zero_point"}
    _check("QLinearMatMul", inputs, constants, {}, POLICIES[policy])
