"""The basic level's passes, each on a small graph where it fires (the pattern gone, the
results ONNX Runtime's on the unrewritten graph) and on graphs where it must not (a value
that can be fed, a graph output, a symbolic dim, a subgraph reading the value)."""

import os
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_light import graph_rewrites
from onnx_light.graph_rewrites import basic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rewrite_checks import check_rewrite, model, op_types  # noqa: E402

F = TensorProto.FLOAT
RNG = np.random.default_rng(0)


def tensor(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array)))


X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


# ---------------------------------------------------------------------------- fold_constants


def test_constant_subexpressions_become_one_initializer_with_their_value():
    w1, w2 = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    m = model(
        [
            helper.make_node("Mul", ["w1", "w2"], ["p"]),
            helper.make_node("Transpose", ["p"], ["pt"], perm=[1, 0]),
            helper.make_node("Transpose", ["pt"], ["c"], perm=[1, 0]),
            helper.make_node("Add", ["x", "c"], ["y"]),
        ],
        [tensor("x", [2, 3, 4])],
        [tensor("y", None)],
        [init("w1", w1), init("w2", w2)],
    )
    rewritten = check_rewrite(m, {"x": X}, "basic", ["Add"])
    (folded,) = rewritten.graph.initializer
    assert folded.name == "c"
    np.testing.assert_array_equal(numpy_helper.to_array(folded), w1 * w2)  # one float multiply: exact


def test_a_constant_node_that_is_a_graph_output_keeps_its_name_and_value():
    m = model(
        [helper.make_node("Neg", ["w"], ["y"]), helper.make_node("Relu", ["x"], ["z"])],
        [tensor("x", [2, 3, 4])],
        [tensor("y", None), tensor("z", None)],
        [init("w", np.array([1.5, -2], np.float32))],
    )
    rewritten = check_rewrite(m, {"x": X}, "basic", ["Relu"])
    assert [t.name for t in rewritten.graph.initializer] == ["y"]


def test_nothing_folds_whose_input_can_be_fed_or_is_random():
    fed = model(
        [helper.make_node("Neg", ["w"], ["n"]), helper.make_node("Add", ["x", "n"], ["y"])],
        [tensor("x", [2, 3, 4]), tensor("w", [4])],  # an initializer that is also an input
        [tensor("y", None)],
        [init("w", np.ones(4, np.float32))],
    )
    assert op_types(graph_rewrites.optimize(fed, level="basic")) == ["Neg", "Add"]
    random = model(
        [helper.make_node("RandomUniform", [], ["r"], shape=[4], seed=1.0), helper.make_node("Add", ["x", "r"], ["y"])],
        [tensor("x", [2, 3, 4])],
        [tensor("y", None)],
    )
    assert op_types(graph_rewrites.optimize(random, level="basic")) == ["RandomUniform", "Add"]


def test_a_dequantize_linear_of_a_constant_weight_stays_for_the_qdq_rewrites():
    m = model(
        [
            helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["w"]),
            helper.make_node("Add", ["x", "w"], ["y"]),
        ],
        [tensor("x", [2, 3, 4])],
        [tensor("y", None)],
        [init("q", np.arange(4, dtype=np.uint8)), init("scale", np.float32(0.5)), init("zero", np.uint8(1))],
    )
    check_rewrite(m, {"x": X}, "basic", ["DequantizeLinear", "Add"])


def test_a_node_that_would_blow_a_few_numbers_up_into_a_large_constant_is_not_folded():
    n = 2 * basic.FOLD_GROWTH_LIMIT_ELEMENTS
    fill = numpy_helper.from_array(np.ones(1, np.float32))
    big = model(
        [
            helper.make_node("ConstantOfShape", ["shape"], ["big"], value=fill),
            helper.make_node("Add", ["x", "big"], ["y"]),
        ],
        [tensor("x", [n])],
        [tensor("y", None)],
        [init("shape", np.array([n], np.int64))],
    )
    check_rewrite(big, {"x": np.arange(n, dtype=np.float32)}, "basic", ["ConstantOfShape", "Add"])


