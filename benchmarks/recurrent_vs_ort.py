"""Recurrent networks and selection beside ONNX Runtime (issue 17's cases): one LSTM layer
(seq 32, batch 4, 64 -> 128), a GRU of the same shape, a bidirectional LSTM of that shape,
and TopK(k=5) + GatherElements + ReduceMean + Softmax over 512x1000, at 1 and 2 threads.
Weights are initializers (constants, as in exported models). Each runtime is timed in its
own block (warm-up, then `--repeats` runs; ORT's workers spin after runs, so alternating
single runs would charge that to the other runtime), onnx-light first, with a pause of
--ort_pause_s before onnx-light's block (after the agreement run, which is ORT's too) and
after ORT's; --ort_spinning=false builds ORT's sessions with spinning off, for a check
run. Medians, every raw sample, the CPU, the build mode, ORT's spinning and the pause, and
the load average before and after are written.

    ./bazelw run //benchmarks:recurrent_vs_ort -- --output=benchmarks/reports/recurrent/recurrent.json
"""

import numpy as np
import onnx_light
from absl import app, flags
from onnx import ModelProto, TensorProto, helper, numpy_helper

from benchmarks.ort_reference import (
    ORT_PAUSE_S,
    block_timing_conditions,
    conditions,
    finish_document,
    ort_session,
    paired_blocks,
)

OUTPUT = flags.DEFINE_string("output", "", "where to write the JSON results")
REPEATS = flags.DEFINE_integer("repeats", 50, "timed runs per block")
WARMUP = flags.DEFINE_integer("warmup", 5, "untimed runs before each block")
THREADS = flags.DEFINE_list("threads", ["1", "2"], "thread counts")
ONLY = flags.DEFINE_string("only", "", "run only cases whose name contains this")
ORT_SPINNING = flags.DEFINE_bool(
    "ort_spinning", True, "ORT's intra-op spinning at its default (on); false: off, for a check run"
)
ORT_PAUSE = flags.DEFINE_float(
    "ort_pause_s", ORT_PAUSE_S, "pause after every ORT block, for ORT's spinning workers to sleep"
)
SEQ = flags.DEFINE_integer("seq", 32, "recurrent cases: sequence length")
BATCH = flags.DEFINE_integer("batch", 4, "recurrent cases: batch")
INPUT = flags.DEFINE_integer("input", 64, "recurrent cases: input size")
HIDDEN = flags.DEFINE_integer("hidden", 128, "recurrent cases: hidden size")
ROWS = flags.DEFINE_integer("rows", 512, "TopK case: rows")
COLUMNS = flags.DEFINE_integer("columns", 1000, "TopK case: columns")


def recurrent_model(op: str, direction: str, rng: np.random.Generator) -> tuple[ModelProto, dict[str, np.ndarray]]:
    seq, batch, size, hidden = SEQ.value, BATCH.value, INPUT.value, HIDDEN.value
    gates = {"LSTM": 4, "GRU": 3}[op]
    dirs = 2 if direction == "bidirectional" else 1
    scale = 1.0 / np.sqrt(hidden)

    def weight(name: str, shape: list[int]):
        return numpy_helper.from_array(rng.uniform(-scale, scale, shape).astype(np.float32), name)

    initializers = [
        weight("W", [dirs, gates * hidden, size]),
        weight("R", [dirs, gates * hidden, hidden]),
        weight("B", [dirs, 2 * gates * hidden]),
    ]
    node = helper.make_node(
        op, ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=hidden, direction=direction, name=op.lower()
    )
    graph = helper.make_graph(
        [node],
        f"{op}_{direction}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, size])],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, None),
        ],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=9)
    return model, {"X": rng.standard_normal([seq, batch, size], dtype=np.float32)}


def topk_model(rng: np.random.Generator) -> tuple[ModelProto, dict[str, np.ndarray]]:
    rows, columns = ROWS.value, COLUMNS.value
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1),
        helper.make_node("GatherElements", ["x", "indices"], ["gathered"], axis=-1),
        helper.make_node("ReduceMean", ["gathered"], ["mean"], keepdims=1),  # opset 13: axes attribute
        helper.make_node("Softmax", ["values"], ["probs"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "topk_gather_mean_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, columns])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("mean", TensorProto.FLOAT, None),
        ],
        [numpy_helper.from_array(np.array([5], dtype=np.int64), "k")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
    return model, {"x": rng.standard_normal([rows, columns], dtype=np.float32)}


def cases():
    rng = np.random.default_rng(0)
    shape = f"seq{SEQ.value}_b{BATCH.value}_{INPUT.value}to{HIDDEN.value}"
    yield f"LSTM/{shape}", *recurrent_model("LSTM", "forward", rng)
    yield f"GRU/{shape}", *recurrent_model("GRU", "forward", rng)
    yield f"LSTM_bidirectional/{shape}", *recurrent_model("LSTM", "bidirectional", rng)
    yield f"TopK5_GatherElements_ReduceMean_Softmax/{ROWS.value}x{COLUMNS.value}", *topk_model(rng)


def main(argv: list[str]) -> None:
    del argv
    doc = {
        "benchmark": "recurrent_vs_ort",
        "results": [],
        "conditions": conditions(
            repeats=REPEATS.value,
            warmup=WARMUP.value,
            **block_timing_conditions(ORT_SPINNING.value, ORT_PAUSE.value),
        ),
    }
    for name, model, feeds in cases():
        if ONLY.value and ONLY.value not in name:
            continue
        data = model.SerializeToString()
        for threads in map(int, THREADS.value):
            theirs = ort_session(data, threads, spinning=ORT_SPINNING.value)
            ours = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
            for got, expected in zip(ours.run(None, feeds), theirs.run(None, feeds)):
                np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
            samples = paired_blocks(ours, theirs, feeds, WARMUP.value, REPEATS.value, ORT_PAUSE.value)
            row = {"case": name, "threads": threads, "onnx_light_ms": samples["onnx_light"], "ort_ms": samples["ort"]}
            row["ratio_ours_over_ort"] = float(np.median(row["onnx_light_ms"]) / np.median(row["ort_ms"]))
            doc["results"].append(row)
            print(
                f"{name:56s} {threads} thread(s): ours {np.median(row['onnx_light_ms']):8.3f} ms, ORT "
                f"{np.median(row['ort_ms']):8.3f} ms, ours/ORT {row['ratio_ours_over_ort']:.2f}",
                flush=True,
            )
    finish_document(doc, OUTPUT.value)


if __name__ == "__main__":
    app.run(main)
