"""Native model loading (native/loader, onnx_light._model.load_model_and_weights): the large
weights of a model given as a path or bytes stay native (never decoded through Python),
external data resolves inside the model's folder only, and sessions built this way compute
what sessions built from the same model as a ModelProto compute, pickled or not."""

import os
import pickle
import re
import subprocess
import sys

import numpy as np
import onnx
import onnx_light
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_light import _model

HIDDEN = 160  # 160 x 160 = 25,600 elements: above the 16,384-element bound, held natively


def mlp(rng, layers=2, with_bn=False):
    """x[1, HIDDEN] through MatMul+Relu layers (and a Conv+BatchNormalization tail)."""
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        inits.append(numpy_helper.from_array(rng.standard_normal((HIDDEN, HIDDEN), dtype=np.float32) * 0.1, f"w{i}"))
        inits.append(numpy_helper.from_array(rng.standard_normal(HIDDEN, dtype=np.float32), f"b{i}"))
        nodes += [
            helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
            helper.make_node("Relu", [f"a{i}"], [f"r{i}"]),
        ]
        x = f"r{i}"
    if with_bn:  # [1, 160] -> [1, 160, 1, 1] -> Conv 1x1 (160 -> 160: 25,600 weights) -> BN
        inits.append(numpy_helper.from_array(np.array([1, HIDDEN, 1, 1], dtype=np.int64), "shape4"))
        inits.append(
            numpy_helper.from_array(rng.standard_normal((HIDDEN, HIDDEN, 1, 1), dtype=np.float32) * 0.1, "conv_w")
        )
        for name, values in (
            ("scale", rng.uniform(0.5, 2, HIDDEN)),
            ("shift", rng.standard_normal(HIDDEN)),
            ("mean", rng.standard_normal(HIDDEN)),
            ("var", rng.uniform(0.1, 3, HIDDEN)),
        ):
            inits.append(numpy_helper.from_array(values.astype(np.float32), name))
        nodes += [
            helper.make_node("Reshape", [x, "shape4"], ["r4"]),
            helper.make_node("Conv", ["r4", "conv_w"], ["c"]),
            helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["bn"]),
        ]
        x = "bn"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, HIDDEN])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def feeds(rng):
    return {"x": rng.standard_normal((1, HIDDEN), dtype=np.float32)}


def test_large_weights_of_a_path_stay_native_and_small_ones_go_through_python(tmp_path, rng):
    model = mlp(rng)
    path = tmp_path / "mlp.onnx"
    onnx.save(model, path)
    proto, weights = _model.load_model_and_weights(str(path))
    assert sorted(weights.names()) == ["w0", "w1"]
    by_name = {t.name: t for t in proto.graph.initializer}
    assert not by_name["w0"].raw_data and list(by_name["w0"].dims) == [HIDDEN, HIDDEN]
    assert by_name["b0"].raw_data  # small: in the model, for shape inference
    np.testing.assert_array_equal(
        _model.weight_array(by_name["w0"], weights), numpy_helper.to_array(model.graph.initializer[0])
    )
    # The self-contained model (pickling's form) is the original one again.
    full = _model.with_weights(proto, weights)
    assert {t.name: t.raw_data for t in full.graph.initializer} == {t.name: t.raw_data for t in model.graph.initializer}


@pytest.mark.parametrize("form", ["path", "bytes", "external_data"])
def test_sessions_from_paths_bytes_and_external_data_match_the_model_proto(tmp_path, rng, form):
    model = mlp(rng, layers=3, with_bn=True)
    x = feeds(rng)
    expected = onnx_light.InferenceSession(model).run(None, x)[0]  # before saving: it moves data out
    if form == "path":
        source = str(tmp_path / "mlp.onnx")
        onnx.save(model, source)
    elif form == "bytes":
        source = model.SerializeToString()
    else:
        source = str(tmp_path / "mlp.onnx")
        onnx.save(model, source, save_as_external_data=True, location="weights.bin", size_threshold=1024)
    for graph_optimizations in (True, False):  # the BN fold reads conv_w natively
        session = onnx_light.InferenceSession(source, graph_optimizations=graph_optimizations)
        assert session._weights is not None and "conv_w" in session._weights
        np.testing.assert_allclose(session.run(None, x)[0], expected, rtol=1e-5, atol=1e-5)
        restored = pickle.loads(pickle.dumps(session))
        np.testing.assert_array_equal(restored.run(None, x)[0], session.run(None, x)[0])


