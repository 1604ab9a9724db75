"""InferenceSession API and bad input: every failure is a Python exception that says what
and where (these models need no kernel: the graph passes its input through)."""

import ml_dtypes
import numpy as np
import onnx
import onnx_light
import pytest
from onnx import TensorProto, helper


def passthrough_model(elem_type, shape):
    x = helper.make_tensor_value_info("x", elem_type, shape)
    return helper.make_model(helper.make_graph([], "passthrough", [x], [x]))


# Every ONNX element type crosses the boundary both ways, bit for bit.
ALL_TYPES = [
    (TensorProto.FLOAT, np.float32),
    (TensorProto.DOUBLE, np.float64),
    (TensorProto.FLOAT16, np.float16),
    (TensorProto.INT8, np.int8),
    (TensorProto.INT16, np.int16),
    (TensorProto.INT32, np.int32),
    (TensorProto.INT64, np.int64),
    (TensorProto.UINT8, np.uint8),
    (TensorProto.UINT16, np.uint16),
    (TensorProto.UINT32, np.uint32),
    (TensorProto.UINT64, np.uint64),
    (TensorProto.BOOL, np.bool_),
    (TensorProto.COMPLEX64, np.complex64),
    (TensorProto.COMPLEX128, np.complex128),
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16),
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
    (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
    (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
    (TensorProto.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu),
    (TensorProto.INT4, ml_dtypes.int4),
    (TensorProto.UINT4, ml_dtypes.uint4),
    (TensorProto.INT2, ml_dtypes.int2),
    (TensorProto.UINT2, ml_dtypes.uint2),
    (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn),
    (TensorProto.FLOAT6E2M3, ml_dtypes.float6_e2m3fn),
    (TensorProto.FLOAT6E3M2, ml_dtypes.float6_e3m2fn),
]


@pytest.mark.parametrize("elem_type,dtype", ALL_TYPES)
def test_every_element_type_round_trips(elem_type, dtype):
    session = onnx_light.InferenceSession(passthrough_model(elem_type, [2, None]))
    x = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
    (y,) = session.run(None, {"x": x})
    assert y.dtype == np.dtype(dtype)
    assert y.shape == (2, 3)
    assert y.tobytes() == x.tobytes()
    assert (
        session.get_inputs()[0].type
        == "tensor(" + helper.tensor_dtype_to_string(elem_type).split(".")[-1].lower() + ")"
    )


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,)])
@pytest.mark.parametrize(
    "elem_type,dtype",
    [(TensorProto.FLOAT, np.float32), (TensorProto.BOOL, np.bool_), (TensorProto.BFLOAT16, ml_dtypes.bfloat16)],
)
def test_scalars_and_empty_tensors_keep_their_shape(shape, elem_type, dtype):
    # Numpy-native types come back as arrays made natively, the others through the encoded
    # form: both keep 0-d and empty shapes.
    session = onnx_light.InferenceSession(passthrough_model(elem_type, list(shape)))
    x = np.ones(shape, dtype)
    (y,) = session.run(None, {"x": x})
    assert type(y) is np.ndarray and y.dtype == np.dtype(dtype) and y.shape == shape
    assert y.tobytes() == x.tobytes()


def test_strings_and_non_contiguous_arrays_round_trip():
    session = onnx_light.InferenceSession(passthrough_model(TensorProto.STRING, [2]))
    (y,) = session.run(["x"], {"x": np.array(["héllo", "wörld"], dtype=object)})
    assert y.tolist() == ["héllo", "wörld"]
    session = onnx_light.InferenceSession(passthrough_model(TensorProto.INT64, [3, 2]))
    x = np.arange(6, dtype=np.int64).reshape(2, 3).T
    (y,) = session.run(None, {"x": x})
    np.testing.assert_array_equal(y, x)


def test_read_only_and_sliced_feeds_are_read_where_they_are():
    # C-contiguous numpy-native feeds cross as the arrays themselves (borrowed); read-only
    # ones and contiguous slices of larger arrays included.
    session = onnx_light.InferenceSession(passthrough_model(TensorProto.FLOAT, [2, 3]))
    frozen = np.arange(6, dtype=np.float32).reshape(2, 3)
    frozen.flags.writeable = False
    np.testing.assert_array_equal(session.run(None, {"x": frozen})[0], frozen)
    big = np.arange(30, dtype=np.float32).reshape(10, 3)
    np.testing.assert_array_equal(session.run(None, {"x": big[4:6]})[0], big[4:6])


