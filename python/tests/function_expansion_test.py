"""Ops without a kernel whose ONNX schema defines a function body run as that body."""

import numpy as np
import onnx.reference
import onnx_light
from onnx import TensorProto, helper
from onnx_light import _model


def single_node_model(op, opset, **attributes):
    node = helper.make_node(op, ["x"], ["y"], name="the_op", **attributes)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_an_op_without_kernel_is_expanded_into_its_function_body(monkeypatch):
    ranges = dict(_model._kernel_ranges())
    ranges.pop(("", "Mish"), None)  # as if no family implemented Mish
    monkeypatch.setattr(_model, "_KERNEL_RANGES", ranges)
    model = single_node_model("Mish", 22)
    prepared = _model.prepare_model(model)
    assert "Mish" not in [n.op_type for n in prepared.graph.node]
    assert [n.op_type for n in model.graph.node] == ["Mish"], "the caller's model is left alone"
    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(2, 4)
    (y,) = onnx_light.InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(y, x * np.tanh(np.log1p(np.exp(x))), rtol=1e-5, atol=1e-6)


def test_an_expanded_op_matches_the_reference():
    # SwiGLU (opset 28) has no kernel here; its body is Swish(a, alpha) * b.
    node = helper.make_node("SwiGLU", ["a", "b"], ["y"], name="gate")
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 4]) for n in ("a", "b")]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)])
    feeds = {"a": np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4), "b": np.full((2, 4), 3, np.float32)}
    expected = onnx.reference.ReferenceEvaluator(model).run(None, feeds)[0]
    (y,) = onnx_light.InferenceSession(model).run(None, feeds)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
