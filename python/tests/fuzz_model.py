"""Fuzz target (atheris): model bytes and feeds, seeded from ONNX conformance models.

Each input picks a seed case, then mutates it one of three ways: the serialized model's
bytes, an attribute or initializer of a node set to an extreme value, or the feeds
(shape, element type, emptiness). The session must then either run or fail with one of
onnx-light's errors (InvalidArgument, NotImplemented, ResourceExhausted, Cancelled) or a
Python API error (TypeError/ValueError); anything else, an InternalError, another
exception type, a crash or a hang is a finding.

    ./bazelw run //python:fuzz_model -- -runs=100000 -artifact_prefix=/tmp/fuzz/   # libFuzzer flags
    ./bazelw run //python:fuzz_model -- /path/to/crash-<hash>                     # replay one input

fuzz_smoke_test.py runs a short bounded fuzz run and replays every regression input.
"""

import sys
import warnings

import atheris

with atheris.instrument_imports(include=["onnx_light"]):
    import onnx_light

import numpy as np
import onnx
from onnx import AttributeProto

SEED_CASES = (
    "test_relu",
    "test_conv_with_strides_padding",
    "test_convtranspose",
    "test_resize_upsample_scales_linear",
    "test_expand_dim_changed",
    "test_gather_0",
    "test_reshape_extended_dims",
    "test_slice",
    "test_maxpool_2d_default",
    "test_reduce_sum_default_axes_keepdims_example",
    "test_tile",
    "test_constant_pad",
    "test_matmul_2d",
    "test_softmax_axis_0",
    "test_onehot_with_axis",
    "test_einsum_batch_matmul",
    "test_loop11",
    "test_split_variable_parts_1d_opset18",
    "test_cumsum_1d",
    "test_scatter_elements_with_axis",
    "test_lstm_defaults",
    "test_concat_2d_axis_0",
    "test_transpose_default",
    "test_range_float_type_positive_delta",
)
EXTREMES = [0, 1, -1, 2, 3, 7, 2**31 - 1, 2**31, -(2**31), 2**40, 2**62, -(2**63), 2**63 - 1]
FLOAT_EXTREMES = [0.0, -0.0, 1e-30, 1e9, 1e30, -1e30, float("inf"), float("-inf"), float("nan")]
# Errors a bad model or bad feeds may end in (the exception classes are ValueError,
# NotImplementedError, MemoryError and RuntimeError subclasses: named here exactly).
EXPECTED = (
    onnx_light.InvalidArgument,
    onnx_light.NotImplemented,
    onnx_light.ResourceExhausted,
    onnx_light.Cancelled,
    TypeError,
    ValueError,
)
MEMORY_LIMIT_BYTES = 256 << 20
RUN_TIMEOUT_SECONDS = 5.0

_CASES = None


def seed_cases():
    global _CASES
    if _CASES is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from onnx.backend.test.loader import load_model_tests
            from onnx.backend.test.runner import _normalize_tensor

            by_name = {c.name: c for c in load_model_tests(kind="node")}
        _CASES = [
            (by_name[n].model, [_normalize_tensor(x) for x in by_name[n].data_sets[0][0]])
            for n in SEED_CASES
            if n in by_name
        ]
    return _CASES


def mutate_bytes(fdp, data):
    data = bytearray(data)
    for _ in range(fdp.ConsumeIntInRange(1, 8)):
        if not data:
            break
        position = fdp.ConsumeIntInRange(0, len(data) - 1)
        choice = fdp.ConsumeIntInRange(0, 2)
        if choice == 0:
            data[position] = fdp.ConsumeInt(1) & 0xFF
        elif choice == 1:
            del data[position : position + fdp.ConsumeIntInRange(1, 16)]
        else:
            data[position:position] = fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 8))
    return bytes(data)


