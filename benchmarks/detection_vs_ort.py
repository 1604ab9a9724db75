"""onnx-light vs ONNX Runtime on detection and selection ops (a benchmark, not a test).

    ./bazelw run //benchmarks:detection_vs_ort -- [--repeats=N] [--threads=1,2] [--json=out.json]

Cases (issue 17), single-node float models:
  nms_2000x3_b1 / _b4:   NonMaxSuppression, 2,000 boxes x 3 classes, batch 1 and 4
                         (max_output_boxes_per_class --nms_max_output, IoU 0.5, score 0.05);
  roialign_avg / _max:   RoiAlign on 1x256x56x56 features, 128 rois, 7x7 output,
                         sampling_ratio 2, half_pixel;
  resize_linear_2x / resize_nearest_2x: Resize 2x of 1x64x112x112 (half_pixel;
                         round_prefer_floor for nearest);
  gather_elements_axis1: GatherElements of 512x1000 along axis 1 with [512, 5] indices (TopK's);
  gather_elements_axis0: GatherElements of 512x1000 along axis 0 with [5, 1000] indices.
Each runtime runs in its own block per case and thread count (warm-up runs, then `repeats`
timed runs), onnx-light first, then ORT. Outputs are compared first (NMS and GatherElements
exactly, RoiAlign and Resize within 1e-4). The JSON holds every raw sample, the medians and
the conditions: CPU, onnx-light build (compilation mode, ISA), ORT version, load average
before and after.
"""

import numpy as np
import onnx
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper

from benchmarks.ort_reference import block_samples, conditions, finish_document, ort_session

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 200, "timed runs per runtime, case and thread count")
flags.DEFINE_integer("warmup", 10, "untimed runs before each block")
flags.DEFINE_list("threads", ["1", "2"], "thread counts")
flags.DEFINE_string("only", "", "run only cases whose name contains this")
flags.DEFINE_string("json", "", "where to write the raw samples")
flags.DEFINE_integer("nms_max_output", 200, "NonMaxSuppression max_output_boxes_per_class")

Case = tuple[onnx.ModelProto, dict[str, np.ndarray], bool]  # model, feeds, exact comparison


def _model(nodes, inputs, initializers=(), opset=16, output=TensorProto.FLOAT) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "detection",
        [helper.make_tensor_value_info(name, elem, shape) for name, elem, shape in inputs],
        [helper.make_tensor_value_info("y", output, None)],
        initializer=list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def nms_case(rng: np.random.Generator, batches: int) -> Case:
    n, classes = 2000, 3
    corner = rng.uniform(0, 600, size=(batches, n, 2)).astype(np.float32)
    size = rng.uniform(8, 120, size=(batches, n, 2)).astype(np.float32)
    boxes = np.concatenate([corner, corner + size], axis=2)  # [y1, x1, y2, x2]
    scores = rng.random((batches, classes, n), dtype=np.float32)
    inits = [
        numpy_helper.from_array(np.array([FLAGS.nms_max_output], np.int64), "max_output"),
        numpy_helper.from_array(np.array([0.5], np.float32), "iou"),
        numpy_helper.from_array(np.array([0.05], np.float32), "score"),
    ]
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_output", "iou", "score"], ["y"])
    model = _model(
        [node],
        [("boxes", TensorProto.FLOAT, list(boxes.shape)), ("scores", TensorProto.FLOAT, list(scores.shape))],
        inits,
        opset=11,
        output=TensorProto.INT64,
    )
    return model, {"boxes": boxes, "scores": scores}, True


