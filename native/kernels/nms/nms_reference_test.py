"""NonMaxSuppression against onnx.reference: random boxes with ties, zero-area boxes, both
box encodings, max_output_boxes_per_class 0 / small / above the box count, selections
that run past the first ordered chunk of candidates, thresholds at
edge values and many classes, each under a serial and a two-thread CpuExecutionPolicy
(the larger cases are above the kernel's serial threshold, so two threads run the
parallel path over (batch, class) pairs)."""

import zlib

import numpy as np
import onnx.reference
import onnx_light
import pytest
from onnx import TensorProto, helper


def _model(center_point_box: int, with_score_threshold: bool) -> onnx.ModelProto:
    inputs = ["boxes", "scores", "max_output", "iou_threshold"] + (["score_threshold"] if with_score_threshold else [])
    node = helper.make_node("NonMaxSuppression", inputs, ["selected"], center_point_box=center_point_box)
    graph = helper.make_graph(
        [node],
        "nms",
        [
            helper.make_tensor_value_info("boxes", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("max_output", TensorProto.INT64, [1]),
            helper.make_tensor_value_info("iou_threshold", TensorProto.FLOAT, [1]),
        ]
        + ([helper.make_tensor_value_info("score_threshold", TensorProto.FLOAT, [1])] if with_score_threshold else []),
        [helper.make_tensor_value_info("selected", TensorProto.INT64, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def _boxes(rng: np.random.Generator, batches: int, n: int, center: bool) -> np.ndarray:
    # Coordinates on a coarse grid so that many pairs overlap, some exactly; a few boxes
    # have zero width or height, and corner boxes come with either diagonal.
    a = rng.integers(0, 40, size=(batches, n, 2)).astype(np.float32) / 2
    size = rng.integers(0, 12, size=(batches, n, 2)).astype(np.float32) / 2
    if center:
        return np.concatenate([a + size / 2, size], axis=2)
    boxes = np.concatenate([a, a + size], axis=2)
    flip = rng.random((batches, n)) < 0.3
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    return boxes


def _scores(rng: np.random.Generator, batches: int, classes: int, n: int) -> np.ndarray:
    # Scores from a few levels: many ties, broken by the lower box index.
    return (rng.integers(0, 8, size=(batches, classes, n)) / 8).astype(np.float32)


CASES = {
    # name: batches, classes, boxes, max_output, iou_threshold, score_threshold (None: input absent)
    "small": (1, 1, 10, 10, 0.5, 0.0),
    "ties_many_classes": (2, 40, 60, 20, 0.4, 0.25),
    "detector_sized": (1, 3, 2000, 200, 0.5, 0.05),
    "batch4": (4, 3, 500, 1000, 0.6, None),
    "max_output_zero": (2, 3, 50, 0, 0.5, 0.0),
    "max_output_one": (2, 3, 50, 1, 0.5, 0.0),
    "iou_zero_keeps_only_disjoint": (1, 2, 200, 500, 0.0, 0.0),
    "iou_one_keeps_all": (1, 2, 200, 500, 1.0, None),
    # The top score level is 7/8: a threshold equal to it keeps nothing (strictly above).
    "score_threshold_at_top_level": (1, 3, 100, 100, 0.5, 0.875),
    "score_threshold_below_top_level": (1, 3, 100, 100, 0.5, 0.75),
    "score_threshold_above_all": (1, 3, 100, 100, 0.5, 1.0),
    "negative_score_threshold": (1, 3, 100, 100, 0.5, -1.0),
    # Candidates are ordered chunk by chunk (2 x max_output, at least 64): with iou 0 most
    # candidates are suppressed, and the selection runs past the first chunk (the last kept
    # box at rank 73-98 of chunks of 72 in 4 of the 8 pairs; 92 and 96 of chunks of 80 in
    # one pair per encoding).
    "selection_past_the_first_chunks": (2, 2, 500, 36, 0.0, 0.0),
    "selection_past_the_first_chunks_no_threshold": (1, 2, 600, 40, 0.0, None),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("case", CASES)
def test_matches_onnx_reference(case: str, center: int, threads: int) -> None:
    batches, classes, n, max_output, iou, score = CASES[case]
    rng = np.random.default_rng(zlib.crc32(case.encode()) + center)
    feeds = {
        "boxes": _boxes(rng, batches, n, bool(center)),
        "scores": _scores(rng, batches, classes, n),
        "max_output": np.array([max_output], np.int64),
        "iou_threshold": np.array([iou], np.float32),
    }
    if score is not None:
        feeds["score_threshold"] = np.array([score], np.float32)
    model = _model(center, score is not None)
    (want,) = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    (got,) = session.run(None, feeds)
    got = np.asarray(got)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.reshape(-1, 3), np.asarray(want).reshape(-1, 3))
    if max_output == 0 or (score is not None and score >= 0.875):
        assert got.size == 0
    else:
        assert got.shape[0] > 0