def test_external_data_outside_the_model_folder_is_refused(tmp_path, rng):
    model = mlp(rng, layers=1)
    inside = tmp_path / "inside"
    inside.mkdir()
    onnx.save(model, inside / "mlp.onnx", save_as_external_data=True, location="weights.bin", size_threshold=1024)
    # Point w0 one folder up, where a copy of the weights exists.
    os.rename(inside / "weights.bin", tmp_path / "weights.bin")
    saved = onnx.load(inside / "mlp.onnx", load_external_data=False)
    for t in saved.graph.initializer:
        for entry in t.external_data:
            if entry.key == "location":
                entry.value = "../weights.bin"
    onnx.save(saved, inside / "mlp.onnx")
    with pytest.raises(onnx_light.InvalidArgument, match=r"'\.\./weights\.bin', which does not exist inside"):
        onnx_light.InferenceSession(str(inside / "mlp.onnx"))


def test_malformed_files_and_bytes_are_invalid_arguments(tmp_path, rng):
    path = tmp_path / "broken.onnx"
    data = mlp(rng, layers=1).SerializeToString()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(onnx_light.InvalidArgument, match="is not an ONNX model"):
        onnx_light.InferenceSession(str(path))
    with pytest.raises(onnx_light.InvalidArgument, match="not a serialized ONNX model"):
        onnx_light.InferenceSession(data[: len(data) // 2])
    with pytest.raises(FileNotFoundError):
        onnx_light.InferenceSession(str(tmp_path / "absent.onnx"))


def _matrix_bytes(model):
    """Bytes of the model's 2-D initializers (the MatMul weights)."""
    return sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer if len(t.dims) == 2)


@pytest.mark.parametrize("form", ["path", "bytes", "external_data"])
def test_the_session_releases_the_weights_its_kernels_absorbed(tmp_path, rng, form):
    """Every MatMul packs its constant weights at creation and absorbs them: the session
    releases them, so the constant bytes it keeps (initializers left plus packed forms) are
    about the model's size, not twice it. Packing pads each weight's columns to whole
    microkernel panels (160 columns: at most 192, 1.2x)."""
    model = mlp(rng, layers=3)
    weights = _matrix_bytes(model)
    assert weights == 3 * HIDDEN * HIDDEN * 4
    x = feeds(rng)
    expected = onnx_light.InferenceSession(model, graph_optimizations=False).run(None, x)[0]  # saving moves data
    source = str(tmp_path / "mlp.onnx")
    if form == "bytes":
        source = model.SerializeToString()
    else:
        onnx.save(model, source, save_as_external_data=form == "external_data", location="weights.bin")
    session = onnx_light.InferenceSession(source, graph_optimizations=False)
    kept = session.constant_memory()
    assert kept.released_initializers == 3
    assert kept.released_bytes == weights
    assert kept.retained_bytes == 3 * HIDDEN * 4  # the biases, read by Add at run time
    assert weights <= kept.absorbed_held_bytes <= 1.2 * weights
    # Weights read from files are the session's alone: each MatMul consumes its weight
    # (its pages go back while it is packed). Weights borrowed from a caller's bytes are
    # never consumed (only the loader's aligned copies of misaligned payloads may be), and
    # the bytes are left as they were.
    if form == "bytes":
        assert source == model.SerializeToString()
    else:
        assert kept.consumed_initializers == 3
    np.testing.assert_array_equal(session.run(None, x)[0], expected)
    with pytest.raises(onnx_light.InvalidArgument, match="was released"):
        session._weights.bytes_view("w0")


def _convs(rng):
    """Conv 32 -> 64 (3x3, pads 1) then Conv 64 -> 288 (1x1) + Relu: weights of 73,728 and
    73,728 bytes (above the bound under which Python holds a weight; whole pages), packed at
    creation in both layouts (the implicit GEMM's channel blocks where AVX2 is there, else
    GEMM panels; GEMM panels for the 1x1)."""
    w1 = rng.standard_normal((64, 32, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((288, 64, 1, 1)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w1"], ["h"], pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["h", "w2"], ["c"]),
            helper.make_node("Relu", ["c"], ["y"]),
        ],
        "convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("graph_optimizations", [False, True])  # True: Conv + Relu run as FusedConv
def test_convs_from_files_consume_the_weights_they_pack(tmp_path, rng, graph_optimizations):
    """Conv and FusedConv consume their constant weights (pages released while packed) when
    the session owns them, and compute the bits of a session that borrows the caller's bytes
    (never consumed)."""
    model = _convs(rng)
    data = model.SerializeToString()
    x = {"x": rng.standard_normal((1, 32, 10, 10)).astype(np.float32)}
    borrowed = onnx_light.InferenceSession(data, graph_optimizations=graph_optimizations)
    source = str(tmp_path / "convs.onnx")
    onnx.save(model, source)
    session = onnx_light.InferenceSession(source, graph_optimizations=graph_optimizations)
    kept = session.constant_memory()
    assert kept.consumed_initializers == 2
    assert kept.released_initializers == 2
    assert data == model.SerializeToString()
    np.testing.assert_array_equal(session.run(None, x)[0], borrowed.run(None, x)[0])


def test_a_weight_also_read_at_run_time_is_kept(rng):
    """w0 feeds a MatMul (which absorbs it) and an Add that reads it at run time: kept."""
    model = mlp(rng, layers=1)
    model.graph.node.append(helper.make_node("Add", ["w0", "w0"], ["doubled"]))
    model.graph.output.append(helper.make_tensor_value_info("doubled", TensorProto.FLOAT, None))
    session = onnx_light.InferenceSession(model.SerializeToString(), graph_optimizations=False)
    kept = session.constant_memory()
    assert kept.released_initializers == 0
    assert kept.retained_bytes == (HIDDEN * HIDDEN + HIDDEN) * 4
    w0 = numpy_helper.to_array(model.graph.initializer[0])
    np.testing.assert_array_equal(session.run(["doubled"], feeds(rng))[0], w0 + w0)


@pytest.mark.parametrize("form", ["path", "bytes", "external_data"])
def test_a_pickled_session_whose_weights_were_released_round_trips(tmp_path, rng, form):
    """Pickling re-reads the weights from the model's path or bytes (the session holds them
    packed only) and rewrites the model the same way: the restored session computes the
    same bits."""
    model = mlp(rng, layers=3, with_bn=True)
    x = feeds(rng)
    expected = onnx_light.InferenceSession(model).run(None, x)[0]  # before saving: it moves data out
    source = str(tmp_path / "mlp.onnx")
    if form == "bytes":
        source = model.SerializeToString()
    else:
        onnx.save(model, source, save_as_external_data=form == "external_data", location="weights.bin")
    session = onnx_light.InferenceSession(source)
    assert session.constant_memory().released_initializers >= 3
    restored = pickle.loads(pickle.dumps(session))
    assert restored.constant_memory().released_initializers == session.constant_memory().released_initializers
    np.testing.assert_array_equal(restored.run(None, x)[0], session.run(None, x)[0])
    np.testing.assert_allclose(restored.run(None, x)[0], expected, rtol=1e-5, atol=1e-5)


def _save(model, folder, form):
    """model saved as folder/mlp.onnx (its weights in folder/weights.bin for external_data);
    the model's path."""
    os.makedirs(folder, exist_ok=True)
    path = str(folder / "mlp.onnx")
    if os.path.exists(folder / "weights.bin"):
        os.remove(folder / "weights.bin")  # onnx.save appends to an external data file that exists
    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # saving as external data moves the data out of the model saved
    onnx.save(copy, path, save_as_external_data=form == "external_data", location="weights.bin")
    return path


def _other_weights(model, rng):
    """model with every 2-D weight replaced by other values of the same shape: saved, the
    files keep their sizes byte for byte."""
    other = onnx.ModelProto()
    other.CopyFrom(model)
    for t in other.graph.initializer:
        if len(t.dims) == 2:
            t.CopyFrom(numpy_helper.from_array(rng.standard_normal(tuple(t.dims), dtype=np.float32), t.name))
    return other


@pytest.fixture(params=["fingerprinted", "described"])
def recency(request, monkeypatch):
    """How the session tells its files apart from later versions: a file written just now
    is fingerprinted (forced here for every file); with no recency margin it counts as old
    and is described by its identity and times only (the common case of a model exported
    long before the session loads it)."""
    # Both forced: the default margin (50 ms) is shorter than some of these tests take.
    monkeypatch.setattr(_model, "_HASH_FILES_NEWER_THAN_NS", -1 if request.param == "fingerprinted" else 0)
    return request.param


@pytest.mark.parametrize("form", ["path", "external_data"])
def test_a_pickle_carries_the_model_so_its_files_may_change_or_go_afterwards(tmp_path, rng, form, recency):
    """The pickle holds every byte the session was created from: re-exporting other weights
    to the same files, then deleting them, changes nothing for the unpickled session."""
    model = mlp(rng, layers=2)
    x = feeds(rng)
    path = _save(model, tmp_path / "model", form)
    session = onnx_light.InferenceSession(path)
    expected = session.run(None, x)[0]
    blob = pickle.dumps(session)
    _save(_other_weights(model, rng), tmp_path / "model", form)
    other = onnx_light.InferenceSession(path).run(None, x)[0]
    assert not np.allclose(other, expected)  # the re-export does change what a new session computes
    np.testing.assert_array_equal(pickle.loads(blob).run(None, x)[0], expected)
    for name in os.listdir(tmp_path / "model"):
        os.remove(tmp_path / "model" / name)
    np.testing.assert_array_equal(pickle.loads(blob).run(None, x)[0], expected)


@pytest.mark.parametrize("form", ["path", "external_data"])
@pytest.mark.parametrize("change", ["other_weights_same_size", "smaller_model", "model_deleted", "weights_deleted"])
def test_pickling_after_the_files_changed_refuses_naming_the_file(tmp_path, rng, form, change, recency):
    """The session holds its weights packed only: pickling reads the model again, and a file
    that no longer holds what the session was created from (same size, other bytes
    included) is a PicklingError naming it, never a pickle of other weights. The session
    itself runs on, unchanged."""
    model = mlp(rng, layers=2)
    x = feeds(rng)
    path = _save(model, tmp_path / "model", form)
    session = onnx_light.InferenceSession(path)
    assert all((f[6] is None) == (recency == "described") for f in session._source_files)
    expected = session.run(None, x)[0]
    # The file named: the first that differs, in the order the model is read (model file first).
    # A re-export writes the model file again with equal bytes: told apart by its times only.
    weights_changed = form == "external_data" and (
        change == "weights_deleted" or (change == "other_weights_same_size" and recency == "fingerprinted")
    )
    changed = str(tmp_path / "model" / "weights.bin") if weights_changed else path
    if change == "other_weights_same_size":
        sizes = {name: os.path.getsize(tmp_path / "model" / name) for name in os.listdir(tmp_path / "model")}
        _save(_other_weights(model, rng), tmp_path / "model", form)
        assert sizes == {name: os.path.getsize(tmp_path / "model" / name) for name in os.listdir(tmp_path / "model")}
    elif change == "smaller_model":
        _save(mlp(rng, layers=1), tmp_path / "model", form)
    elif change == "model_deleted":
        os.remove(path)
    elif form == "path":
        pytest.skip("no weights file: the model file holds them")
    else:
        os.remove(changed)
    with pytest.raises(pickle.PicklingError, match=re.escape(os.path.basename(changed))):
        pickle.dumps(session)
    np.testing.assert_array_equal(session.run(None, x)[0], expected)


@pytest.mark.parametrize("form", ["path", "external_data"])
def test_an_identical_re_export_pickles_when_fingerprinted_and_is_refused_when_described(tmp_path, rng, form, recency):
    """A fingerprinted file is checked by its bytes: the same model saved again (a new file
    at the same path) still pickles. An old file, whose bytes the session did not read twice,
    is checked by its identity and times: any rewrite is refused, equal bytes or not."""
    model = mlp(rng, layers=2)
    path = _save(model, tmp_path / "model", form)
    session = onnx_light.InferenceSession(path)
    os.remove(path)
    _save(model, tmp_path / "model", form)
    x = feeds(rng)
    if recency == "described":
        with pytest.raises(pickle.PicklingError, match="mlp.onnx.* was written or replaced"):
            pickle.dumps(session)
        return
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(session)).run(None, x)[0], session.run(None, x)[0])


def test_a_relative_path_pickles_after_the_working_directory_changed(tmp_path, rng, monkeypatch, recency):
    model = mlp(rng, layers=2)
    _save(model, tmp_path / "model", "external_data")
    monkeypatch.chdir(tmp_path)
    session = onnx_light.InferenceSession(os.path.join("model", "mlp.onnx"))
    monkeypatch.chdir(tmp_path / "model")
    x = feeds(rng)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(session)).run(None, x)[0], session.run(None, x)[0])


