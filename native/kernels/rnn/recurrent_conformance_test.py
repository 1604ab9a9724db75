"""ONNX backend node cases of RNN, GRU and LSTM under a serial and a parallel CPU policy."""

import pytest

from native.kernels.attention import node_cases

CASES = node_cases.collect(("test_simple_rnn", "test_rnn_", "test_gru", "test_lstm"))


def test_cases_collected():
    assert len(CASES) >= 18, len(CASES)


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case, threads):
    node_cases.run_case(case, threads)
