"""The shared graph index of the rewrites (graph_rewrites._graph.GraphView): its edits keep
it equal to a fresh read of the graph, one index serves a whole round of passes, and shape
inference runs at most once per round, not at all after a round that changed nothing.
Creation cost is asserted as counts (indexes built, shape inferences), never as time."""

import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_light import fusion_rewrites, graph_rewrites, qdq_rewrites
from onnx_light.graph_rewrites import _graph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rewrite_checks import model, op_types  # noqa: E402


def tensor(name, shape, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


def chain_model():
    """x -> Relu -> Neg -> Abs -> y, with an unread initializer and one read by Neg's Add."""
    return model(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Add", ["a", "c"], ["b"], name="add"),
            helper.make_node("Abs", ["b"], ["y"], name="abs"),
        ],
        [tensor("x", [2, 3])],
        [tensor("y", [2, 3])],
        [
            numpy_helper.from_array(np.ones((2, 3), np.float32), "c"),
            numpy_helper.from_array(np.zeros(1, np.float32), "declared_unread"),
        ],
    )


@pytest.fixture(autouse=True)
def fresh_counts():
    _graph.COUNTS.clear()
    yield


# ------------------------------------------------------------------------------ edits


def test_replace_nodes_keeps_the_other_nodes_objects_and_puts_new_ones_in_place():
    m = chain_model()
    view = _graph.GraphView(m, None)
    relu, add, absolute = m.graph.node
    neg = helper.make_node("Neg", ["a"], ["b"], name="neg")
    view.replace_nodes({id(add)}, {id(add): [neg]})
    assert [n.name for n in m.graph.node] == ["relu", "neg", "abs"]
    assert m.graph.node[0] is relu and m.graph.node[2] is absolute  # not copies: the index still holds them
    assert view.producer["b"] is m.graph.node[1] and view.consumers["a"] == [m.graph.node[1]]
    assert "c" not in view.consumers
    view.check()


def test_renaming_inputs_and_outputs_moves_producers_and_consumers():
    m = chain_model()
    view = _graph.GraphView(m, None)
    relu, add, absolute = m.graph.node
    view.set_input(absolute, 0, "a")  # Abs reads Relu's output; Add's output is unread
    view.set_outputs(relu, ["r"])
    view.rename_input(absolute, "a", "r")
    view.rename_input(add, "a", "r")
    assert list(absolute.input) == ["r"] and list(add.input) == ["r", "c"]
    assert view.producer["r"] is relu and "a" not in view.producer
    assert sorted(n.name for n in view.consumers["r"]) == ["abs", "add"] and "b" not in view.consumers
    view.check()


def test_drop_unused_initializers_drops_those_that_lost_their_reader_only():
    m = chain_model()
    view = _graph.GraphView(m, None)
    add = m.graph.node[1]
    view.set_inputs(add, ["a", "a"])  # "c" loses its only reader
    view.drop_unused_initializers()
    assert sorted(t.name for t in m.graph.initializer) == ["declared_unread"]  # never read: kept
    assert "c" not in view.initializers and view.constant("c") is None
    view.check()


def test_added_initializers_are_constants_of_the_index():
    m = chain_model()
    view = _graph.GraphView(m, None)
    view.add_initializer(numpy_helper.from_array(np.full(3, 2.5, np.float32), "new"))
    np.testing.assert_array_equal(view.constant("new"), np.full(3, 2.5, np.float32))
    assert view.shape("new") == [3] and view.elem_type("new") == TensorProto.FLOAT
    assert "new" in view.taken_names()
    view.check()


def test_check_fails_when_the_graph_was_edited_behind_the_index():
    m = chain_model()
    view = _graph.GraphView(m, None)
    m.graph.node[2].input[0] = "a"
    with pytest.raises(AssertionError):
        view.check()


# ------------------------------------------------------------------------ sharing


def test_passes_of_a_round_share_one_index_and_a_pass_alone_gets_its_own():
    m = chain_model()
    with _graph.shared_view(m, None) as view:
        assert _graph.view_of(m, None) is view
        assert _graph.view_of(chain_model(), None) is not view  # another model
    assert _graph.view_of(m, None) is not view
    assert _graph.view_of(m, None) is not _graph.view_of(m, None)