def test_outputs_are_copies_not_views_of_feeds():
    session = onnx_light.InferenceSession(passthrough_model(TensorProto.FLOAT, [2]))
    x = np.ones(2, np.float32)
    (y,) = session.run(None, {"x": x})
    y[0] = 5
    assert x[0] == 1


def test_computed_outputs_are_handed_over_without_a_copy_and_stay_valid():
    # A computed output's buffer goes to numpy as is: writable, owned by no one else, and
    # alive after the session and the next runs (which must not reuse it while it lives).
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 18])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 18])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [1 << 18])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"])],
        "add",
        [x],
        [y, w],
        [onnx.numpy_helper.from_array(np.full(1 << 18, 3, np.float32), "w")],
    )
    session = onnx_light.InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
    feed = np.arange(1 << 18, dtype=np.float32)
    first, initializer = session.run(None, {"x": feed})
    assert first.flags.writeable and first.ctypes.data % 64 == 0
    assert not np.shares_memory(first, feed)
    initializer[:] = -1  # a copy: the session's initializer is untouched
    for k in range(3):
        later, again = session.run(None, {"x": feed + k})
        assert not np.shares_memory(later, first)
        np.testing.assert_array_equal(later, 2 * (feed + k))
        np.testing.assert_array_equal(again, np.full(1 << 18, 3, np.float32))
    del session
    np.testing.assert_array_equal(first, 2 * feed)


def test_model_from_path_bytes_and_proto(tmp_path):
    model = passthrough_model(TensorProto.FLOAT, [1])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    for source in (model, model.SerializeToString(), str(path), path):
        session = onnx_light.InferenceSession(source, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=1))
        assert session.run(None, {"x": np.array([2.5], np.float32)})[0].tolist() == [2.5]
        assert session.get_providers() == ["CPUExecutionProvider"]
        assert [o.name for o in session.get_outputs()] == ["x"]


def test_cpu_execution_policy_is_validated():
    policy = onnx_light.CpuExecutionPolicy(num_threads=2, spin_microseconds=50)
    assert policy.num_threads == 2 and policy.spin_microseconds == 50
    with pytest.raises(ValueError, match="num_threads"):
        onnx_light.CpuExecutionPolicy(num_threads=-1)
    with pytest.raises(ValueError, match="spin_microseconds"):
        onnx_light.CpuExecutionPolicy(spin_microseconds=-5)


def test_onnxruntime_session_options_set_the_thread_count():
    # ORT's call shapes: sess_options by keyword or as the second positional argument.
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    model = passthrough_model(TensorProto.FLOAT, [2])
    for session in (
        onnx_light.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"]),
        onnx_light.InferenceSession(model, options),
    ):
        assert session.run(None, {"x": np.ones(2, np.float32)})[0].tolist() == [1, 1]
        assert session.get_cpu_execution().num_threads == 2
    options.intra_op_num_threads = 0  # ORT's "default"
    assert (
        onnx_light.InferenceSession(model, options).get_cpu_execution().num_threads
        == onnx_light.CpuExecutionPolicy().num_threads
    )
    with pytest.raises(TypeError, match="not both"):
        onnx_light.InferenceSession(model, onnx_light.CpuExecutionPolicy(), sess_options=options)


def test_malformed_bytes():
    with pytest.raises(onnx_light.InvalidArgument, match="not a serialized ONNX model"):
        onnx_light.InferenceSession(b"\x08\x07garbage\xff\xff\xff")
    with pytest.raises(onnx_light.InvalidArgument, match="no graph"):
        onnx_light.InferenceSession(b"")


def two_node_model(nodes, inputs=("x",)):
    vis = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in inputs]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    return helper.make_model(helper.make_graph(nodes, "g", vis, [out]))


def test_graph_with_a_cycle():
    model = two_node_model(
        [
            helper.make_node("Add", ["x", "b"], ["a"], name="first"),
            helper.make_node("Add", ["a", "x"], ["b"], name="second"),
            helper.make_node("Add", ["b", "x"], ["y"], name="last"),
        ]
    )
    with pytest.raises(onnx_light.InvalidArgument, match=r"cycle: .*'first'.*'second'"):
        onnx_light.InferenceSession(model)