def test_constant_nodes_inside_a_subgraph_are_left_alone():
    then_graph = helper.make_graph(
        [helper.make_node("Neg", ["w"], ["t"]), helper.make_node("Add", ["x", "t"], ["then_out"])],
        "then",
        [],
        [tensor("then_out", None)],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["else_out"])], "else", [], [tensor("else_out", None)]
    )
    m = model(
        [helper.make_node("If", ["cond"], ["y"], then_branch=then_graph, else_branch=else_graph)],
        [tensor("cond", [], TensorProto.BOOL), tensor("x", [2, 3, 4])],
        [tensor("y", None)],
        [init("w", np.float32(3))],
    )
    rewritten = check_rewrite(m, {"cond": np.array(True), "x": X}, "basic", ["If"])
    branch = rewritten.graph.node[0].attribute[0].g
    assert [n.op_type for n in branch.node] in (["Neg", "Add"], ["Identity"])
    assert {t.name for t in rewritten.graph.initializer} == {"w"}  # read by the branch: kept


# ------------------------------------------------------------------------ fold_static_shapes


def reshape_chain(dim0):
    """What PyTorch exports for x.reshape(x.shape[0], -1)."""
    return model(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            const("zero", np.array(0, np.int64)),
            helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
            const("axis", np.array([0], np.int64)),
            helper.make_node("Unsqueeze", ["d0", "axis"], ["d0u"]),
            const("rest", np.array([-1], np.int64)),
            helper.make_node("Concat", ["d0u", "rest"], ["shape"], axis=0),
            helper.make_node("Reshape", ["x", "shape"], ["y"]),
        ],
        [tensor("x", [dim0, 3, 4])],
        [tensor("y", None)],
    )


def test_the_shape_chain_before_a_reshape_folds_away_when_shapes_are_static():
    rewritten = check_rewrite(reshape_chain(2), {"x": X}, "basic", ["Reshape"])
    shape = {t.name: numpy_helper.to_array(t) for t in rewritten.graph.initializer}[rewritten.graph.node[0].input[1]]
    np.testing.assert_array_equal(shape, [2, -1])


def test_the_shape_chain_stays_when_the_dim_it_reads_is_symbolic():
    check_rewrite(reshape_chain("batch"), {"x": X}, "basic", ["Shape", "Gather", "Unsqueeze", "Concat", "Reshape"])


def test_shape_with_a_static_slice_and_size_of_a_static_value_fold():
    m = model(
        [
            helper.make_node("Shape", ["x"], ["s"], start=1),  # dims 1: static though dim 0 is not
            helper.make_node("Size", ["w"], ["n"]),
            helper.make_node("Cast", ["s"], ["sf"], to=F),
            helper.make_node("Cast", ["n"], ["nf"], to=F),
            helper.make_node("Mul", ["sf", "nf"], ["y"]),
        ],
        [tensor("x", ["batch", 3, 4]), tensor("w", [5, 2])],
        [tensor("y", None)],
    )
    rewritten = check_rewrite(m, {"x": X, "w": np.zeros((5, 2), np.float32)}, "basic", [])
    np.testing.assert_array_equal(numpy_helper.to_array(rewritten.graph.initializer[0]), [30.0, 40.0])


# ---------------------------------------------------------------------- eliminate_identities


def test_identities_and_inference_dropout_go_and_the_output_keeps_its_name():
    m = model(
        [
            helper.make_node("Identity", ["x"], ["a"]),
            helper.make_node("Dropout", ["a", "ratio"], ["b"]),
            helper.make_node("Relu", ["b"], ["c"]),
            helper.make_node("Identity", ["c"], ["y"]),
        ],
        [tensor("x", [2, 3, 4])],
        [tensor("y", None)],
        [init("ratio", np.float32(0.5))],
    )
    rewritten = check_rewrite(m, {"x": X}, "basic", ["Relu"])
    assert list(rewritten.graph.node[0].input) == ["x"] and list(rewritten.graph.node[0].output) == ["y"]


