"""RNN, GRU and LSTM through the Python package under a serial and a parallel CPU policy:
the ONNX backend node cases; random cases against onnx.reference (directions, layout,
peepholes, GRU's linear_before_reset, batch 1 and > 1, weights as graph inputs and as
constant initializers, which the kernel packs at creation); sequence_lens with zero and
mixed lengths against onnx.reference run row by row on each row's own steps (the
reference ignores sequence_lens); clip and non-default activations against ONNX Runtime
(the reference ignores both)."""

import zlib

import numpy as np
import onnx
import onnx.reference
import onnx_light
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from native.kernels.attention import node_cases

CASES = node_cases.collect(("test_simple_rnn", "test_rnn_", "test_gru", "test_lstm"))

# float32 kernels against float32 numpy references: differences are a few float ulps of
# the gate sums, amplified by at most the step count.
TOLERANCE = {"rtol": 1e-4, "atol": 2e-5}
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
THREADS = [1, 4]


def test_cases_collected():
    assert len(CASES) >= 18, len(CASES)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case, threads):
    node_cases.run_case(case, threads)


# --------------------------------------------------------------------------- random cases


def make_inputs(op, seq, batch, size, hidden, directions, layout, rng, peepholes=False, initial=True):
    g = GATES[op]
    x_shape = [batch, seq, size] if layout else [seq, batch, size]
    state = [batch, directions, hidden] if layout else [directions, batch, hidden]
    inputs = {
        "X": rng.uniform(-1, 1, x_shape).astype(np.float32),
        "W": rng.uniform(-0.5, 0.5, [directions, g * hidden, size]).astype(np.float32),
        "R": rng.uniform(-0.5, 0.5, [directions, g * hidden, hidden]).astype(np.float32),
        "B": rng.uniform(-0.5, 0.5, [directions, 2 * g * hidden]).astype(np.float32),
    }
    if initial:
        inputs["initial_h"] = rng.uniform(-1, 1, state).astype(np.float32)
        if op == "LSTM":
            inputs["initial_c"] = rng.uniform(-1, 1, state).astype(np.float32)
    if peepholes:
        inputs["P"] = rng.uniform(-0.5, 0.5, [directions, 3 * hidden]).astype(np.float32)
    return inputs


def make_model(op, inputs, attrs, constant_weights, opset=14):
    """The node with inputs in ONNX order (missing optional ones as ""); W, R and B become
    initializers when constant_weights."""
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h"] + (["initial_c", "P"] if op == "LSTM" else [])
    names = [n if n in inputs else "" for n in order]
    while names and names[-1] == "":
        names.pop()
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, name="rnn_node", **attrs)
    initializers, graph_inputs = [], []
    for name in names:
        if not name:
            continue
        value = inputs[name]
        if constant_weights and name in ("W", "R", "B"):
            initializers.append(numpy_helper.from_array(value, name))
        else:
            dtype = helper.np_dtype_to_tensor_dtype(value.dtype)
            graph_inputs.append(helper.make_tensor_value_info(name, dtype, list(value.shape)))
    graph = helper.make_graph(
        [node],
        op,
        graph_inputs,
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)
    feeds = {i.name: inputs[i.name] for i in graph.input}
    return model, feeds


def run_ours(model, feeds, threads):
    session = onnx_light.InferenceSession(
        model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
    )
    return session.run(None, feeds)


def run_reference(model, feeds):
    return onnx.reference.ReferenceEvaluator(model).run(None, feeds)


def assert_outputs(got, want, what):
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what} output {i}: {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g, w, err_msg=f"{what} output {i}", **TOLERANCE)


