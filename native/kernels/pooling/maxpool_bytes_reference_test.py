"""int8/uint8 MaxPool against onnx.reference, exactly (a max of integers has one answer).

2-D pools without Indices take the row path (pool_rows.h): the geometries cover strides 1
and 2 (the row kernels' specialised column strides) and 3, pads (whose identity is the
type's minimum: all-minimum inputs and windows reaching into the padding), ceil_mode,
dilations, and odd widths whose interior column counts leave every vector tail (16 and
32 bytes) non-empty; plane counts are odd. 1-D and 3-D pools and MaxPool with Indices
take the generic path and are checked the same way. Each case runs under a serial and a
two-thread CpuExecutionPolicy.

The oracle is onnx.reference's MaxPool on the same values as float64 (every byte value is
exact there, and a max is a selection, so the result is exact): its integer path pads with
NaN and raises at stride 1 ("cannot convert float NaN to integer", onnx 1.x).
"""

from dataclasses import dataclass

import numpy as np
import onnx
import onnx.reference
import onnx_light
import pytest
from onnx import TensorProto, helper

DTYPES = {"int8": (np.int8, TensorProto.INT8), "uint8": (np.uint8, TensorProto.UINT8)}


@dataclass(frozen=True)
class Case:
    name: str
    shape: tuple[int, ...]
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]
    dilations: tuple[int, ...]
    ceil_mode: int = 0


CASES = [
    Case("resnet_stem", (1, 3, 17, 35), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    Case("stride1_pad", (2, 3, 9, 37), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    Case("stride1_wide", (1, 5, 4, 83), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1)),
    Case("stride2_no_pad", (1, 3, 12, 70), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1)),
    Case("ceil_asymmetric", (1, 3, 11, 41), (3, 2), (2, 1), (2, 1, 0, 1), (1, 1), 1),
    Case("dilated_ceil", (1, 3, 10, 47), (2, 3), (1, 2), (1, 2, 1, 2), (2, 2), 1),
    Case("stride3", (1, 3, 8, 101), (3, 3), (1, 3), (2, 2, 2, 2), (1, 1)),
    Case("window_wider_than_input", (1, 3, 4, 4), (5, 5), (3, 3), (2, 2, 2, 2), (1, 1)),
    Case("one_d", (2, 3, 53), (3,), (2,), (1, 1), (1,)),
    Case("three_d", (1, 3, 5, 6, 19), (2, 3, 3), (1, 2, 1), (0, 1, 1, 1, 1, 1), (2, 1, 1), 1),
]


def _model(elem: int, case: Case, indices: bool) -> onnx.ModelProto:
    outputs = ["y", "i"] if indices else ["y"]
    node = helper.make_node(
        "MaxPool",
        ["x"],
        outputs,
        kernel_shape=list(case.kernel),
        strides=list(case.strides),
        pads=list(case.pads),
        dilations=list(case.dilations),
        ceil_mode=case.ceil_mode,
    )
    value_infos = [helper.make_tensor_value_info("y", elem, None)]
    if indices:
        value_infos.append(helper.make_tensor_value_info("i", TensorProto.INT64, None))
    graph = helper.make_graph([node], "maxpool", [helper.make_tensor_value_info("x", elem, None)], value_infos)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _input(np_type: type, shape: tuple[int, ...], seed: int) -> np.ndarray:
    # Few distinct values (ties) including both extremes, and a run of minimum values so
    # that whole windows, border ones among them, hold only the padding's identity.
    info = np.iinfo(np_type)
    rng = np.random.default_rng(seed)
    choices = np.array([info.min, info.min, info.min + 1, -1 if info.min < 0 else 1, 0, 7, info.max - 1, info.max])
    x = rng.choice(choices, size=shape)
    x.reshape(-1)[: x.size // 5] = info.min
    return x.astype(np_type)


def _reference(case: Case, x: np.ndarray, indices: bool) -> list[np.ndarray]:
    model = _model(TensorProto.DOUBLE, case, indices)
    return onnx.reference.ReferenceEvaluator(model).run(None, {"x": x.astype(np.float64)})


def _run(model: onnx.ModelProto, x: np.ndarray, threads: int) -> list[np.ndarray]:
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    return [np.asarray(v) for v in session.run(None, {"x": x})]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matches_onnx_reference(case: Case, dtype: str, threads: int) -> None:
    np_type, elem = DTYPES[dtype]
    x = _input(np_type, case.shape, seed=len(case.name))
    model = _model(elem, case, indices=False)
    (want,) = _reference(case, x, indices=False)
    (got,) = _run(model, x, threads)
    assert got.dtype == np_type and got.shape == want.shape
    np.testing.assert_array_equal(got, want.astype(np_type))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES[:6], ids=lambda c: c.name)
def test_with_indices_matches_onnx_reference(case: Case, dtype: str) -> None:
    np_type, elem = DTYPES[dtype]
    x = _input(np_type, case.shape, seed=7 + len(case.name))
    model = _model(elem, case, indices=True)
    want_y, _ = _reference(case, x, indices=True)
    got_y, got_i = _run(model, x, 1)
    np.testing.assert_array_equal(got_y, want_y.astype(np_type))
    # The reference's Indices for ties differ in convention; every index must point at an
    # element holding the output's value.
    assert got_i.dtype == np.int64 and got_i.shape == got_y.shape
    np.testing.assert_array_equal(x.reshape(-1)[got_i], got_y)


def test_all_minimum_input_pools_to_minimum() -> None:
    # The padding must not contribute 0: with every input at the minimum, every output is it.
    for np_type, elem in DTYPES.values():
        x = np.full((1, 3, 9, 41), np.iinfo(np_type).min, np_type)
        (got,) = _run(_model(elem, CASES[0], indices=False), x, 1)
        assert got.shape == (1, 3, 5, 21)
        assert np.all(got == np.iinfo(np_type).min)
