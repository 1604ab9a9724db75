"""RunOptions.terminate from another thread and timeout_seconds stop a running run with
onnx_light.Cancelled (the model: a Loop of 10**12 iterations whose body passes values through)."""

import threading
import time

import numpy as np
import onnx_light
import pytest
from onnx import TensorProto, helper


def endless_model():
    body = helper.make_graph(
        [],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [1]),
        ],
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [1]),
        ],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "v0"], ["v"], body=body, name="forever")],
        "g",
        [
            helper.make_tensor_value_info("M", TensorProto.INT64, []),
            helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [1])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


FEEDS = {"M": np.array(10**12, np.int64), "v0": np.zeros(1, np.float32)}


@pytest.mark.parametrize("threads", [1, 2])
def test_terminate_from_another_thread(threads):
    session = onnx_light.InferenceSession(
        endless_model(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
    )
    options = onnx_light.RunOptions()
    timer = threading.Timer(0.2, lambda: setattr(options, "terminate", True))
    timer.start()
    started = time.monotonic()
    with pytest.raises(
        onnx_light.Cancelled, match=r"Loop node 'forever': stopped at iteration \d+: the run was terminated"
    ):
        session.run(None, FEEDS, options)
    timer.join()
    assert time.monotonic() - started < 30
    # The same options run again once terminate is cleared (a short loop this time).
    options.terminate = False
    (v,) = session.run(None, {"M": np.array(3, np.int64), "v0": np.ones(1, np.float32)}, options)
    assert v.tolist() == [1.0]


def test_timeout():
    session = onnx_light.InferenceSession(endless_model())
    options = onnx_light.RunOptions()
    options.timeout_seconds = 0.1
    with pytest.raises(onnx_light.Cancelled, match="timeout expired"):
        session.run(None, FEEDS, options)


def test_terminate_set_before_the_run():
    session = onnx_light.InferenceSession(endless_model())
    options = onnx_light.RunOptions()
    options.terminate = True
    with pytest.raises(onnx_light.Cancelled, match="terminated"):
        session.run(None, FEEDS, options)