def test_a_session_from_a_bytearray_pickles_the_bytes_it_was_created_from(rng):
    """A bytearray or memoryview may change after the session is created: the session keeps
    its own copy of the bytes, and pickles those."""
    model = mlp(rng, layers=2)
    x = feeds(rng)
    expected = onnx_light.InferenceSession(model).run(None, x)[0]
    for buffer in (bytearray(model.SerializeToString()), memoryview(bytearray(model.SerializeToString()))):
        session = onnx_light.InferenceSession(buffer)
        buffer[:] = _other_weights(model, rng).SerializeToString()  # same size: reused in place
        np.testing.assert_allclose(pickle.loads(pickle.dumps(session)).run(None, x)[0], expected, rtol=1e-5, atol=1e-5)


def test_the_loader_lists_the_files_it_read_with_their_sizes_and_fingerprints(tmp_path, rng):
    """LoadedModel.source_files: the model file, then its external data file; equal bytes give
    equal fingerprints, one changed weight another."""
    model = mlp(rng, layers=2)
    path = _save(model, tmp_path / "model", "external_data")
    sources = []
    _model.load_model_and_weights(path, sources)
    weights_file = os.path.realpath(tmp_path / "model" / "weights.bin")
    described = []
    for file in (path, weights_file):
        st = os.stat(file)
        described.append((file, st.st_size, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns))
    assert [f[:6] for f in sources] == described
    assert all(f[6] is not None for f in sources)  # written just now: fingerprinted
    again = []
    _model.load_model_and_weights(path, again)
    assert again == sources
    data = bytearray(open(weights_file, "rb").read())
    data[12345] ^= 1
    open(weights_file, "wb").write(data)
    changed = []
    _model.load_model_and_weights(path, changed)
    assert changed[0] == sources[0] and changed[1][1] == sources[1][1] and changed[1][6] != sources[1][6]