# (op, extra attributes, peepholes)
CELLS = [
    ("RNN", {}, False),
    ("GRU", {"linear_before_reset": 0}, False),
    ("GRU", {"linear_before_reset": 1}, False),
    ("LSTM", {}, False),
    ("LSTM", {}, True),
]
CELL_IDS = ["rnn", "gru_lbr0", "gru_lbr1", "lstm", "lstm_peepholes"]


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("constant_weights", [False, True], ids=["weights_fed", "weights_constant"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("cell", CELLS, ids=CELL_IDS)
def test_matches_onnx_reference(cell, direction, batch, layout, constant_weights, threads):
    op, attrs, peepholes = cell
    directions = 2 if direction == "bidirectional" else 1
    hidden = 70 if batch > 1 else 5  # 70: two hidden-unit blocks at the default block of 64
    rng = np.random.default_rng(zlib.crc32(repr((op, attrs, peepholes, direction, batch, layout)).encode()))
    inputs = make_inputs(op, 6, batch, 7, hidden, directions, layout, rng, peepholes)
    attrs = dict(attrs, hidden_size=hidden, direction=direction, layout=layout)
    model, feeds = make_model(op, inputs, attrs, constant_weights)
    assert_outputs(run_ours(model, feeds, threads), run_reference(model, feeds), f"{op} {direction}")


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("cell", CELLS, ids=CELL_IDS)
def test_sequence_lens_zero_and_mixed_match_reference_per_row(cell, direction, layout, threads):
    """Row b runs its first lens[b] steps (reverse: from step lens[b] - 1 down); Y is zero
    past them. A zero-length row keeps its initial state and outputs zeros in Y."""
    op, attrs, peepholes = cell
    directions, seq, hidden, lens = (2 if direction == "bidirectional" else 1), 5, 6, [3, 0, 5, 1]
    batch = len(lens)
    rng = np.random.default_rng(7)
    inputs = make_inputs(op, seq, batch, 4, hidden, directions, layout, rng, peepholes)
    inputs["sequence_lens"] = np.array(lens, dtype=np.int32)
    attrs = dict(attrs, hidden_size=hidden, direction=direction, layout=layout)
    model, feeds = make_model(op, inputs, attrs, constant_weights=False)
    got = run_ours(model, feeds, threads)
    # To (seq, dirs, batch, hidden) and (dirs, batch, hidden) whatever the layout.
    y = got[0].transpose(1, 2, 0, 3) if layout else got[0]
    states = [s.transpose(1, 0, 2) if layout else s for s in got[1:]]
    batch_axis = 0 if layout else 1
    for b, length in enumerate(lens):
        if length == 0:
            np.testing.assert_array_equal(y[:, :, b], 0)
            for s, name in zip(states, ["initial_h", "initial_c"]):
                initial = inputs[name].transpose(1, 0, 2) if layout else inputs[name]
                np.testing.assert_array_equal(s[:, b], initial[:, b])
            continue
        row = {k: v for k, v in inputs.items() if k != "sequence_lens"}
        x = np.take(inputs["X"], [b], axis=batch_axis)
        row["X"] = x[:, :length] if layout else x[:length]
        for name in ("initial_h", "initial_c"):
            if name in row:
                row[name] = np.take(inputs[name], [b], axis=batch_axis)
        row_model, row_feeds = make_model(op, row, attrs, constant_weights=False)
        want = run_reference(row_model, row_feeds)
        want_y = want[0].transpose(1, 2, 0, 3) if layout else want[0]
        np.testing.assert_allclose(y[:length, :, b], want_y[:, :, 0], err_msg=f"row {b} Y", **TOLERANCE)
        np.testing.assert_array_equal(y[length:, :, b], 0)
        for s, w in zip(states, want[1:]):
            w = w.transpose(1, 0, 2) if layout else w
            np.testing.assert_allclose(s[:, b], w[:, 0], err_msg=f"row {b} state", **TOLERANCE)


# (op, attributes): clip and non-default activations, checked against ONNX Runtime.
ORT_CASES = [
    ("RNN", {"clip": 0.4}),
    ("RNN", {"activations": ["Relu"]}),
    ("RNN", {"activations": ["LeakyRelu", "Softsign"], "activation_alpha": [0.2]}),
    ("GRU", {"clip": 0.5, "linear_before_reset": 1}),
    ("GRU", {"activations": ["HardSigmoid", "Softsign", "Sigmoid", "Tanh"], "activation_alpha": [0.3]}),
    ("GRU", {"activations": ["Sigmoid", "Elu"], "activation_alpha": [0.7], "linear_before_reset": 1}),
    ("LSTM", {"clip": 0.3}),
    ("LSTM", {"activations": ["HardSigmoid", "Tanh", "Softsign"]}),
    (
        "LSTM",
        {
            "activations": ["Sigmoid", "ScaledTanh", "Affine"],
            "activation_alpha": [0.8, 1.5],
            "activation_beta": [1.2, -0.1],
        },
    ),
    ("LSTM", {"activations": ["Sigmoid", "Relu", "ThresholdedRelu"], "activation_alpha": [0.1]}),
    ("LSTM", {"activations": ["Sigmoid", "Softplus", "Tanh"], "clip": 2.0, "input_forget": 1}),
]


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("case", ORT_CASES, ids=[f"{op}_{i}" for i, (op, _) in enumerate(ORT_CASES)])
def test_clip_and_activations_match_onnxruntime(case, batch, threads):
    op, attrs = case
    functions = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    activations = attrs.get("activations", [])
    direction = "bidirectional" if len(activations) == 2 * functions else "forward"
    directions = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(11 + batch)
    inputs = make_inputs(op, 5, batch, 4, 6, directions, 0, rng, peepholes=op == "LSTM")
    attrs = dict(attrs, hidden_size=6, direction=direction)
    model, feeds = make_model(op, inputs, attrs, constant_weights=False)
    ort_session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert_outputs(run_ours(model, feeds, threads), ort_session.run(None, feeds), f"{op} {attrs}")
