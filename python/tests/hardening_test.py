"""Hardening (issue 18): models ONNX rejects, sizes no machine can hold, geometry ONNX Runtime
refuses and timeouts too large to represent each end in a clear error (or, where the
standard allows the model, in the right answer), never in a hang, a crash or a silent
wrong answer."""

import numpy as np
import onnx
import onnx_light
import pytest
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def info(name, shape=None, elem_type=F):
    return helper.make_tensor_value_info(name, elem_type, shape)


def model(nodes, inputs, outputs, initializers=(), opset=21, extra_opsets=(), ir_version=None):
    m = helper.make_model(
        helper.make_graph(nodes, "g", inputs, outputs, list(initializers)),
        opset_imports=[helper.make_opsetid("", opset)] + list(extra_opsets),
    )
    if ir_version is not None:
        m.ir_version = ir_version
    return m


def relu_model(**kwargs):
    return model([helper.make_node("Relu", ["x"], ["y"], name="r")], [info("x", [2])], [info("y", [2])], **kwargs)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


X4 = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)


# ------------------------------------------------------------------ versions from the future


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(opset=999), "opset 999 of domain 'ai.onnx'; this runtime knows opsets 1 to"),
        (dict(opset=0), "opset 0 of domain 'ai.onnx'"),
        (dict(extra_opsets=[helper.make_opsetid("ai.onnx.ml", 99)]), "opset 99 of domain 'ai.onnx.ml'"),
        (dict(ir_version=99), f"IR version 99; this runtime knows IR versions up to {onnx.IR_VERSION}"),
    ],
    ids=["ai_onnx_999", "ai_onnx_0", "ai_onnx_ml_99", "ir_99"],
)
def test_versions_beyond_what_the_runtime_knows_are_rejected_naming_them(kwargs, message):
    with pytest.raises(onnx_light.InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")):
        onnx_light.InferenceSession(relu_model(**kwargs))


def test_the_newest_known_versions_still_load():
    newest = relu_model(opset=onnx.defs.onnx_opset_version(), ir_version=onnx.IR_VERSION)
    (y,) = onnx_light.InferenceSession(newest).run(None, {"x": np.array([-1, 2], np.float32)})
    np.testing.assert_array_equal(y, [0, 2])


def test_a_custom_domain_is_not_bounded_by_the_onnx_package():
    # Only domains the onnx package defines have a known range; a custom one reaches the
    # kernel lookup, which says NotImplemented for its op.
    m = relu_model(extra_opsets=[helper.make_opsetid("com.example", 1000)])
    onnx_light.InferenceSession(m)


# ------------------------------------------------------------------------- schema arity


@pytest.mark.parametrize(
    "node,message",
    [
        (
            helper.make_node("Relu", ["x", "x", "x"], ["y"], name="r3"),
            "Relu node 'r3' in graph 'g': 3 inputs given, Relu-14 takes 1",
        ),
        (
            helper.make_node("Relu", [], ["y"], name="r0"),
            "Relu node 'r0' in graph 'g': 0 inputs given, Relu-14 takes 1",
        ),
        (helper.make_node("Add", ["x"], ["y"]), "Add node #0 in graph 'g': 1 inputs given, Add-14 takes 2"),
        (helper.make_node("Relu", ["x"], ["y", "z"], name="two"), "2 outputs given, Relu-14 produces 1"),
        (helper.make_node("Clip", ["x", "", "", "x"], ["y"], name="c"), "4 inputs given, Clip-13 takes 1 to 3"),
        (
            helper.make_node("Gemm", ["x", ""], ["y"], name="gemm"),
            "Gemm node 'gemm' in graph 'g': required input 1 ('B') is empty",
        ),
    ],
    ids=[
        "relu_three_inputs",
        "relu_no_input",
        "add_one_input",
        "relu_two_outputs",
        "clip_four_inputs",
        "gemm_empty_required",
    ],
)
def test_input_and_output_counts_outside_the_schema_are_rejected(node, message):
    outputs = [info(name) for name in node.output]
    with pytest.raises(onnx_light.InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")):
        onnx_light.InferenceSession(model([node], [info("x", [2])], outputs))


def test_arity_is_checked_inside_subgraphs():
    body = helper.make_graph([helper.make_node("Relu", ["x", "x"], ["r"], name="inner")], "then_body", [], [info("r")])
    node = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)
    m = model([node], [info("c", [], TensorProto.BOOL), info("x", [2])], [info("y")])
    with pytest.raises(onnx_light.InvalidArgument, match="Relu node 'inner' in graph 'then_body': 2 inputs given"):
        onnx_light.InferenceSession(m)


def test_optional_inputs_left_empty_and_omitted_are_accepted():
    clip = helper.make_node("Clip", ["x", "", "hi"], ["y"])
    m = model([clip], [info("x", [3])], [info("y", [3])], [const("hi", np.float32(1))])
    (y,) = onnx_light.InferenceSession(m).run(None, {"x": np.array([-2, 0.5, 3], np.float32)})
    np.testing.assert_array_equal(y, [-2, 0.5, 1])


# ------------------------------------------------------------------------ duplicate names


def test_duplicate_initializers_are_rejected():
    m = model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        [info("x", [1])],
        [info("y", [1])],
        [const("w", np.ones(1, np.float32)), const("w", np.zeros(1, np.float32))],
    )
    with pytest.raises(onnx_light.InvalidArgument, match="graph 'g': initializer 'w' is defined twice"):
        onnx_light.InferenceSession(m)


