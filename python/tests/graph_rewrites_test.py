"""Graph rewrites: same results as the unrewritten model, the pattern gone, and nothing
rewritten where a rewrite would change meaning."""

import numpy as np
import onnx_light
from onnx import TensorProto, helper, numpy_helper
from onnx_light import graph_rewrites


def conv_bn_model(conv_output_is_graph_output=False, bn_params_fed=False):
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "B"),
        numpy_helper.from_array(rng.uniform(0.5, 2, 8).astype(np.float32), "scale"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "shift"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "mean"),
        numpy_helper.from_array(rng.uniform(0.1, 3, 8).astype(np.float32), "var"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])]
    if bn_params_fed:  # an initializer that is also a graph input may be overridden by a feed
        inputs.append(helper.make_tensor_value_info("mean", TensorProto.FLOAT, [8]))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if conv_output_is_graph_output:
        outputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, None))
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["y"], epsilon=1e-3),
    ]
    graph = helper.make_graph(nodes, "conv_bn", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_conv_then_batch_norm_folds_into_one_conv_with_the_same_results():
    model = conv_bn_model()
    folded = graph_rewrites.optimize(model)
    assert [n.op_type for n in folded.graph.node] == ["Conv"]
    assert [n.op_type for n in model.graph.node] == ["Conv", "BatchNormalization"]  # the input is untouched
    assert {t.name for t in folded.graph.initializer} == {"W_bn_folded", "y_bn_folded_bias"}
    x = np.random.default_rng(1).standard_normal((1, 3, 10, 10)).astype(np.float32)
    (fast,) = onnx_light.InferenceSession(model).run(None, {"x": x})
    (plain,) = onnx_light.InferenceSession(model, graph_optimizations=False).run(None, {"x": x})
    np.testing.assert_allclose(fast, plain, rtol=1e-5, atol=1e-5)


def test_nothing_folds_where_the_conv_output_is_seen_or_a_parameter_can_be_fed():
    for model in (conv_bn_model(conv_output_is_graph_output=True), conv_bn_model(bn_params_fed=True)):
        assert [n.op_type for n in graph_rewrites.optimize(model).graph.node] == ["Conv", "BatchNormalization"]


def test_ort_session_options_can_switch_rewrites_off():
    import onnxruntime as ort  # only its options object

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    x = np.ones((1, 3, 10, 10), np.float32)
    model = conv_bn_model()
    (plain,) = onnx_light.InferenceSession(model, options).run(None, {"x": x})
    (expected,) = onnx_light.InferenceSession(model, graph_optimizations=False).run(None, {"x": x})
    assert np.array_equal(plain, expected)