def test_the_optimized_model_file_keeps_the_weights_the_session_released(tmp_path, rng):
    model = mlp(rng, layers=2)
    source = str(tmp_path / "mlp.onnx")
    onnx.save(model, source)
    saved = str(tmp_path / "optimized.onnx")
    session = onnx_light.InferenceSession(source, graph_optimizations=False, optimized_model_filepath=saved)
    assert session.constant_memory().released_initializers == 2
    written = {t.name: numpy_helper.to_array(t) for t in onnx.load(saved).graph.initializer}
    for t in model.graph.initializer:
        np.testing.assert_array_equal(written[t.name], numpy_helper.to_array(t))
    x = feeds(rng)
    np.testing.assert_array_equal(onnx_light.InferenceSession(saved).run(None, x)[0], session.run(None, x)[0])


# One session created in a fresh process from argv[1]: prints the peak resident growth
# (KiB) that creation caused (VmHWM reset to VmRSS just before it, imports done).
_PEAK_RSS_CHILD = r"""
import sys
import onnx_light

def status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field))

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status_kib("VmRSS:")
session = onnx_light.InferenceSession(sys.argv[1], graph_optimizations=False)
assert session.constant_memory().released_initializers == int(sys.argv[2])
print(status_kib("VmHWM:") - before)
"""