def test_duplicate_graph_inputs_are_rejected():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [info("x", [1]), info("x", [1])], [info("y", [1])])
    with pytest.raises(onnx_light.InvalidArgument, match="graph 'g': input 'x' is declared twice"):
        onnx_light.InferenceSession(m)


@pytest.mark.parametrize(
    "nodes,message",
    [
        (
            [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Neg", ["x"], ["y"], name="b")],
            "'y' is defined twice: as output of Relu node 'a' in graph 'g' and as output of Neg node 'b' in graph 'g'",
        ),
        (
            [helper.make_node("Relu", ["x"], ["x"], name="self")],
            "'x' is defined twice: as a graph input and as output of Relu node 'self'",
        ),
        (
            [helper.make_node("Split", ["x"], ["y", "y"], name="s", num_outputs=2)],
            "'y' is defined twice: as output of Split node 's' in graph 'g' and as output of Split node 's'",
        ),
    ],
    ids=["two_nodes", "node_redefines_input", "one_node_twice"],
)
def test_a_node_output_defined_twice_is_rejected(nodes, message):
    with pytest.raises(onnx_light.InvalidArgument, match=message):
        onnx_light.InferenceSession(model(nodes, [info("x", [2])], [info("y")]))


# -------------------------------------------------------- sizes that cannot be allocated


def resize_model(scales=None, sizes=None):
    inputs = ["x", "", "scales" if scales is not None else "", "sizes" if sizes is not None else ""]
    inits = [const("scales", np.asarray(scales, np.float32))] if scales is not None else []
    inits += [const("sizes", np.asarray(sizes, np.int64))] if sizes is not None else []
    return model(
        [helper.make_node("Resize", inputs[: 4 if sizes is not None else 3], ["y"], name="big")],
        [info("x", [1, 1, 2, 2])],
        [info("y")],
        inits,
    )


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        (
            dict(scales=[1, 1, 1e9, 1e9]),
            onnx_light.InvalidArgument,
            "Resize node 'big'.*(more elements than int64|more bytes than can be addressed)",
        ),
        (
            dict(scales=[1, 1, 1, 1e30]),
            onnx_light.InvalidArgument,
            "Resize node 'big': output length .* on axis 3 is negative, not finite or beyond int64",
        ),
        (
            dict(sizes=[1, 1, 2**31, 2**31]),
            onnx_light.InvalidArgument,
            "Resize node 'big'.*(more elements than int64|more bytes than can be addressed)",
        ),
        (
            dict(scales=[1, 1, 1e9, 1]),
            onnx_light.ResourceExhausted,
            r"Resize node 'big'.*output 0 float\[1,1,2000000000,2\]: allocation of 16000000000 bytes would exceed",
        ),
        (
            dict(sizes=[1, 1, 2, 2**31]),
            onnx_light.ResourceExhausted,
            r"Resize node 'big'.*allocation of 17179869184 bytes would exceed the memory limit of 1073741824",
        ),
    ],
    ids=["scales_1e9_overflow", "scales_not_int64", "sizes_2p31_overflow", "scales_1e9_limit", "sizes_2p31_limit"],
)
def test_resize_to_a_size_that_cannot_be_held_fails_at_once(kwargs, error, message):
    session = onnx_light.InferenceSession(resize_model(**kwargs), memory_limit_bytes=1 << 30)
    with pytest.raises(error, match=message):
        session.run(None, {"x": X4})
    # The process lives on and so does the session's allocator: another model runs.
    assert onnx_light.InferenceSession(relu_model()).run(None, {"x": np.ones(2, np.float32)})[0].tolist() == [1, 1]


def test_resize_to_an_empty_output_builds_no_tables_for_its_huge_axis():
    # floor(2 * 0.1) = 0 rows, 2e12 columns: an empty tensor, not 2e12 interpolation taps.
    (y,) = onnx_light.InferenceSession(resize_model(scales=[1, 1, 0.1, 1e12])).run(None, {"x": X4})
    assert y.shape == (1, 1, 0, 2 * int(np.float32(1e12)))