def roialign_case(rng: np.random.Generator, mode: str) -> Case:
    x = rng.standard_normal((1, 256, 56, 56), dtype=np.float32)
    corner = rng.uniform(0, 48, size=(128, 2)).astype(np.float32)
    size = rng.uniform(2, 24, size=(128, 2)).astype(np.float32)
    rois = np.concatenate([corner, np.minimum(corner + size, 56)], axis=1)  # [x1, y1, x2, y2]
    batch = np.zeros(128, np.int64)
    node = helper.make_node(
        "RoiAlign",
        ["x", "rois", "batch"],
        ["y"],
        mode=mode,
        output_height=7,
        output_width=7,
        sampling_ratio=2,
        spatial_scale=1.0,
        coordinate_transformation_mode="half_pixel",
    )
    model = _model(
        [node],
        [
            ("x", TensorProto.FLOAT, list(x.shape)),
            ("rois", TensorProto.FLOAT, [128, 4]),
            ("batch", TensorProto.INT64, [128]),
        ],
    )
    return model, {"x": x, "rois": rois, "batch": batch}, False


def resize_case(rng: np.random.Generator, mode: str) -> Case:
    x = rng.standard_normal((1, 64, 112, 112), dtype=np.float32)
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode)
    return _model([node], [("x", TensorProto.FLOAT, list(x.shape))], [scales], opset=19), {"x": x}, False


def gather_elements_case(rng: np.random.Generator, axis: int) -> Case:
    x = rng.standard_normal((512, 1000), dtype=np.float32)
    shape = (512, 5) if axis == 1 else (5, 1000)
    idx = rng.integers(0, x.shape[axis], size=shape).astype(np.int64)
    node = helper.make_node("GatherElements", ["x", "idx"], ["y"], axis=axis)
    model = _model([node], [("x", TensorProto.FLOAT, [512, 1000]), ("idx", TensorProto.INT64, list(shape))], opset=13)
    return model, {"x": x, "idx": idx}, True


CASES = {
    "nms_2000x3_b1": lambda rng: nms_case(rng, 1),
    "nms_2000x3_b4": lambda rng: nms_case(rng, 4),
    "roialign_avg": lambda rng: roialign_case(rng, "avg"),
    "roialign_max": lambda rng: roialign_case(rng, "max"),
    "resize_linear_2x": lambda rng: resize_case(rng, "linear"),
    "resize_nearest_2x": lambda rng: resize_case(rng, "nearest"),
    "gather_elements_axis1": lambda rng: gather_elements_case(rng, 1),
    "gather_elements_axis0": lambda rng: gather_elements_case(rng, 0),
}


def main(argv: list[str]) -> None:
    del argv
    doc = {
        "benchmark": "detection_vs_ort",
        "conditions": conditions(repeats=FLAGS.repeats, warmup=FLAGS.warmup, nms_max_output=FLAGS.nms_max_output),
    }
    results = []
    print(f"{'case':<22} {'thr':>3} {'onnx-light ms':>14} {'ORT ms':>10} {'ratio':>7}")
    for name, build in CASES.items():
        if FLAGS.only and FLAGS.only not in name:
            continue
        model, feeds, exact = build(np.random.default_rng(0))
        for threads in map(int, FLAGS.threads):
            ours = onnx_light.InferenceSession(
                model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
            )
            theirs = ort_session(model, threads)
            got, want = np.asarray(ours.run(None, feeds)[0]), np.asarray(theirs.run(None, feeds)[0])
            if exact:
                np.testing.assert_array_equal(got, want, err_msg=name)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
            samples = {"onnx_light": block_samples(ours, feeds, FLAGS.warmup, FLAGS.repeats)}
            samples["ort"] = block_samples(theirs, feeds, FLAGS.warmup, FLAGS.repeats)
            ol, rt = float(np.median(samples["onnx_light"])), float(np.median(samples["ort"]))
            print(f"{name:<22} {threads:>3} {ol:>14.4f} {rt:>10.4f} {ol / rt:>7.2f}", flush=True)
            results.append(
                {
                    "case": name,
                    "threads": threads,
                    "output_shape": list(got.shape),
                    "median_ms_onnx_light": ol,
                    "median_ms_ort": rt,
                    "ratio": ol / rt,
                    "samples_ms": samples,
                }
            )
    doc["results"] = results
    finish_document(doc, FLAGS.json)


if __name__ == "__main__":
    app.run(main)