@pytest.mark.parametrize("form", ["path", "external_data"])
def test_creation_holds_each_weight_once_at_its_peak(tmp_path, form):
    """Sixteen 4 MiB MatMul weights (1,024 columns: whole microkernel panels, so packing adds
    no padding) from a path or from an external data file. While the session is created,
    each weight is read (parsed or mapped) and packed, and released once packed: the mapped
    pages of a released external range are given back at once, not when the whole file is
    unmapped, so the peak holds every packed weight plus the weights not yet packed, about
    1.0-1.1x the weights; holding the mapped file and the packed copies together is 2x.
    1.5x leaves room for what Python allocates meanwhile (skeleton, shape inference)."""
    layers, width = 16, 1024
    rng = np.random.default_rng(3)
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        inits.append(numpy_helper.from_array(rng.standard_normal((width, width), dtype=np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]))
        x = f"m{i}"
    graph = helper.make_graph(
        nodes,
        "wide",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, width])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    weights_kib = layers * width * width * 4 // 1024
    os.makedirs(tmp_path / "model")
    path = str(tmp_path / "model" / "wide.onnx")
    onnx.save(model, path, save_as_external_data=form == "external_data", location="weights.bin")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS_CHILD, path, str(layers)], check=True, capture_output=True, text=True, env=env
    )
    peak_kib = int(out.stdout.split()[-1])
    assert weights_kib <= peak_kib <= 1.5 * weights_kib, f"peak growth {peak_kib} KiB for {weights_kib} KiB of weights"


