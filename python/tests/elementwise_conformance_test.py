"""The elementwise families against ONNX: the onnx package's node conformance cases of
their ops, and onnx.reference on random inputs for every op, each under a serial and a
two-thread CpuExecutionPolicy.

The conformance cases are small, so the two-thread runs take the serial path below the
kernels' thresholds; the forced-parallel paths are covered by the C++ tests, which check
bit-identical outputs for 1, 2, 4 and 8 participants.
"""

import warnings

import numpy as np
import onnx
import onnx.backend.test.case.node as node_cases
import onnx.reference
import onnx_light
import pytest
from onnx import TensorProto, helper

UNARY = """Abs Neg Exp Log Sqrt Reciprocal Floor Ceil Round Sign Erf Sin Cos Tan Asin Acos Atan
Sinh Cosh Asinh Acosh Atanh Sigmoid HardSigmoid Tanh Relu LeakyRelu Elu Selu Celu Gelu
HardSwish Softplus Softsign Mish Swish ThresholdedRelu Shrink Clip IsNaN IsInf Not
BitwiseNot""".split()
BINARY = """Add Sub Mul Div Pow Mod Min Max Sum Mean PRelu And Or Xor Equal Less Greater
LessOrEqual GreaterOrEqual BitShift BitwiseAnd BitwiseOr BitwiseXor Where""".split()
OPS = set(UNARY + BINARY)

# Cases of these ops that test something other than the op itself.
KNOWN_FAILURES = {}

POLICIES = {"serial": 1, "two_threads": 2}


def _policy(threads):
    return onnx_light.CpuExecutionPolicy(num_threads=threads)


def _cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    return [c for c in cases if {n.op_type for n in c.model.graph.node} <= OPS and c.model.graph.node]


CASES = _cases()