def test_dangling_input():
    model = two_node_model([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")])
    with pytest.raises(ValueError, match="Add node 'adder': input 'ghost' dangles"):
        onnx_light.InferenceSession(model)


def test_unsupported_op():
    model = two_node_model([helper.make_node("NoSuchOperator", ["x"], ["y"], name="odd", domain="com.example")])
    model.opset_import.append(helper.make_opsetid("com.example", 3))
    with pytest.raises(
        NotImplementedError,
        match=r"NoSuchOperator node 'odd': no kernel implements NoSuchOperator "
        r"\(domain 'com.example', opset 3\)",
    ):
        onnx_light.InferenceSession(model)


def test_feed_errors_name_the_input_and_what_was_expected():
    session = onnx_light.InferenceSession(passthrough_model(TensorProto.FLOAT, [2, "batch"]))
    ok = np.zeros((2, 7), np.float32)
    with pytest.raises(ValueError, match=r"missing feed for input 'x' \(expected tensor\(float\)\[2,\?\]\)"):
        session.run(None, {})
    with pytest.raises(ValueError, match="feed 'z' is not an input of the model; its inputs are 'x'"):
        session.run(None, {"x": ok, "z": ok})
    with pytest.raises(ValueError, match=r"input 'x': expected tensor\(float\)\[2,\?\], got element type double"):
        session.run(None, {"x": ok.astype(np.float64)})
    with pytest.raises(ValueError, match="input 'x': expected .* got rank 3"):
        session.run(None, {"x": ok.reshape(2, 7, 1)})
    with pytest.raises(ValueError, match="input 'x': expected .* got dimension 0 = 3"):
        session.run(None, {"x": np.zeros((3, 7), np.float32)})
    with pytest.raises(ValueError, match="'nope' is not an output"):
        session.run(["nope"], {"x": ok})
    with pytest.raises(ValueError, match="has no ONNX element type"):
        session.run(None, {"x": np.zeros(2, dtype="datetime64[s]")})


def test_model_initializer_with_an_overflowing_shape():
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2**40, 2**40])
    graph = helper.make_graph(
        [],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        initializer=[huge],
    )
    with pytest.raises(
        onnx_light.InvalidArgument,
        match=r"tensor 'w' has shape \[1099511627776, 1099511627776\], "
        r"whose element count is negative or overflows int64",
    ):
        onnx_light.InferenceSession(helper.make_model(graph))


def test_model_initializer_without_its_data():
    short = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], float_data=[1.0, 2.0])
    graph = helper.make_graph(
        [],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        initializer=[short],
    )
    with pytest.raises(onnx_light.InvalidArgument, match=r"tensor 'w' \(shape \[4\]\) cannot be read"):
        onnx_light.InferenceSession(helper.make_model(graph))


def test_initializer_with_an_overflowing_shape():
    graph = onnx_light._native.Graph()
    huge = (onnx_light._values.element_type_of(np.float32), (2**40, 2**40), np.zeros(0, np.uint8))
    with pytest.raises(
        onnx_light.InvalidArgument,
        match=r"shape \[1099511627776,1099511627776\] has more elements than int64 can count",
    ):
        graph.add_initializer("w", huge)


def test_run_options():
    options = onnx_light.RunOptions()
    assert options.terminate is False
    options.timeout_seconds = 1.5
    assert options.timeout_seconds == 1.5
    with pytest.raises(ValueError, match="timeout_seconds"):
        options.timeout_seconds = -1
    options.terminate = True
    assert options.terminate is True


