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