def test_packed_recurrent_and_integer_weights_are_counted_where_they_are_held():
    """constant_memory counts what absorbing kernels hold in their weights' place: an LSTM
    keeps W and R each reordered and packed (R also as its step's blocks and panels), so at
    least twice their bytes; MatMulInteger keeps B packed (16-bit pairs or byte quads,
    plus column sums), at least its K x N bytes. Both were counted short: R's packed forms
    and the integer panels as nothing."""
    rng = np.random.default_rng(5)
    hidden, features = 32, 24
    w = rng.standard_normal((1, 4 * hidden, features), dtype=np.float32)
    r = rng.standard_normal((1, 4 * hidden, hidden), dtype=np.float32)
    lstm = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R"], ["", "y_h"], hidden_size=hidden)],
        "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1, features])],
        [helper.make_tensor_value_info("y_h", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")],
    )
    session = onnx_light.InferenceSession(
        helper.make_model(lstm, opset_imports=[helper.make_opsetid("", 21)]), graph_optimizations=False
    )
    kept = session.constant_memory()
    assert kept.released_initializers == 2
    assert kept.absorbed_held_bytes >= 2 * (w.nbytes + r.nbytes)

    k, n = 192, 160
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    matmul = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "B"], ["y"])],
        "matmul_integer",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [2, k])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        initializer=[numpy_helper.from_array(b, "B")],
    )
    session = onnx_light.InferenceSession(
        helper.make_model(matmul, opset_imports=[helper.make_opsetid("", 21)]), graph_optimizations=False
    )
    kept = session.constant_memory()
    assert kept.released_initializers == 1
    assert kept.absorbed_held_bytes >= b.nbytes
    a = rng.integers(0, 256, (2, k), dtype=np.uint8)
    np.testing.assert_array_equal(session.run(None, {"a": a})[0], a.astype(np.int32) @ b.astype(np.int32))


def test_immutable_bytes_are_borrowed_and_kept_alive_while_a_weight_needs_them(rng):
    """From bytes, the large weights are read in place (the model is not copied): the weights
    hold the bytes object, and let it go with the last of them; a bytearray, which its owner
    may change, is copied."""
    model = mlp(rng)
    data = model.SerializeToString()
    before = sys.getrefcount(data)
    proto, weights = _model.load_model_and_weights(data)
    assert sorted(weights.names()) == ["w0", "w1"]
    assert sys.getrefcount(data) > before
    by_name = {t.name: t for t in proto.graph.initializer}
    np.testing.assert_array_equal(
        _model.weight_array(by_name["w1"], weights), numpy_helper.to_array(model.graph.initializer[2])
    )
    del weights
    assert sys.getrefcount(data) == before
    mutable = bytearray(data)
    _, copied = _model.load_model_and_weights(mutable)
    mutable[:] = b"\0" * len(mutable)  # the caller reuses its buffer: the weights are unchanged
    np.testing.assert_array_equal(
        _model.weight_array(by_name["w1"], copied), numpy_helper.to_array(model.graph.initializer[2])
    )


