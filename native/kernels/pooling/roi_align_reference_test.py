"""RoiAlign against onnx.reference: random maps and rois (inside, straddling and outside
the map, degenerate), avg and max, half_pixel and output_half_pixel, adaptive and fixed
sampling ratios, float and double, under a serial and a two-thread CpuExecutionPolicy.

Tolerances: the kernel computes sample positions in double and bilinear weights and sums in
the input type (float for float, as ORT does); the reference computes in float64 for both,
so float outputs agree to a few float ulps of the summed magnitudes (rtol 1e-5, atol 1e-5
for values of order 1) and double outputs to 1e-12.
"""

import numpy as np
import onnx.reference
import onnx_light
import pytest
from onnx import TensorProto, helper

DTYPES = {"float": (np.float32, TensorProto.FLOAT, 1e-5), "double": (np.float64, TensorProto.DOUBLE, 1e-12)}


def _model(elem: int, opset: int, **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "roi_align",
        [
            helper.make_tensor_value_info("x", elem, None),
            helper.make_tensor_value_info("rois", elem, None),
            helper.make_tensor_value_info("batch", TensorProto.INT64, None),
        ],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _rois(rng: np.random.Generator, count: int, h: int, w: int, scale: float) -> np.ndarray:
    # In input coordinates (before spatial_scale): mostly inside, some straddling the
    # border or wholly outside, and a few of zero size.
    x1 = rng.uniform(-0.2 * w, 1.0 * w, count) / scale
    y1 = rng.uniform(-0.2 * h, 1.0 * h, count) / scale
    x2 = x1 + rng.uniform(0, 0.8 * w, count) / scale
    y2 = y1 + rng.uniform(0, 0.8 * h, count) / scale
    x2[::7] = x1[::7]
    return np.stack([x1, y1, x2, y2], axis=1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sampling_ratio", [0, 2])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_matches_onnx_reference(mode: str, transform: str, sampling_ratio: int, dtype: str, threads: int) -> None:
    np_type, elem, tol = DTYPES[dtype]
    rng = np.random.default_rng(17)
    n, c, h, w, count, scale = 2, 24, 20, 18, 21, 0.5
    x = rng.standard_normal((n, c, h, w)).astype(np_type)
    rois = _rois(rng, count, h, w, scale).astype(np_type)
    batch = rng.integers(0, n, count).astype(np.int64)
    model = _model(
        elem,
        16,
        mode=mode,
        coordinate_transformation_mode=transform,
        output_height=5,
        output_width=4,
        sampling_ratio=sampling_ratio,
        spatial_scale=scale,
    )
    feeds = {"x": x, "rois": rois, "batch": batch}
    (want,) = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    (got,) = session.run(None, feeds)
    got = np.asarray(got)
    assert got.dtype == np_type and got.shape == (count, c, 5, 4)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert np.count_nonzero(got) > got.size // 2


def test_opset10_defaults_to_output_half_pixel() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    rois = np.array([[0.5, 1.0, 6.0, 7.5], [2.0, 2.0, 3.0, 3.0]], np.float32)
    feeds = {"x": x, "rois": rois, "batch": np.zeros(2, np.int64)}
    (got,) = onnx_light.InferenceSession(_model(TensorProto.FLOAT, 10, output_height=3, output_width=3)).run(
        None, feeds
    )
    explicit = _model(
        TensorProto.FLOAT, 16, output_height=3, output_width=3, coordinate_transformation_mode="output_half_pixel"
    )
    (want,) = onnx.reference.ReferenceEvaluator(explicit).run(None, feeds)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
