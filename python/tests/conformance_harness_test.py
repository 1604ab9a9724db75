"""The conformance harness survives a case that crashes its worker or hangs: that case is
reported with the reason, every other case still runs; and it tells forced-parallel
outputs that differ from the serial run's bit for bit from identical ones."""

import os
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402


def fake_run_case(case, policy, tuning=None, serial=None, level=None):
    if case == "crashes":
        os.abort()
    if case == "hangs":
        time.sleep(60)
    reason = None if case.startswith("ok") or case.startswith("differs") else f"fails under {policy}"
    return conformance.Outcome(
        reason,
        differs=serial is not None and case.startswith("differs"),
        multi_participant_regions=3 if serial is not None and case == "ok1" else 0,
    )


def test_crash_and_hang_are_reported_per_case(monkeypatch):
    monkeypatch.setattr(conformance, "run_case", fake_run_case)
    monkeypatch.setattr(conformance, "make_policies", lambda: {p: (p, None, None) for p in conformance.POLICIES})
    monkeypatch.setattr(conformance, "CASE_TIMEOUT_SECONDS", 2)
    names = ["ok1", "crashes", "ok2", "bad", "hangs", "ok3", "differs"]
    results, details = conformance.run_all({n: n for n in names}, names, workers=2)
    for name in ("ok1", "ok2", "ok3", "differs"):
        assert conformance.case_reason(results, name) is None, name
    assert conformance.case_reason(results, "bad") == (
        "serial: fails under serial | parallel: fails under parallel | forced_parallel: fails under forced_parallel | "
        "serial_unoptimized: fails under serial_unoptimized"
    )
    assert "crash: the worker process died" in conformance.case_reason(results, "crashes")
    assert "hang: no result within 2 s" in conformance.case_reason(results, "hangs")
    # The serial run's outputs reach the forced-parallel run: differences and regions come back.
    assert details[("differs", "forced_parallel")] == (True, 0)
    assert details[("ok1", "forced_parallel")] == (False, 3)
    assert details[("ok2", "forced_parallel")] == (False, 0)


def test_undefined_out_of_range_casts_are_masked_and_defined_elements_still_compared():
    import ml_dtypes
    import numpy as np

    x = np.array([-9.0, -8.0, 7.4, 7.6, np.nan, 3.0], np.float32)
    expected = [np.array([0, -8, 7, 0, 0, 3], ml_dtypes.int4)]  # OOR entries as ml_dtypes 0.7 makes them
    ours = [np.array([7, -8, 7, -8, 0, 2], ml_dtypes.int4)]  # wrapped OOR entries, and a wrong 3 -> 2
    masked = conformance._defined_elements_only("test_cast_FLOAT_to_INT4", [x], ours, expected)[0]
    np.testing.assert_array_equal(masked[[0, 3, 4]].astype(np.int8), expected[0][[0, 3, 4]].astype(np.int8))
    assert masked[5] == 2  # in range: left as computed, so a wrong value still fails the case
    assert masked[1] == -8 and masked[2] == 7
    # Other cases are left alone.
    assert conformance._defined_elements_only("test_cast_FLOAT_to_INT8", [x], ours, expected) is ours


@pytest.mark.parametrize(
    "a,b,same",
    [
        ([np.float32([1, 2])], [np.float32([1, 2])], True),
        ([np.float32([0.0])], [np.float32([-0.0])], False),  # equal values, different bits
        ([np.float32([np.nan])], [np.float32([np.nan])], True),
        ([np.float32([1, 2])], [np.float64([1, 2])], False),
        ([np.float32([1, 2])], [np.float32([[1, 2]])], False),
        ([[np.int64([1])], None], [[np.int64([1])], None], True),
        ([[np.int64([1])]], [[np.int64([1]), np.int64([2])]], False),
        ([np.array(["a"], dtype=object)], [np.array(["b"], dtype=object)], False),
    ],
    ids=["equal", "signed_zero", "nan", "dtype", "shape", "sequence_and_none", "sequence_length", "strings"],
)
def test_same_bits(a, b, same):
    assert conformance.same_bits(a, b) is same