def test_the_constant_page_policy_is_selectable_by_name():
    from onnx_light import _native

    before = _native.constant_page_policy()
    try:
        for name in ("huge", "system", "small", "small+prefault", "huge+prefault", "system+prefault"):
            _native.set_constant_page_policy(name)
            assert _native.constant_page_policy() == name
        with pytest.raises(_native.InvalidArgument, match="page policy 'tiny'"):
            _native.set_constant_page_policy("tiny")
    finally:
        _native.set_constant_page_policy(before)


_POLICY_CHILD = r"""
from onnx_light import _native
print(_native.constant_page_policy())
"""


@pytest.mark.parametrize("value,expected", [("", "huge"), ("small+prefault", "small+prefault"), ("bogus", "huge")])
def test_the_environment_sets_the_constant_page_policy_when_the_extension_loads(value, expected):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), ONNX_LIGHT_CONSTANT_PAGES=value)
    out = subprocess.run([sys.executable, "-c", _POLICY_CHILD], check=True, capture_output=True, text=True, env=env)
    assert out.stdout.split()[-1] == expected
    if value == "bogus":
        assert "ONNX_LIGHT_CONSTANT_PAGES: page policy 'bogus'" in out.stderr


_OVERWRITE_CHILD = r"""
import os
import shutil
import sys

import numpy as np
import onnx
import onnx_light
from onnx import TensorProto, helper, numpy_helper

path, form, replacement = sys.argv[1:]

def lookup_model(seed, rows):
    # A Gather over a [rows, 64] table and an Add of a [1, 32768] constant: neither kernel
    # absorbs its constant, so the session reads both from the loaded weights at every run.
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((rows, 64), dtype=np.float32)
    bias = rng.standard_normal((1, 32768), dtype=np.float32)
    # Inline payloads are borrowed from the file where 4-byte aligned (else copied): the
    # model's doc string and the bias's name move them until both are.
    for pad in range(16):
        bias_name = "b" * (1 + pad // 4)
        graph = helper.make_graph(
            [helper.make_node("Gather", ["table", "ids"], ["rows"]), helper.make_node("Add", ["x", bias_name], ["y"])],
            "lookup",
            [
                helper.make_tensor_value_info("ids", TensorProto.INT64, [3]),
                helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32768]),
            ],
            [
                helper.make_tensor_value_info("rows", TensorProto.FLOAT, [3, 64]),
                helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32768]),
            ],
            initializer=[numpy_helper.from_array(table, "table"), numpy_helper.from_array(bias, bias_name)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], doc_string="d" * (pad % 4))
        data = model.SerializeToString()
        if data.find(table.tobytes()) % 4 == 0 and data.find(bias.tobytes()) % 4 == 0:
            return model, table, bias
    raise AssertionError("no padding aligns both payloads")

def save(model, model_path):
    external = form == "external_data"
    onnx.save(model, model_path, save_as_external_data=external, location="weights.bin", size_threshold=0)

model, table, bias = lookup_model(1, 4096)
save(model, path)
session = onnx_light.InferenceSession(path)
kept = session.constant_memory()
assert kept.released_initializers == 0 and kept.retained_bytes >= table.nbytes + bias.nbytes, kept
# Another model exported to the same path (and external data file), each file opened with
# "wb" (O_TRUNC in place, as a re-export does): much smaller (the old pages are past its
# end), or of the same size with other values (the old pages now hold the new bytes).
folder = os.path.dirname(path)
os.makedirs(os.path.join(folder, "next"))
save(lookup_model(2, 16 if replacement == "smaller" else 4096)[0], os.path.join(folder, "next", "model.onnx"))
shutil.copyfile(os.path.join(folder, "next", "model.onnx"), path)
if form == "external_data":
    shutil.copyfile(os.path.join(folder, "next", "weights.bin"), os.path.join(folder, "weights.bin"))
ids = np.array([4095, 0, 1234], dtype=np.int64)
x = np.random.default_rng(3).standard_normal((1, 32768), dtype=np.float32)
for _ in range(2):
    rows, y = session.run(None, {"ids": ids, "x": x})
    np.testing.assert_array_equal(rows, table[ids])
    np.testing.assert_array_equal(y, x + bias)
print("unchanged")
"""