def test_identities_of_one_shared_weight_go_in_one_sweep(monkeypatch):
    """TorchScript exports a weight shared by many layers as one Identity of it per layer:
    all go in one sweep (one graph edit), and a chain of Identities and one whose output is
    a graph output (its input's producer takes the name) still come out right."""
    layers = 12
    nodes = [helper.make_node("Identity", ["w"], [f"w{i}"]) for i in range(layers)]
    nodes += [helper.make_node("Add", ["x" if i == 0 else f"h{i - 1}", f"w{i}"], [f"h{i}"]) for i in range(layers)]
    nodes += [
        helper.make_node("Identity", [f"h{layers - 1}"], ["chain"]),
        helper.make_node("Identity", ["chain"], ["y"]),  # a graph output: Add 11 takes its name
        helper.make_node("Identity", [f"h{layers - 1}"], ["z"]),  # another reader of h11
    ]
    m = model(
        nodes,
        [tensor("x", [2, 3, 4])],
        [tensor("y", None), tensor("z", None)],
        [init("w", RNG.standard_normal((2, 3, 4)).astype(np.float32))],
    )
    sweeps = []
    original = basic.GraphView.replace_nodes

    def counting(self, removed, inserted=None):
        sweeps.append(len(removed))
        return original(self, removed, inserted)

    monkeypatch.setattr(basic.GraphView, "replace_nodes", counting)
    rewritten = check_rewrite(m, {"x": X}, "basic", ["Add"] * layers + ["Identity"])
    # The first sweep takes every Identity of the weight, "chain" and one of y's and z's (the
    # other must stay: a graph output passed on by a node output another output renamed).
    assert sweeps[0] == layers + 2
    assert [o.name for o in rewritten.graph.output] == ["y", "z"]


def test_identities_that_must_stay_stay():
    # A graph input passed straight out, a training Dropout, a Dropout whose mask is read,
    # and an Identity whose output a subgraph reads.
    branch = helper.make_graph([helper.make_node("Neg", ["i"], ["o"])], "b", [], [tensor("o", None)])
    m = model(
        [
            helper.make_node("Identity", ["x"], ["y"]),
            helper.make_node("Dropout", ["x", "ratio", "train"], ["d"], seed=0),
            helper.make_node("Dropout", ["x"], ["e", "mask"]),
            helper.make_node("Identity", ["x"], ["i"]),
            helper.make_node("If", ["cond"], ["z"], then_branch=branch, else_branch=branch),
        ],
        [tensor("x", [2, 3, 4]), tensor("cond", [], TensorProto.BOOL)],
        [tensor("y", None), tensor("d", None), tensor("e", None), tensor("mask", None), tensor("z", None)],
        [init("ratio", np.float32(0.0)), init("train", np.array(True))],
    )
    rewritten = graph_rewrites.optimize(m, level="basic")
    assert op_types(rewritten) == ["Identity", "Dropout", "Dropout", "Identity", "If"]


# ---------------------------------------------------------------------- eliminate_dead_nodes


def test_nodes_nobody_reads_go_but_not_those_a_subgraph_reads():
    branch = helper.make_graph([helper.make_node("Neg", ["seen"], ["o"])], "b", [], [tensor("o", None)])
    m = model(
        [
            helper.make_node("Exp", ["x"], ["unread"]),
            helper.make_node("Mul", ["unread", "w"], ["unread2"]),
            helper.make_node("Relu", ["x"], ["seen"]),
            helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=branch),
        ],
        [tensor("x", [2, 3, 4]), tensor("cond", [], TensorProto.BOOL)],
        [tensor("y", None)],
        [init("w", np.float32(2)), init("declared_unread", np.float32(1))],
    )
    rewritten = check_rewrite(m, {"x": X, "cond": np.array(False)}, "basic", ["Relu", "If"])
    # The dead Mul's weight goes; one the model declares unread stays (the session checks it).
    assert [t.name for t in rewritten.graph.initializer] == ["declared_unread"]


# ------------------------------------------------------------------------------ simplify_casts


@pytest.mark.parametrize(
    "chain,expected",
    [
        ([F], []),  # float -> float
        ([TensorProto.DOUBLE, F], []),  # float -> double -> float: exact
        ([TensorProto.FLOAT16, F], ["Cast", "Cast"]),  # float16 rounds
        ([TensorProto.INT32, F], ["Cast", "Cast"]),  # truncates
    ],
)
def test_casts_to_the_same_type_and_lossless_round_trips_go(chain, expected):
    names = ["x"] + [f"c{i}" for i in range(len(chain) - 1)] + ["y"]
    nodes = [helper.make_node("Cast", [names[i]], [names[i + 1]], to=t) for i, t in enumerate(chain)]
    m = model(nodes + [helper.make_node("Relu", ["y"], ["out"])], [tensor("x", [2, 3, 4])], [tensor("out", None)])
    check_rewrite(m, {"x": X * 1000}, "basic", expected + ["Relu"])