def test_the_shared_index_is_read_again_when_a_pass_adds_nodes_behind_it():
    m = chain_model()
    with _graph.shared_view(m, None) as view:
        m.graph.node.append(helper.make_node("Neg", ["y"], ["z"]))
        assert _graph.view_of(m, None) is view
        assert view.consumers["y"][0].op_type == "Neg"  # rebuilt
        view.check()


def test_qdq_element_types_come_from_the_index():
    m = model(
        [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Cast", ["h"], ["y"], to=TensorProto.INT8)],
        [tensor("x", [2], TensorProto.UINT8)],
        [tensor("y", [2], TensorProto.INT8)],
    )
    m.graph.value_info.append(tensor("h", [2], TensorProto.UINT8))
    g = qdq_rewrites._Graph(m, None)
    assert (g.elem_type("x"), g.elem_type("h"), g.elem_type("y")) == (
        TensorProto.UINT8,
        TensorProto.UINT8,
        TensorProto.INT8,
    )
    assert g.elem_type("nowhere") is None
    assert g.view.types["h"] is not None  # one dict lookup, no scan of value_info


# ------------------------------------------------------------------- counts per round


def levels_model():
    """Round 1 of basic folds a constant Mul; the extended passes then fuse the erf Gelu."""

    def scalar(name, value):
        return numpy_helper.from_array(np.float32(value), name)

    nodes = [
        helper.make_node("Mul", ["one", "root2"], ["root2_again"]),
        helper.make_node("Div", ["x", "root2_again"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["x", "e1"], ["xe"]),
        helper.make_node("Mul", ["xe", "half"], ["y"]),
    ]
    inits = [scalar("one", 1.0), scalar("root2", np.sqrt(2.0)), scalar("half", 0.5)]
    return model(nodes, [tensor("x", [4, 8])], [tensor("y", [4, 8])], inits, opset=20)


def test_level_all_builds_one_index_for_all_rounds_and_infers_only_after_changes():
    optimized = graph_rewrites.optimize(levels_model(), level="all")
    assert op_types(optimized) == ["Gelu"]
    # Rounds: basic 1 (folds the Mul), basic 2 (nothing left: stops), the later passes
    # (fuse the Gelu), basic 3 (nothing: stops). One index, kept across them; inference
    # before basic 1 and basic 2 (a basic round changed the graph before each), none before
    # the later passes (nothing changed) nor after them (their fused nodes keep the types
    # of the values they write). The graph is compared whole at the start and after the two
    # rounds that edited it; the rounds that edited nothing say so through the index.
    assert _graph.COUNTS["views"] == 1
    assert _graph.COUNTS["shape_inferences"] == 2
    assert _graph.COUNTS["fingerprints"] == 3


def test_fresh_value_types_spare_the_first_inference():
    m = levels_model()
    m = onnx.shape_inference.infer_shapes(m)
    graph_rewrites.optimize(m, level="all", shapes_inferred=True)
    assert _graph.COUNTS["views"] == 1
    assert _graph.COUNTS["shape_inferences"] == 1  # before basic round 2 only


def test_a_graph_nothing_rewrites_costs_one_index_per_phase_and_no_second_inference():
    m = chain_model()
    optimized = graph_rewrites.optimize(m, level="all")
    assert op_types(optimized) == ["Relu", "Add", "Abs"]
    # Basic round 1 and the later passes edit nothing: no basic round after them, one index,
    # and the graph compared whole once (at the start).
    assert _graph.COUNTS["views"] == 1
    assert _graph.COUNTS["shape_inferences"] == 1
    assert _graph.COUNTS["fingerprints"] == 1


def test_the_fusion_passes_infer_shapes_alone_but_not_in_a_round():
    rng = np.random.default_rng(0)
    m = model(
        [
            helper.make_node("Conv", ["x", "w"], ["c"]),
            helper.make_node("Relu", ["c"], ["y"]),
        ],
        [tensor("x", [1, 2, 5, 5])],
        [tensor("y", None)],
        [numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "w")],
    )
    alone = onnx.ModelProto()
    alone.CopyFrom(m)
    fusion_rewrites.fuse_conv_activation(alone)
    assert op_types(alone) == ["FusedConv"]
    assert _graph.COUNTS["shape_inferences"] == 1
    _graph.COUNTS.clear()
    optimized = graph_rewrites.optimize(m, level="all")
    assert op_types(optimized) == ["FusedConv"]
    assert _graph.COUNTS["shape_inferences"] == 1  # before basic round 1 only (not after the fusion)


def test_a_pass_written_against_the_graph_not_the_index_still_works_in_a_round(monkeypatch):
    """The form passes had before the shared index: its own GraphView, free-function edits.
    The round's index follows (the free functions go through it, or it is read again), so
    the fusion pass after it sees its result."""

    def abs_to_relu(m, weights=None):
        view = _graph.GraphView(m, weights)
        found = {id(n): n for n in m.graph.node if n.op_type == "Abs"}
        relus = {key: [helper.make_node("Relu", list(n.input), list(n.output))] for key, n in found.items()}
        _graph.replace_nodes(m.graph, set(found), relus)
        _graph.drop_unused_initializers(m.graph, view)
        return m

    monkeypatch.setattr(graph_rewrites, "EXTENDED_PASSES", [abs_to_relu, *graph_rewrites.EXTENDED_PASSES])
    rng = np.random.default_rng(0)
    m = model(
        [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Abs", ["c"], ["y"])],
        [tensor("x", [1, 2, 5, 5])],
        [tensor("y", None)],
        [numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "w")],
    )
    saved = _graph.CHECK_INDEX
    _graph.CHECK_INDEX = True
    try:
        optimized = graph_rewrites.optimize(m, level="extended")
    finally:
        _graph.CHECK_INDEX = saved
    assert op_types(optimized) == ["FusedConv"]
    assert [a.s for a in optimized.graph.node[0].attribute if a.name == "activation"] == [b"Relu"]
    assert _graph.COUNTS["views"] >= 2  # the round's index was read again after abs_to_relu


def test_the_index_outlives_an_inference_between_rounds_and_takes_its_value_types():
    """Inference between rounds rewrites value_info only (the nodes the index holds stay the
    graph's own), and the index reads the fresh types: after basic round 1 folds the
    constant Mul, the next round knows the Div's output type."""
    m = levels_model()
    first_nodes = list(m.graph.node)  # held, so that identities stay comparable
    graph_rewrites.optimize(m, level="basic", in_place=True)
    assert all(any(n is f for f in first_nodes) for n in m.graph.node)  # never copied by an inference
    assert any(vi.name == "d" for vi in m.graph.value_info)
    assert _graph.COUNTS["views"] == 1


def test_inference_between_rounds_replaces_the_nodes_of_a_graph_with_subgraphs_and_the_index_follows():
    branch = helper.make_graph([helper.make_node("Neg", ["a"], ["b"])], "then", [], [tensor("b", None)])
    other = helper.make_graph([helper.make_node("Abs", ["a"], ["c"])], "else", [], [tensor("c", None)])
    m = model(
        [
            helper.make_node("Mul", ["one", "two"], ["two_again"]),
            helper.make_node("Mul", ["x", "two_again"], ["a"]),
            helper.make_node("Greater", ["two", "one"], ["cond"]),
            helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=other),
        ],
        [tensor("x", [2, 3])],
        [tensor("y", None)],
        [numpy_helper.from_array(np.float32(1.0), "one"), numpy_helper.from_array(np.float32(2.0), "two")],
    )
    saved = _graph.CHECK_INDEX
    _graph.CHECK_INDEX = True
    try:
        optimized = graph_rewrites.optimize(m, level="basic")
    finally:
        _graph.CHECK_INDEX = saved
    assert op_types(optimized) == ["Mul", "If"]  # the constant Mul and Greater folded
    assert _graph.COUNTS["views"] == 2  # read again once: inference replaced the nodes