def _compare(got, want, rtol, atol, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_every_op_has_conformance_cases():
    covered = {n.op_type for c in CASES for n in c.model.graph.node}
    # Ops without a node case in onnx 1.23 are covered by the random tests below.
    assert len(covered) >= 50, sorted(OPS - covered)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_conformance(case, policy):
    if case.name in KNOWN_FAILURES:
        pytest.xfail(KNOWN_FAILURES[case.name])
    session = onnx_light.InferenceSession(case.model, cpu_execution=_policy(POLICIES[policy]))
    names = [i.name for i in case.model.graph.input]
    for inputs, outputs in case.data_sets:
        got = session.run(None, dict(zip(names, inputs)))
        for g, w, o in zip(got, outputs, case.model.graph.output):
            _compare(np.asarray(g), np.asarray(w), case.rtol, case.atol, f"{case.name}:{o.name}")


# ----------------------------------------------------------------- random vs onnx.reference

RNG = np.random.default_rng(1234)


def _model(op, inputs, out_type, attrs, opset):
    in_infos = [
        helper.make_tensor_value_info(f"x{i}", helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for i, a in enumerate(inputs)
    ]
    out_info = helper.make_tensor_value_info("y", out_type, None)
    node = helper.make_node(op, [f"x{i}" for i in range(len(inputs))], ["y"], **attrs)
    graph = helper.make_graph([node], op, in_infos, [out_info])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run_both(op, inputs, attrs=None, opset=22, out_type=None, rtol=1e-5, atol=1e-6, numpy_reference=None):
    attrs = attrs or {}
    if out_type is None:
        out_type = helper.np_dtype_to_tensor_dtype(inputs[-1].dtype)
    model = _model(op, inputs, out_type, attrs, opset)
    feeds = {f"x{i}": a for i, a in enumerate(inputs)}
    if numpy_reference is not None:
        want = numpy_reference(*inputs).astype(inputs[-1].dtype)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (want,) = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    for threads in POLICIES.values():
        (got,) = onnx_light.InferenceSession(model, cpu_execution=_policy(threads)).run(None, feeds)
        _compare(np.asarray(got), np.asarray(want), rtol, atol, f"{op} {attrs} threads={threads}")


def _floats(shape, low=-3.0, high=3.0, dtype=np.float32):
    return RNG.uniform(low, high, size=shape).astype(dtype)


UNARY_DOMAINS = {
    "Log": (0.01, 10),
    "Sqrt": (0, 10),
    "Reciprocal": (0.5, 4),
    "Asin": (-1, 1),
    "Acos": (-1, 1),
    "Acosh": (1, 10),
    "Atanh": (-0.99, 0.99),
    "Tan": (-1.5, 1.5),
    "Exp": (-20, 20),
}
FLOAT_UNARY = [op for op in UNARY if op not in ("Not", "BitwiseNot", "IsNaN", "IsInf", "Clip")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_unary_random(op, dtype):
    low, high = UNARY_DOMAINS.get(op, (-4, 4))
    # Celu takes double from opset 28, which onnx.reference 1.23 does not run yet.
    opset = {"Celu": 12}.get(op, 24)
    if op == "Celu" and dtype == np.float64:
        dtype = np.float32
    _run_both(op, [_floats((3, 5, 7), low, high, dtype)], opset=opset)


def test_unary_attributes_and_predicates():
    x = _floats((64,), -3, 3)
    x[::7] = np.inf
    x[::11] = -np.inf
    x[::13] = np.nan
    _run_both("IsNaN", [x], out_type=TensorProto.BOOL)
    _run_both("IsInf", [x], {"detect_negative": 0}, out_type=TensorProto.BOOL)
    _run_both("Gelu", [_floats((50,))], {"approximate": "tanh"})
    _run_both("LeakyRelu", [_floats((50,))], {"alpha": 0.3})
    _run_both("Shrink", [RNG.integers(-9, 9, 40).astype(np.int32)], {"lambd": 2.0, "bias": 1.0})
    _run_both("Not", [RNG.random(30) > 0.5])
    _run_both("BitwiseNot", [RNG.integers(0, 255, 30).astype(np.uint8)])
    _run_both("Clip", [_floats((40,)), np.array(-1, np.float32), np.array(1.5, np.float32)])
    _run_both("Clip", [RNG.integers(-50, 50, 40).astype(np.int64), np.array(-3, np.int64), np.array(7, np.int64)])


SHAPE_PAIRS = [((4, 5), (4, 5)), ((2, 3, 4), (4,)), ((3, 1), (1, 6)), ((), (5, 2)), ((2, 1, 3), (4, 1))]
ARITH_TYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint16]


# Sum and Mean are defined for floats only.
BINARY_CASES = [
    (op, dtype)
    for op in ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"]
    for dtype in ARITH_TYPES
    if op not in ("Sum", "Mean") or np.dtype(dtype).kind == "f"
]


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("op,dtype", BINARY_CASES, ids=[f"{o}-{np.dtype(t).name}" for o, t in BINARY_CASES])
def test_binary_random(op, dtype, shapes):
    if np.dtype(dtype).kind == "f":
        a, b = _floats(shapes[0], dtype=dtype), _floats(shapes[1], 0.5, 3, dtype=dtype)
    else:
        a = RNG.integers(-20, 100, shapes[0]).astype(dtype)
        b = RNG.integers(1, 20, shapes[1]).astype(dtype)  # no zero divisors: numpy's own are undefined
    # onnx.reference's variadic ops accumulate into their first input, which fails when that
    # input is smaller than the broadcast result: numpy states them directly.
    variadic = {"Sum": np.add, "Max": np.maximum, "Min": np.minimum, "Mean": lambda x, y: (x + y) / 2}
    _run_both(op, [a, b], numpy_reference=variadic.get(op))


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
def test_comparisons_random(op):
    a = RNG.integers(0, 4, (3, 4)).astype(np.float32)
    b = RNG.integers(0, 4, (4,)).astype(np.float32)
    _run_both(op, [a, b], out_type=TensorProto.BOOL)
    _run_both(op, [a.astype(np.int16), b.astype(np.int16)], out_type=TensorProto.BOOL)


def test_logic_bitwise_mod_pow_where_random():
    p, q = RNG.random((3, 4)) > 0.5, RNG.random((4,)) > 0.5
    for op in ("And", "Or", "Xor"):
        _run_both(op, [p, q], out_type=TensorProto.BOOL)
    i, j = RNG.integers(-100, 100, (5, 6)).astype(np.int32), RNG.integers(-100, 100, (6,)).astype(np.int32)
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        _run_both(op, [i, j])
    j[j == 0] = 3
    _run_both("Mod", [i, j])
    _run_both("Mod", [i, j], {"fmod": 1})
    _run_both("Mod", [_floats((5, 6)), _floats((6,), 0.5, 2)], {"fmod": 1})
    _run_both("Pow", [_floats((5, 6), 0.1, 3), _floats((6,), -2, 2)])
    _run_both("Pow", [_floats((5,), 0.1, 3), RNG.integers(0, 4, (5,)).astype(np.int64)])
    _run_both(
        "BitShift",
        [RNG.integers(0, 255, (8,)).astype(np.uint8), RNG.integers(0, 8, (8,)).astype(np.uint8)],
        {"direction": "LEFT"},
        opset=11,
    )
    _run_both("PRelu", [_floats((2, 3, 4)), _floats((3, 1))])
    _run_both("Where", [RNG.random((3, 1)) > 0.5, _floats((3, 4)), _floats((4,))])
