"""Runs ONNX backend node cases through onnx_light.InferenceSession (shared by the
attention and rnn families' conformance tests). The `_expanded` variants are
function-body graphs of other ops and belong to those ops' families."""

import ml_dtypes
import numpy as np
import onnx.backend.test.case.node as node_cases
import onnx_light

# bfloat16 cases: the reference rounds every intermediate to bfloat16 while the kernels
# compute in float and round once; the cases' tolerance (rtol 1e-3) is finer than
# bfloat16's resolution (2^-8 relative), so they are checked at two bfloat16 ulps.
BF16_TOLERANCE = {"rtol": 2.0**-7, "atol": 2.0**-8}

REGISTERED_OPS = {(k.domain, k.op) for k in onnx_light.registered_kernels()}


def collect(prefixes):
    return sorted(
        (c for c in node_cases.collect_testcases(None) if c.name.startswith(prefixes) and "_expanded" not in c.name),
        key=lambda c: c.name,
    )


def missing_subgraph_ops(case):
    """Ops used by the node's graph attributes with no kernel in this build: such cases
    depend on other families and cannot pass without them."""
    missing = set()
    for attribute in case.model.graph.node[0].attribute:
        if attribute.HasField("g"):
            for node in attribute.g.node:
                if ((node.domain or "ai.onnx"), node.op_type) not in REGISTERED_OPS:
                    missing.add(node.op_type)
    return sorted(missing)


def run_case(case, threads):
    session = onnx_light.InferenceSession(
        case.model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
    )
    input_names = [i.name for i in case.model.graph.input]
    output_names = [o.name for o in case.model.graph.output]
    for inputs, expected in case.data_sets:
        outputs = session.run(output_names, dict(zip(input_names, inputs)))
        assert len(outputs) == len(expected)
        for name, got, want in zip(output_names, outputs, expected):
            assert got.dtype == want.dtype, name
            assert got.shape == want.shape, name
            tolerance = {"rtol": case.rtol, "atol": case.atol}
            if want.dtype == ml_dtypes.bfloat16:
                tolerance = {k: max(v, BF16_TOLERANCE[k]) for k, v in tolerance.items()}
            np.testing.assert_allclose(
                got.astype(np.float64), want.astype(np.float64), err_msg=f"{case.name} output {name}", **tolerance
            )
