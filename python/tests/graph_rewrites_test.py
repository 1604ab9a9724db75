"""Graph rewrites: same results as the unrewritten model, the pattern gone, and nothing
rewritten where a rewrite would change meaning."""

import math

import numpy as np
import onnx
import onnx_light
import pytest
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


# ------------------------------------------------------------------------ levels and options


def levels_model():
    """One rewrite of each level: a constant subexpression (basic) feeding an erf Gelu
    (extended)."""

    def scalar(name, value):
        return numpy_helper.from_array(np.float32(value), name)

    nodes = [
        helper.make_node("Mul", ["two", "two"], ["four"]),
        helper.make_node("Sub", ["four", "root2_complement"], ["root2"]),
        helper.make_node("Div", ["x", "root2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["s"]),
        helper.make_node("Mul", ["x", "s"], ["m"]),
        helper.make_node("Mul", ["m", "half"], ["y"]),
    ]
    inits = [
        scalar("two", 2),
        scalar("root2_complement", 4 - math.sqrt(2)),
        scalar("one", 1),
        scalar("half", 0.5),
    ]
    graph = helper.make_graph(
        nodes,
        "levels",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


LEVEL_OPS = {
    "disabled": ["Mul", "Sub", "Div", "Erf", "Add", "Mul", "Mul"],
    "basic": ["Div", "Erf", "Add", "Mul", "Mul"],
    "extended": ["Gelu"],
    "all": ["Gelu"],
}


def written_ops(tmp_path, **session_args):
    """The op types of the model the session writes to optimized_model_filepath, and its
    output on a fixed input (the same for every level, to float rounding)."""
    path = tmp_path / "optimized.onnx"
    args = dict(session_args)
    options = args.get("sess_options")
    if options is not None:
        options.optimized_model_filepath = str(path)
    else:
        args["optimized_model_filepath"] = str(path)
    session = onnx_light.InferenceSession(levels_model(), **args)
    x = np.linspace(-4, 4, 32, dtype=np.float32).reshape(4, 8)
    (y,) = session.run(None, {"x": x})
    expected = 0.5 * x.astype(np.float64) * (1 + np.vectorize(math.erf)(x / np.sqrt(2.0)))
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)  # float32 Gelu against float64
    return [n.op_type for n in onnx.load(str(path)).graph.node]


@pytest.mark.parametrize("level", ["disabled", "basic"])
def test_a_model_written_at_basic_or_below_runs_in_onnx_runtime(tmp_path, level):
    """The documented promise of those levels: standard ops only, the same results in ORT."""
    import onnxruntime as ort

    assert written_ops(tmp_path, graph_optimization_level=level) == LEVEL_OPS[level]
    path = tmp_path / "optimized.onnx"
    assert {n.domain for n in onnx.load(str(path)).graph.node} == {""}
    x = np.linspace(-4, 4, 32, dtype=np.float32).reshape(4, 8)
    (ours,) = onnx_light.InferenceSession(levels_model(), graph_optimizations=False).run(None, {"x": x})
    (theirs,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    # The two runtimes' float32 Erf differ in the last bits (1e-7 absolute in the tail).
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "ort_level,level",
    [
        ("ORT_DISABLE_ALL", "disabled"),
        ("ORT_ENABLE_BASIC", "basic"),
        ("ORT_ENABLE_EXTENDED", "extended"),
        ("ORT_ENABLE_ALL", "all"),
    ],
)
def test_ort_session_options_choose_the_level_and_the_file_the_optimised_model_goes_to(tmp_path, ort_level, level):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, ort_level)
    assert written_ops(tmp_path, sess_options=options) == LEVEL_OPS[level]
    ours = onnx_light.SessionOptions()
    ours.graph_optimization_level = getattr(onnx_light.GraphOptimizationLevel, ort_level)
    assert written_ops(tmp_path, sess_options=ours) == LEVEL_OPS[level]
    assert written_ops(tmp_path, graph_optimization_level=level) == LEVEL_OPS[level]


def test_the_default_level_is_all_and_graph_optimizations_false_means_disabled(tmp_path):
    assert written_ops(tmp_path) == LEVEL_OPS["all"]
    given = levels_model()
    onnx_light.InferenceSession(given)
    assert [n.op_type for n in given.graph.node] == LEVEL_OPS["disabled"]  # the caller's model is not rewritten
    assert written_ops(tmp_path, graph_optimizations=False) == LEVEL_OPS["disabled"]
    assert written_ops(tmp_path, graph_optimizations=False, graph_optimization_level="all") == LEVEL_OPS["disabled"]


def test_level_names_numbers_and_enums_map_to_levels_and_anything_else_is_refused():
    assert graph_rewrites.level_of("extended") == "extended"
    assert graph_rewrites.level_of("GraphOptimizationLevel.ORT_ENABLE_BASIC") == "basic"
    assert graph_rewrites.level_of(onnx_light.GraphOptimizationLevel.ORT_ENABLE_EXTENDED) == "extended"
    assert graph_rewrites.level_of(99) == "all" and graph_rewrites.level_of(0) == "disabled"
    for bad in ("fast", 5, True, None):
        with pytest.raises(ValueError, match="graph optimization level"):
            graph_rewrites.level_of(bad)
    with pytest.raises(ValueError, match="graph optimization level"):
        onnx_light.InferenceSession(levels_model(), graph_optimization_level="max")


def test_the_basic_rounds_stop_after_max_basic_rounds_when_a_pass_never_settles(monkeypatch):
    calls = []

    def always_changes(model, weights=None):
        calls.append(1)
        model.graph.initializer.append(numpy_helper.from_array(np.float32(0), f"unused_{len(calls)}"))
        return model

    monkeypatch.setattr(graph_rewrites, "BASIC_PASSES", [always_changes])
    graph_rewrites.optimize(levels_model(), level="basic")
    assert len(calls) == graph_rewrites.MAX_BASIC_ROUNDS
