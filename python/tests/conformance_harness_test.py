"""The conformance harness survives a case that crashes its worker or hangs: that case is
reported with the reason, every other case still runs."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402


def fake_run_case(case, policy):
    if case == "crashes":
        os.abort()
    if case == "hangs":
        time.sleep(60)
    return None if case.startswith("ok") else f"fails under {policy}"


def test_crash_and_hang_are_reported_per_case(monkeypatch):
    monkeypatch.setattr(conformance, "run_case", fake_run_case)
    monkeypatch.setattr(conformance, "make_policies", lambda: {"serial": "serial", "parallel": "parallel"})
    monkeypatch.setattr(conformance, "CASE_TIMEOUT_SECONDS", 2)
    names = ["ok1", "crashes", "ok2", "bad", "hangs", "ok3", "ok4"]
    results = conformance.run_all({n: n for n in names}, names, workers=2)
    for name in ("ok1", "ok2", "ok3", "ok4"):
        assert conformance.case_reason(results, name) is None, name
    assert conformance.case_reason(results, "bad") == "serial: fails under serial | parallel: fails under parallel"
    assert "crash: the worker process died" in conformance.case_reason(results, "crashes")
    assert "hang: no result within 2 s" in conformance.case_reason(results, "hangs")


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