def test_a_cast_pair_whose_middle_value_is_read_elsewhere_keeps_the_inner_cast():
    m = model(
        [
            helper.make_node("Cast", ["x"], ["d"], to=TensorProto.DOUBLE),
            helper.make_node("Cast", ["d"], ["y"], to=F),
        ],
        [tensor("x", [2, 3, 4])],
        [tensor("y", None), tensor("d", None, TensorProto.DOUBLE)],
    )
    # y is a graph output and x a graph input: y keeps its Cast (nothing can take its name).
    check_rewrite(m, {"x": X}, "basic", ["Cast", "Cast"])


# ----------------------------------------------------------- transposes, reshapes, squeezes


def test_transpose_pairs_compose_or_cancel():
    def two(p1, p2):
        return model(
            [
                helper.make_node("Transpose", ["x"], ["t"], perm=p1),
                helper.make_node("Transpose", ["t"], ["u"], perm=p2),
                helper.make_node("Relu", ["u"], ["y"]),
            ],
            [tensor("x", [2, 3, 4])],
            [tensor("y", None)],
        )

    check_rewrite(two([0, 2, 1], [0, 2, 1]), {"x": X}, "basic", ["Relu"])
    composed = check_rewrite(two([1, 0, 2], [0, 2, 1]), {"x": X}, "basic", ["Transpose", "Relu"])
    assert list(composed.graph.node[0].attribute[0].ints) == [1, 2, 0]


def test_a_transpose_whose_result_is_also_a_graph_output_is_kept():
    m = model(
        [
            helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
            helper.make_node("Transpose", ["t"], ["y"], perm=[0, 2, 1]),
        ],
        [tensor("x", [2, 3, 4])],
        [tensor("y", None), tensor("t", None)],
    )
    check_rewrite(m, {"x": X}, "basic", ["Transpose", "Transpose"])


def test_reshape_pairs_fold_unless_the_second_copies_a_dim():
    def two(second):
        return model(
            [
                helper.make_node("Reshape", ["x", "s1"], ["r"]),
                helper.make_node("Reshape", ["r", "s2"], ["u"]),
                helper.make_node("Relu", ["u"], ["y"]),
            ],
            [tensor("x", [2, 3, 4])],
            [tensor("y", None)],
            [init("s1", np.array([6, 4], np.int64)), init("s2", np.array(second, np.int64))],
        )

    check_rewrite(two([4, -1]), {"x": X}, "basic", ["Reshape", "Relu"])
    check_rewrite(two([0, 2, 2]), {"x": X}, "basic", ["Reshape", "Reshape", "Relu"])


@pytest.mark.parametrize(
    "first,second,axes1,axes2,cancels",
    [
        ("Unsqueeze", "Squeeze", [0, 2], [0, -3], True),  # -3 of rank 5 is 2
        ("Unsqueeze", "Squeeze", [0, 1], [1], False),
        ("Squeeze", "Unsqueeze", [1], [-2], True),  # x: [2, 1, 4]
    ],
)
def test_squeeze_unsqueeze_pairs_with_the_same_axes_cancel(first, second, axes1, axes2, cancels):
    x = X[:, :1, :] if first == "Squeeze" else X
    m = model(
        [
            helper.make_node(first, ["x", "a1"], ["s"]),
            helper.make_node(second, ["s", "a2"], ["u"]),
            helper.make_node("Relu", ["u"], ["y"]),
        ],
        [tensor("x", list(x.shape))],
        [tensor("y", None)],
        [init("a1", np.array(axes1, np.int64)), init("a2", np.array(axes2, np.int64))],
        opset=13,
    )
    check_rewrite(m, {"x": x}, "basic", ["Relu"] if cancels else [first, second, "Relu"])
