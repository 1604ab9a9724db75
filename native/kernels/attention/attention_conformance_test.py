"""ONNX backend node cases of the attention family (Attention, RotaryEmbedding,
LinearAttention, FlexAttention) under a serial and a parallel CPU policy."""

import pytest

from native.kernels.attention import node_cases

CASES = node_cases.collect(("test_attention", "test_rotary_embedding", "test_linear_attention", "test_flexattention"))


def test_cases_collected():
    assert len(CASES) >= 100, len(CASES)


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case, threads):
    missing = node_cases.missing_subgraph_ops(case)
    if missing:
        pytest.xfail(f"modifier subgraph needs ops without a kernel in this build: {missing}")
    node_cases.run_case(case, threads)
