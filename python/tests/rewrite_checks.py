"""Shared by the graph-rewrite tests: small models, and the check that a rewritten model
gives the unrewritten model's results as ONNX Runtime computes them with its own graph
optimisations off (the independent oracle)."""

import numpy as np
import onnx
import onnx_light
import onnxruntime as ort
from onnx import helper
from onnx_light import graph_rewrites
from onnx_light.graph_rewrites import _graph


def model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, "rewrite_test", inputs, outputs, list(initializers))
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset), *[helper.make_opsetid(d, v) for d, v in extra_opsets]],
        ir_version=10,
    )


def op_types(m: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in m.graph.node]


def ort_unoptimized(m: onnx.ModelProto, feeds: dict) -> list:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def optimize_checking_index(m: onnx.ModelProto, **kwargs) -> onnx.ModelProto:
    """graph_rewrites.optimize, checking after every pass that the shared graph index is what
    a fresh read of the graph gives (a pass that edits behind the index fails here)."""
    saved = _graph.CHECK_INDEX
    _graph.CHECK_INDEX = True
    try:
        return graph_rewrites.optimize(m, **kwargs)
    finally:
        _graph.CHECK_INDEX = saved


def check_rewrite(m: onnx.ModelProto, feeds: dict, level: str, expected_ops: list[str], rtol=1e-6, atol=1e-6):
    """Rewrites `m` at `level`, expects exactly `expected_ops` to remain, and the session at
    that level to give ONNX Runtime's unoptimised results (tolerances: float rounding of the
    one op that replaces several, stated by each caller). The rewritten model."""
    rewritten = optimize_checking_index(m, level=level)
    assert op_types(rewritten) == expected_ops
    onnx.checker.check_model(rewritten)
    assert [o.name for o in rewritten.graph.output] == [o.name for o in m.graph.output]
    ours = onnx_light.InferenceSession(m, graph_optimization_level=level).run(None, feeds)
    expected = ort_unoptimized(m, feeds)
    assert len(ours) == len(expected)
    for got, want in zip(ours, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return rewritten