def mutate_structure(fdp, model):
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    targets = []
    for node in graph.node:
        targets.extend(("attribute", a) for a in node.attribute)
        targets.append(("arity", node))
    targets.extend(("initializer", t) for t in graph.initializer)
    targets.append(("opset", model))
    if not targets:
        return model
    kind, target = targets[fdp.ConsumeIntInRange(0, len(targets) - 1)]
    if kind == "attribute":
        if target.type == AttributeProto.INT:
            target.i = fdp.PickValueInList(EXTREMES)
        elif target.type == AttributeProto.FLOAT:
            target.f = fdp.PickValueInList(FLOAT_EXTREMES)
        elif target.type == AttributeProto.INTS:
            values = list(target.ints) or [0]
            values[fdp.ConsumeIntInRange(0, len(values) - 1)] = fdp.PickValueInList(EXTREMES)
            del target.ints[:]
            target.ints.extend(values[: fdp.ConsumeIntInRange(0, len(values) + 1)] if fdp.ConsumeBool() else values)
        elif target.type == AttributeProto.FLOATS:
            target.floats.append(fdp.PickValueInList(FLOAT_EXTREMES))
    elif kind == "arity":
        if fdp.ConsumeBool() and target.input:
            target.input.append(target.input[0])
        elif target.input:
            del target.input[-1]
    elif kind == "initializer":
        array = onnx.numpy_helper.to_array(target)
        if array.dtype.kind in "iu" and array.size:
            flat = array.copy().reshape(-1)
            flat[fdp.ConsumeIntInRange(0, flat.size - 1)] = np.clip(
                fdp.PickValueInList(EXTREMES), np.iinfo(array.dtype).min, np.iinfo(array.dtype).max
            )
            target.CopyFrom(onnx.numpy_helper.from_array(flat.reshape(array.shape), target.name))
        elif array.dtype.kind == "f" and array.size:
            flat = array.copy().reshape(-1)
            flat[fdp.ConsumeIntInRange(0, flat.size - 1)] = fdp.PickValueInList(FLOAT_EXTREMES)
            target.CopyFrom(onnx.numpy_helper.from_array(flat.reshape(array.shape), target.name))
    else:
        target.opset_import[0].version = fdp.PickValueInList([1, 6, 10, 13, 999, 0, -1])
    return model


def mutate_feeds(fdp, feeds):
    feeds = list(feeds)
    if not feeds:
        return feeds
    i = fdp.ConsumeIntInRange(0, len(feeds) - 1)
    x = feeds[i]
    if not isinstance(x, np.ndarray) or x.dtype == object:
        return feeds
    choice = fdp.ConsumeIntInRange(0, 4)
    if choice == 0:
        feeds[i] = np.zeros((0,) + x.shape[1:], x.dtype)
    elif choice == 1:
        feeds[i] = x.reshape(-1)
    elif choice == 2:
        feeds[i] = x.astype(fdp.PickValueInList([np.float64, np.int64, np.int32, np.float16, np.bool_]))
    elif choice == 3 and x.size:
        values = x.copy().reshape(-1)
        values[fdp.ConsumeIntInRange(0, values.size - 1)] = (
            fdp.PickValueInList(FLOAT_EXTREMES)
            if x.dtype.kind == "f"
            else np.clip(fdp.PickValueInList(EXTREMES), *(lambda info: (info.min, info.max))(np.iinfo(x.dtype)))
            if x.dtype.kind in "iu"
            else values[0]
        )
        feeds[i] = values.reshape(x.shape)
    else:
        feeds[i] = np.broadcast_to(x, (2,) + x.shape).copy()
    return feeds


def run_one(model, feeds, threads):
    try:
        session = onnx_light.InferenceSession(
            model,
            cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads),
            memory_limit_bytes=MEMORY_LIMIT_BYTES,
        )
        names = [i.name for i in session.get_inputs()]
        options = onnx_light.RunOptions()
        options.timeout_seconds = RUN_TIMEOUT_SECONDS
        session.run(None, dict(zip(names, feeds)), options)
    except EXPECTED:  # InternalError (a RuntimeError) is not among them: it is a finding
        pass


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    cases = seed_cases()
    model, feeds = cases[fdp.ConsumeIntInRange(0, len(cases) - 1)]
    mode = fdp.ConsumeIntInRange(0, 2)
    if mode == 0:
        model = mutate_bytes(fdp, model.SerializeToString())
    elif mode == 1:
        model = mutate_structure(fdp, model)
    else:
        feeds = mutate_feeds(fdp, feeds)
    run_one(model, feeds, fdp.PickValueInList([1, 4]))


def main(argv):
    seed_cases()  # before fuzzing: loading the suite is not part of any input
    atheris.Setup(argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
