"""TopK through the Python package under a serial and a parallel CPU policy against
onnx.reference: every axis, largest and smallest, k from 1 to the whole axis (both
selection paths: the bounded heap for small k, nth_element above), ties (lower index
first) and NaN (above every number, as numpy sorts it last), sorted=1 and sorted=0 (the
same k elements; ours come in index order, which sorted=0 leaves open)."""

import numpy as np
import onnx.reference
import onnx_light
import pytest
from onnx import TensorProto, helper, numpy_helper

THREADS = [1, 4]


def topk_model(shape, k, axis, largest, sorted_, dtype=TensorProto.FLOAT):
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=largest, sorted=sorted_)
    graph = helper.make_graph(
        [node],
        "topk",
        [helper.make_tensor_value_info("x", dtype, shape)],
        [
            helper.make_tensor_value_info("values", dtype, None),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None),
        ],
        [numpy_helper.from_array(np.array([k], dtype=np.int64), "k")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=9)


def check(x, k, axis, largest, sorted_, threads):
    dtype = helper.np_dtype_to_tensor_dtype(x.dtype)
    model = topk_model(list(x.shape), k, axis, largest, sorted_, dtype)
    session = onnx_light.InferenceSession(
        model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
    )
    values, indices = session.run(None, {"x": x})
    want_values, want_indices = onnx.reference.ReferenceEvaluator(model).run(None, {"x": x})
    if not sorted_:  # the same elements, in index order
        order = np.argsort(want_indices, axis=axis, kind="stable")
        want_indices = np.take_along_axis(want_indices, order, axis=axis)
        want_values = np.take_along_axis(want_values, order, axis=axis)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(values, want_values)  # NaN compares equal to NaN here


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("k", [1, 3, 20, 40])
def test_random_with_ties_matches_reference(k, axis, largest, sorted_, threads):
    rng = np.random.default_rng(k * 7 + axis)
    x = rng.integers(-6, 6, size=(40, 45, 50)).astype(np.float32)  # many ties
    check(x, k, axis, largest, sorted_, threads)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("k", [2, 5, 40])
def test_nan_ranks_above_numbers(k, largest, threads):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 40)).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    check(x, k, -1, largest, 1, threads)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float64, np.float16])
def test_element_types(dtype, threads):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 50, size=(16, 200)).astype(dtype)
    for k in (5, 200):
        check(x, k, 1, 1, 1, threads)


@pytest.mark.parametrize("threads", THREADS)
def test_large_rows_like_the_benchmark(threads):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((512, 1000)).astype(np.float32)
    check(x, 5, -1, 1, 1, threads)