@pytest.mark.parametrize(
    "kwargs", [dict(scales=[1, 1, 1, 1e9]), dict(sizes=[1, 1, 2, 2**31])], ids=["scales_1e9", "sizes_2p31"]
)
def test_the_default_memory_limit_stops_a_huge_resize_at_once(kwargs):
    # The default limit is the machine's memory: the 16 GB output may fit, but its tables
    # (at least 25 bytes per output index of each axis, 50 GB here) do not, and that is
    # known before any is built: these ran for minutes.
    session = onnx_light.InferenceSession(resize_model(**kwargs))
    assert session.memory_limit_bytes() > 0
    if session.memory_limit_bytes() > 64 << 30:
        pytest.skip("this machine has more than 64 GiB of memory: the tables would fit")
    with pytest.raises(onnx_light.ResourceExhausted, match=r"Resize node 'big': (interpolation tables|output 0)"):
        session.run(None, {"x": X4})


@pytest.mark.parametrize(
    "x,shape,expected",
    [
        (np.ones(0, np.float32), [2**40, 2**20, 0], (2**40, 2**20, 0)),
        (np.ones((3, 0), np.float32), [2**50, 1, 1], (2**50, 3, 0)),
    ],
    ids=["empty_input_huge_leading_axes", "empty_input_broadcast"],
)
def test_expand_of_an_empty_input_to_huge_axes_is_an_empty_tensor(x, shape, expected):
    m = model(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="e")],
        [info("x")],
        [info("y")],
        [const("shape", np.asarray(shape, np.int64))],
    )
    (y,) = onnx_light.InferenceSession(m).run(None, {"x": x})
    assert y.shape == expected and y.size == 0


def test_expand_to_a_huge_shape_is_resource_exhausted_naming_node_and_size():
    m = model(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="e")],
        [info("x")],
        [info("y")],
        [const("shape", np.asarray([2**40, 2**20], np.int64))],
    )
    with pytest.raises(onnx_light.ResourceExhausted, match=r"Expand node 'e'.*float\[1099511627776,1048576\]"):
        onnx_light.InferenceSession(m).run(None, {"x": np.ones(1, np.float32)})


@pytest.mark.parametrize("limit", [-1, 1.5, True, "1G"])
def test_memory_limit_must_be_a_non_negative_int(limit):
    with pytest.raises(ValueError, match="memory_limit_bytes"):
        onnx_light.InferenceSession(relu_model(), memory_limit_bytes=limit)


def test_a_memory_limit_fails_the_node_that_would_exceed_it_and_nothing_else():
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [info("x", [None])], [info("y")])
    session = onnx_light.InferenceSession(m, memory_limit_bytes=1 << 20)
    session.run(None, {"x": np.ones(1000, np.float32)})
    with pytest.raises(onnx_light.ResourceExhausted, match=r"Relu node 'r'.*float\[1000000\].*4000000 bytes"):
        session.run(None, {"x": np.ones(10**6, np.float32)})
    session.run(None, {"x": np.ones(1000, np.float32)})


def test_the_backend_passes_the_memory_limit_on():
    import onnx_light.backend

    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [info("x", [None])], [info("y", [None])])
    rep = onnx_light.backend.prepare(m, memory_limit_bytes=1 << 20)
    assert rep.session.memory_limit_bytes() == 1 << 20
    with pytest.raises(onnx_light.ResourceExhausted, match=r"Relu node 'r'.*4000000 bytes"):
        rep.run([np.ones(10**6, np.float32)])


# ----------------------------------------------------------------- convolution geometry


def test_conv_whose_kernel_is_larger_than_its_padded_input_is_rejected():
    m = model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="c", pads=[0, 0, 0, 0])],
        [info("x", [1, 1, 2, 2])],
        [info("y")],
        [const("w", np.ones((1, 1, 3, 3), np.float32))],
    )
    with pytest.raises(onnx_light.InvalidArgument, match="Conv node 'c'.*extent 3 > padded length 2"):
        onnx_light.InferenceSession(m).run(None, {"x": X4})


@pytest.mark.parametrize(
    "strides,output_padding",
    [([2, 2], [2, 2]), ([2, 2], [0, 3]), (None, [1, 1])],
    ids=["equal_to_stride", "above_stride", "default_stride"],
)
def test_conv_transpose_output_padding_not_below_stride_is_rejected_at_session_creation(strides, output_padding):
    attrs = dict(output_padding=output_padding)
    if strides:
        attrs["strides"] = strides
    m = model(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct", **attrs)],
        [info("x", [1, 1, 2, 2])],
        [info("y")],
        [const("w", np.ones((1, 1, 3, 3), np.float32))],
    )
    with pytest.raises(
        onnx_light.InvalidArgument,
        match=r"ConvTranspose node 'ct'.*output_padding .* must be >= 0 "
        r"and smaller than max\(stride, dilation\)",
    ):
        onnx_light.InferenceSession(m)