@pytest.mark.parametrize("replacement", ["smaller", "same_size"])
@pytest.mark.parametrize("form", ["path", "external_data"])
def test_a_live_session_keeps_its_weights_when_the_model_file_is_overwritten(tmp_path, form, replacement):
    """A session keeps computing with the weights it was created from when the model (or its
    external data file) is re-exported to the same path while it lives: its retained weights
    no longer read the file (ONNX Runtime copies them; a borrowed mapping would raise SIGBUS
    past the new end of file, or read the new model's bytes). In a child process, so that a
    SIGBUS fails the test rather than the test run. Expected values from numpy."""
    path = str(tmp_path / "lookup.onnx")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, "-c", _OVERWRITE_CHILD, path, form, replacement], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0 and out.stdout.split()[-1:] == ["unchanged"], (
        f"exit status {out.returncode}\n{out.stdout}\n{out.stderr}"
    )


_OVERWRITE_DURING_CREATION_CHILD = r"""
import os
import sys

import numpy as np
import onnx
import onnx_light
from onnx import TensorProto, helper, numpy_helper
from onnx_light import session as session_module

path, form, change = sys.argv[1:]
rng = np.random.default_rng(5)
w = rng.standard_normal((256, 256), dtype=np.float32)  # packed by MatMul: read while creating
table = rng.standard_normal((512, 64), dtype=np.float32)  # a Gather's: retained unpacked
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Gather", ["table", "ids"], ["rows"])],
    "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 256]),
     helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 256]),
     helper.make_tensor_value_info("rows", TensorProto.FLOAT, [3, 64])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(table, "table")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
onnx.save(model, path, save_as_external_data=form == "external_data", location="weights.bin", size_threshold=0)
files = [path] + ([os.path.join(os.path.dirname(path), "weights.bin")] if form == "external_data" else [])

# Once the files are loaded and before the kernels read the weights (Session.create), the
# model is re-exported in place: truncated to nothing, or rewritten at the same size.
validate = session_module.validate_model
def validate_then_change(proto):
    for f in files:
        size = os.path.getsize(f)
        with open(f, "wb") as out:
            out.write(b"" if change == "truncated" else b"\x7f" * size)
    return validate(proto)
session_module.validate_model = validate_then_change
try:
    session = onnx_light.InferenceSession(path)
except onnx_light.InvalidArgument as e:
    print("error:", e)
    raise SystemExit(0)
x = rng.standard_normal((2, 256), dtype=np.float32)
ids = np.array([511, 0, 7], dtype=np.int64)
y, rows = session.run(None, {"x": x, "ids": ids})
np.testing.assert_allclose(y, x @ w, rtol=1e-4, atol=1e-4)
np.testing.assert_array_equal(rows, table[ids])
print("unchanged")
"""


@pytest.mark.parametrize("change", ["truncated", "rewritten"])
@pytest.mark.parametrize("form", ["path", "external_data"])
def test_a_model_file_changed_while_the_session_is_created_gives_the_weights_as_loaded(tmp_path, form, change):
    """The model (or its external data file) is truncated or rewritten at the same size after
    it was loaded and before the session's kernels read its weights: the session computes
    with the weights as loaded (the loader read the files' bytes: no mapping to raise SIGBUS
    past a new end of file or to show the new bytes). In a child process, so that a SIGBUS
    fails the test rather than the test run. Expected values from numpy."""
    path = str(tmp_path / "model.onnx")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, "-c", _OVERWRITE_DURING_CREATION_CHILD, path, form, change],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0 and out.stdout.split()[-1:] == ["unchanged"], (
        f"exit status {out.returncode}\n{out.stdout}\n{out.stderr}"
    )