def test_events_tuning_report_and_memory():
    """Two Adds (elementwise family): node events per node, tuning values with their source;
    the second Add writes in place over t (its last use), so it allocates nothing."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    nodes = [
        helper.make_node("Add", ["x", "x"], ["t"], name="first"),
        helper.make_node("Add", ["t", "x"], ["y"], name="second"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=1))
    (y,), nodes, regions = session.run_with_events(None, {"x": np.arange(4, dtype=np.float32)})
    assert y.tolist() == [0, 3, 6, 9]
    assert [(e.op, e.node, e.allocations, e.bytes_allocated) for e in nodes] == [
        ("Add", "first", 1, 16),
        ("Add", "second", 0, 0),
    ]
    report = session.tuning_report()
    assert {r.node for r in report} == {"Add node 'first'", "Add node 'second'"}
    assert all(r.source for r in report)
    memory = session.memory()
    assert memory.allocations == 1 and memory.peak_bytes >= 16


def test_concurrent_runs_of_one_session():
    """run releases the GIL; runs from several threads share the session and its executor."""
    import concurrent.futures

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])
    nodes = [helper.make_node("Add", ["x", "x"], ["t"]), helper.make_node("Mul", ["t", "x"], ["y"])]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=2))

    def work(seed):
        values = np.random.default_rng(seed).standard_normal(64).astype(np.float32)
        for _ in range(50):
            (y,) = session.run(None, {"x": values})
            np.testing.assert_array_equal(y, (values + values) * values)
        return True

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))


def test_sequence_feeds_are_checked_against_the_declared_element_type():
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    session = onnx_light.InferenceSession(helper.make_model(helper.make_graph([], "g", [seq], [seq])))
    items = [np.ones(2, np.float32), np.zeros(3, np.float32)]
    out = session.run(None, {"s": items})[0]
    assert [a.tolist() for a in out] == [[1, 1], [0, 0, 0]]
    assert session.get_inputs()[0].type == "seq(tensor(float))"
    with pytest.raises(
        ValueError, match=r"input 's': expected sequence\(tensor\(float\)\), got a sequence holding int64\[2\]"
    ):
        session.run(None, {"s": [np.ones(2, np.int64)]})
    with pytest.raises(ValueError, match=r"input 's': expected sequence\(tensor\(float\)\), got float\[2\]"):
        session.run(None, {"s": np.ones(2, np.float32)})


def test_shape_inference_types_large_initializers_without_their_data_and_leaves_the_callers_model_alone():
    from onnx import numpy_helper

    w = np.random.default_rng(0).standard_normal((256, 128)).astype(np.float32)  # above the inference data limit
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Reshape", ["h", "shape"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([4, 64], np.int64), "shape")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    before = model.SerializeToString()
    session = onnx_light.InferenceSession(model)
    assert model.SerializeToString() == before
    types = {
        vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
        for vi in list(session._model.graph.value_info) + list(session._model.graph.output)
    }
    assert types["h"] == [2, 128]
    assert types["y"] == [4, 64]  # inferred from the small initializer's data
    assert [i.name for i in session.get_inputs()] == ["x"]
    x = np.ones((2, 256), np.float32)
    np.testing.assert_allclose(session.run(None, {"x": x})[0], (x @ w).reshape(4, 64), rtol=1e-5)


def _ml_model(nodes, inputs, outputs):
    model = helper.make_model(
        helper.make_graph(nodes, "ml", inputs, outputs),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
    )
    model.ir_version = 8
    return model


def test_maps_cross_the_boundary_as_onnx_runtime_gives_them():
    """A dict feeds a map input (converted to the declared key and value types); ZipMap's
    sequence of maps comes back as a list of dicts; type strings match ONNX Runtime's."""
    import onnxruntime as ort

    map_type = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    model = _ml_model(
        [
            helper.make_node("CastMap", ["m"], ["dense"], domain="ai.onnx.ml"),
            helper.make_node("ZipMap", ["dense"], ["z"], domain="ai.onnx.ml", classlabels_strings=["a", "b", "c"]),
        ],
        [helper.make_value_info("m", map_type)],
        [
            helper.make_value_info(
                "z",
                helper.make_sequence_type_proto(
                    helper.make_map_type_proto(
                        TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, None)
                    )
                ),
            )
        ],
    )
    feed = {"m": {7: 0.5, 2: 1, 4: 2.25}}  # int keys, mixed Python numbers
    ours = onnx_light.InferenceSession(model)
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = ours.run(None, feed)
    (expected,) = theirs.run(None, feed)
    assert got == expected == [{"a": 1.0, "b": 2.25, "c": 0.5}]
    assert [i.type for i in ours.get_inputs()] == [i.type for i in theirs.get_inputs()] == ["map(int64,tensor(float))"]
    assert [o.type for o in ours.get_outputs()] == [o.type for o in theirs.get_outputs()]
    with pytest.raises(onnx_light.InvalidArgument):
        ours.run(None, {"m": np.ones(3, np.float32)})  # a tensor where a map is declared


def test_region_events_say_where_a_regions_wall_time_went():
    """Each region reports who joined and its dispatch, first-join and end-wait times within its wall time."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 20])
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Add", ["x", "x"], ["y"])],
            "g",
            [x],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 20])],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=2))
    feeds = {"x": np.ones(1 << 20, dtype=np.float32)}
    regions = [r for _ in range(20) for r in session.run_with_events(None, feeds)[2]]
    assert regions and all(r.admitted_participants == 2 for r in regions)
    for r in regions:
        assert 1 <= r.joined_participants <= r.admitted_participants
        assert r.observed_participants <= r.joined_participants
        assert (r.first_join_ns >= 0) == (r.joined_participants > 1)
        assert 0 <= r.dispatch_ns and 0 <= r.end_wait_ns and r.dispatch_ns + r.end_wait_ns <= r.wall_ns
        assert r.first_join_ns <= r.wall_ns