def test_conv_transpose_output_padding_below_stride_runs():
    m = model(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_padding=[1, 1])],
        [info("x", [1, 1, 2, 2])],
        [info("y")],
        [const("w", np.ones((1, 1, 3, 3), np.float32))],
    )
    (y,) = onnx_light.InferenceSession(m).run(None, {"x": X4})
    assert y.shape == (1, 1, 6, 6)


# ----------------------------------------------------------------------------- timeouts


@pytest.mark.parametrize("seconds", [1e10, 1e12, 1e300], ids=["1e10", "1e12", "1e300"])
def test_a_timeout_too_large_to_represent_means_no_deadline(seconds):
    options = onnx_light.RunOptions()
    options.timeout_seconds = seconds
    session = onnx_light.InferenceSession(relu_model())
    (y,) = session.run(None, {"x": np.array([-1, 1], np.float32)}, options)
    np.testing.assert_array_equal(y, [0, 1])


@pytest.mark.parametrize("seconds", [float("inf"), float("nan"), -1.0])
def test_a_timeout_that_is_no_duration_is_rejected(seconds):
    options = onnx_light.RunOptions()
    with pytest.raises(onnx_light.InvalidArgument, match="timeout_seconds must be a finite number >= 0"):
        options.timeout_seconds = seconds


# ------------------------------------------------------------------- found by fuzz_model


@pytest.mark.parametrize(
    "elem_type,message",
    [(0, "element type 0, which is undefined"), (99, "element type 99, which is not an ONNX element type")],
)
def test_a_graph_input_of_no_element_type_is_rejected(elem_type, message):
    # It reached NodeArg, whose type name lookup raised KeyError.
    m = model([helper.make_node("Relu", ["x"], ["y"])], [info("x", [2])], [info("y", [2])])
    m.graph.input[0].type.tensor_type.elem_type = elem_type
    with pytest.raises(onnx_light.InvalidArgument, match="graph 'g': input 'x' declares " + message):
        onnx_light.InferenceSession(m)


@pytest.mark.parametrize("elem_type", [0, 99])
def test_an_undefined_element_type_is_named_so_not_a_key_error(elem_type):
    assert onnx_light.NodeArg(helper.make_tensor_value_info("y", elem_type, [2])).type == "tensor(undefined)"


def test_a_name_that_is_not_utf8_is_rejected_naming_it():
    # Protobuf keeps undecodable bytes of a string field; they reached the binding, which
    # failed with RuntimeError: std::bad_cast.
    m = model([helper.make_node("Einsum", ["x", "x"], ["y"], equation="i,i->i")], [info("x", [2])], [info("y")])
    data = m.SerializeToString().replace(b"equation", b"equ\xf7tion")
    with pytest.raises(onnx_light.InvalidArgument, match=r"node #0: attribute name b'equ\\xf7tion' is not valid UTF-8"):
        onnx_light.InferenceSession(data)


def test_an_unnamed_node_is_named_once_by_its_index():
    # Used to read "Conv node #1: Conv node (unnamed): kernel ...".
    m = model(
        [helper.make_node("Identity", ["x"], ["t"]), helper.make_node("Conv", ["t", "w"], ["y"])],
        [info("x", [1, 1, 2, 2])],
        [info("y")],
        [const("w", np.ones((1, 1, 3, 3), np.float32))],
    )
    with pytest.raises(onnx_light.InvalidArgument) as error:
        onnx_light.InferenceSession(m, graph_optimizations=False).run(None, {"x": X4})
    assert str(error.value).startswith("Conv node #1: kernel [3,3]"), str(error.value)
    assert "unnamed" not in str(error.value)


@pytest.mark.parametrize(
    "equation,message",
    [
        ("bij<,bjk->bik", "unexpected character '<' in einsum term 'bij<'"),
        ("bij,bjk-->bik", "unexpected character '-' in einsum term 'bjk-'"),
        ("ij,jk->i->k", "einsum equation 'ij,jk->i->k' has more than one '->'"),
    ],
    ids=["bad_character_in_an_input_term", "double_dash", "two_arrows"],
)
def test_a_malformed_einsum_equation_is_rejected_before_shape_inference(equation, message):
    # onnx's shape inference never returns for the first two (the session hung at creation).
    m = model(
        [helper.make_node("Einsum", ["x", "y"], ["z"], name="e", equation=equation)],
        [info("x", [5, 2, 3]), info("y", [5, 3, 4])],
        [info("z")],
        opset=12,
    )
    with pytest.raises(onnx_light.InvalidArgument, match="Einsum node 'e' in graph 'g': " + message):
        onnx_light.InferenceSession(m)
