"""Resize against onnx.reference on NCHW images: the 2-D row paths (only H and W change:
nearest, linear and cubic under the common coordinate modes, integer and fractional
factors, up and down, tf_crop_and_resize extrapolation, antialias) and the general path
(a leading axis resized too), float and uint8, under a serial and a two-thread
CpuExecutionPolicy (the images are above the kernel's serial threshold).

Tolerances: the reference computes the interpolation in float64 and rounds once to the
output type; onnx-light does too, except float linear (two taps per axis), which sums in
float with float weights: a 2x2 blend of values of order 1 is then within a few float ulps
of the float64 result, as the other modes are by summing the taps in another order
(rtol 1e-6, atol 1e-6 for values of order 1). uint8 nearest is a copy: exact.
"""

import numpy as np
import onnx.reference
import onnx_light
import pytest
from onnx import TensorProto, helper


def _model(elem: int, with_roi: bool, **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("Resize", ["x", "roi" if with_roi else "", "scales"], ["y"], **attrs)
    inputs = [helper.make_tensor_value_info("x", elem, None)]
    if with_roi:
        inputs.append(helper.make_tensor_value_info("roi", TensorProto.FLOAT, None))
    inputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT, None))
    graph = helper.make_graph([node], "resize", inputs, [helper.make_tensor_value_info("y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


CASES = {
    # name: scales (N, C, H, W), attributes
    "nearest_2x": ([1, 1, 2, 2], {"mode": "nearest"}),
    "nearest_2x_asymmetric_floor": (
        [1, 1, 2, 2],
        {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
    ),
    "nearest_3x_round_prefer_ceil": ([1, 1, 3, 3], {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}),
    "nearest_down_0_6": ([1, 1, 0.6, 0.6], {"mode": "nearest"}),
    "linear_2x_half_pixel": ([1, 1, 2, 2], {"mode": "linear"}),
    "linear_2x_pytorch_half_pixel": (
        [1, 1, 2, 2],
        {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
    ),
    "linear_2x_align_corners": ([1, 1, 2, 2], {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
    "linear_2x_asymmetric": ([1, 1, 2, 2], {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}),
    "linear_1_7x_1_3x": ([1, 1, 1.7, 1.3], {"mode": "linear"}),
    "linear_down_antialias": ([1, 1, 0.45, 0.6], {"mode": "linear", "antialias": 1}),
    "cubic_2x": ([1, 1, 2, 2], {"mode": "cubic"}),
    "cubic_2x_exclude_outside": ([1, 1, 2, 2], {"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5}),
    "linear_width_only": ([1, 1, 1, 2], {"mode": "linear"}),
    "linear_channels_too_general_path": ([1, 2, 2, 2], {"mode": "linear"}),
    "nearest_channels_too_general_path": ([1, 2, 2, 2], {"mode": "nearest"}),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES)
def test_float_matches_onnx_reference(case: str, threads: int) -> None:
    scales, attrs = CASES[case]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 17, 23)).astype(np.float32)
    model = _model(TensorProto.FLOAT, False, **attrs)
    feeds = {"x": x, "scales": np.array(scales, np.float32)}
    (want,) = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    (got,) = session.run(None, feeds)
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_crop_and_resize_extrapolates(mode: str, threads: int) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 4, 12, 10)).astype(np.float32)
    model = _model(
        TensorProto.FLOAT,
        True,
        mode=mode,
        coordinate_transformation_mode="tf_crop_and_resize",
        extrapolation_value=-7.5,
    )
    # The crop reaches outside the image on every side of H and W; no sample lands exactly
    # on the border (there float32 roi rounding decides inside or outside).
    feeds = {
        "x": x,
        "roi": np.array([0, 0, -0.23, -0.31, 1, 1, 1.27, 1.13], np.float32),
        "scales": np.array([1, 1, 2, 1.5], np.float32),
    }
    (want,) = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    (got,) = session.run(None, feeds)
    got = np.asarray(got)
    assert np.count_nonzero(got == -7.5) > 0
    # The crop coordinate (roi * (in - 1) + ...) is a float32 computation in the reference and
    # a double one here: up to ~1 float32 ulp of a coordinate near 10 (1e-6 pixel), times a
    # gradient of order 1 per pixel: atol 1e-5.
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 0.5, 1.5]])
def test_uint8_nearest_is_an_exact_copy(scales: list[float], threads: int) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, (1, 8, 30, 26)).astype(np.uint8)
    model = _model(TensorProto.UINT8, False, mode="nearest")
    feeds = {"x": x, "scales": np.array(scales, np.float32)}
    (want,) = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    (got,) = session.run(None, feeds)
    np.testing.assert_array_equal(np.asarray(got), want)
