import copy
import importlib.util
import json
import multiprocessing
import os
import sys

import numpy as np
import pytest


def _load_native_with_test_kernels():
    """Loads the extension built with the test-only kernels (domain "test.tuning") as
    onnx_light._native, before onnx_light imports the regular one."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing", "_native_with_test_kernels.so")
    spec = importlib.util.spec_from_file_location("onnx_light._native", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["onnx_light._native"] = module
    spec.loader.exec_module(module)


_load_native_with_test_kernels()

import onnx_light  # noqa: E402
from onnx_light import _native  # noqa: E402
from onnx_light import kernel_tuning as kt  # noqa: E402

KEY = f"onnx_light/test.tuning/TestScale/float/tuning_test_kernels@{_native.TUNING_ABI}"
PARAM = "parallel.minimum_elements"
NOPE = f"onnx_light/ai.onnx/Nope/float/x@{_native.TUNING_ABI}"


def test_the_test_kernels_are_linked():
    assert any(s["key"] == KEY for s in kt.schemas())
    assert _native.TableTuningSource.__mro__[1] is _native.TuningSource


def test_processor_and_execution_descriptors():
    p = kt.host_processor()
    assert p["architecture"] in ("x86_64", "aarch64")
    assert p["vendor"] and p["isa_level"] and p["logical_cores"] >= 1 and p["physical_cores"] >= 1
    assert p["isa_features"] == sorted(p["isa_features"])
    assert kt.execution_descriptor(3) == {"threads": 3, "affinity": []}
    with pytest.raises(ValueError, match="num_threads must be in"):
        kt.execution_descriptor(-1)


def test_isa_levels_and_cap():
    names = ("portable", "avx2", "avx512", "neon")
    assert kt.host_isa() in names and kt.max_isa() in names
    assert kt.set_max_isa(kt.max_isa())  # the cap in force is accepted again
    with pytest.raises(ValueError, match="not one of"):
        kt.set_max_isa("sse9")


def test_current_values_are_portable_defaults_without_profiles():
    rows = [r for r in kt.current_values() if r["schema_key"] == KEY]
    assert {r["param"]: (r["value"], r["source"]) for r in rows} == {
        PARAM: (32768, "portable_default"),
        "parallel.block_elements": (1024, "portable_default"),
    }


@pytest.mark.parametrize(
    "key,param,value,message",
    [
        (KEY, PARAM, 1.5, "is int64; got a double"),
        (KEY, PARAM, "many", "is int64; got a string"),
        (KEY, PARAM, True, "is int64; got a bool"),
        (KEY, PARAM, 0, r"outside \[1, "),
        (KEY, PARAM, 2**70, "does not fit int64"),
        (KEY, "parallel.minimum_element", 5, "unknown tuning parameter 'parallel.minimum_element'"),
        (NOPE, PARAM, 5, f"no tuning schema '{NOPE}'"),
        (KEY, PARAM, [1], "must be int, float, bool or str"),
    ],
)
def test_explicit_values_are_checked(key, param, value, message):
    with pytest.raises(ValueError, match=message):
        kt.tuning_source(profiles_path=None, explicit={key: {param: value}})


def make_profile(processor, threads, value, abi=None, key=KEY):
    return kt.Profile(
        schema_key=key,
        processor=processor,
        execution={"threads": threads, "affinity": []},
        values={PARAM: value},
        tuning_abi=_native.TUNING_ABI if abi is None else abi,
        evidence={"sizes": [{"size": 1024, "samples_ns": {"serial": [1, 2, 3]}}]},
        revision="test",
    )


def machines():
    """The host and variants of it for each precedence tier."""
    host = kt.host_processor()
    same_uarch = dict(host, stepping=host["stepping"] + 1, microarchitecture=host["microarchitecture"] or "", caches=[])
    same_isa = dict(host, vendor="OtherVendor", microarchitecture="other-uarch", family=99, model=99)
    other = dict(host, isa_level="some-other-level", vendor="OtherVendor", microarchitecture="x")
    return host, same_uarch, same_isa, other


def test_each_precedence_tier(tmp_path):
    host, same_uarch, same_isa, other = machines()
    threads = kt.execution_descriptor(2)["threads"]
    path = str(tmp_path / "profiles.json")
    tiers = [
        (host, 1001, "exact_machine"),
        (same_uarch, 1002, "same_microarchitecture"),
        (same_isa, 1003, "same_isa_level"),
    ]
    # Remove the best tier one at a time: the next one takes over, then the defaults.
    for first in range(len(tiers) + 1):
        if os.path.exists(path):
            os.unlink(path)
        kt.save_profiles(
            path, [make_profile(m, threads, v) for m, v, _ in tiers[first:]] + [make_profile(other, threads, 1004)]
        )
        source, reports = kt.build_tuning_source(path, num_threads=2)
        value, origin = source.resolve(KEY)[PARAM]
        expected = (tiers[first][1], tiers[first][2]) if first < len(tiers) else (32768, "portable_default")
        assert (value, origin) == expected
        statuses = [p.status for p in reports[0].profiles]
        assert statuses[-1] == kt.OTHER_MACHINE
    # An explicit profile outranks even the exact machine.
    source = kt.tuning_source(path, explicit={KEY: {PARAM: 7}}, num_threads=2)
    assert source.resolve(KEY)[PARAM] == (7, "explicit_profile")


def test_other_thread_count_and_stale_abi_are_classified(tmp_path):
    host = kt.host_processor()
    path = str(tmp_path / "p.json")
    kt.save_profiles(path, [make_profile(host, 64, 5000), make_profile(host, 2, 6000, abi=_native.TUNING_ABI + 1)])
    report = kt.inspect_profiles(path, num_threads=2)
    assert [(p.status, p.tier) for p in report.profiles] == [(kt.OTHER_MACHINE, None), (kt.STALE_ABI, None)]
    assert "64 threads" in report.profiles[0].reason
    assert kt.tuning_source(path, num_threads=2).resolve(KEY)[PARAM] == (32768, "portable_default")


# A profile of the previous tuning ABI: its key carries the old suffix and its values the
# old parameter names (ABI 1 spelled the element block "parallel.grain_elements" or
# "parallel.grain"). It must be reported stale, naming both ABIs, and never applied.
OLD_ABI = _native.TUNING_ABI - 1
OLD_KEY = KEY.rsplit("@", 1)[0] + f"@{OLD_ABI}"


def old_abi_profile(processor, threads):
    profile = make_profile(processor, threads, 1, abi=OLD_ABI, key=OLD_KEY)
    profile.values["parallel.grain"] = 64
    return profile


def test_a_profile_of_the_old_abi_is_reported_stale_and_ignored_by_the_session(tmp_path):
    path = str(tmp_path / "old.json")
    kt.save_profiles(path, [old_abi_profile(kt.host_processor(), kt.execution_descriptor(2)["threads"])])
    stale = f"tuning ABI {OLD_ABI}, this build uses {_native.TUNING_ABI}"
    for explicit in (False, True):  # the machine's document, or the same document given explicitly
        source, reports = (
            kt.build_tuning_source(None, explicit=path, num_threads=2)
            if explicit
            else kt.build_tuning_source(path, num_threads=2)
        )
        assert [(p.schema_key, p.status, p.reason) for p in reports[0].profiles] == [(OLD_KEY, kt.STALE_ABI, stale)]
        assert source.resolve(KEY)[PARAM] == (32768, "portable_default")
        x = (np.arange(20000) % 7).astype(np.float32)  # serial at the default threshold; the stale 1 would split it
        ran = kt.run_kernel("TestScale", [x], opset=1, domain="test.tuning", num_threads=2, tuning_source=source)
        assert ran["regions"] == []
        np.testing.assert_array_equal(ran["outputs"][0], 2 * x + 1)


def test_explicit_values_of_the_old_abi_are_ignored_with_a_warning():
    with pytest.warns(UserWarning, match=f"{OLD_KEY}: tuning ABI {OLD_ABI}, this build uses {_native.TUNING_ABI}"):
        source = kt.tuning_source(profiles_path=None, explicit={OLD_KEY: {PARAM: 1, "parallel.grain": 64}})
    assert source.resolve(KEY)[PARAM] == (32768, "portable_default")


def test_invalid_profiles_are_reported_not_applied(tmp_path):
    host = kt.host_processor()
    good = make_profile(host, 2, 4096).to_json()
    out_of_bounds = make_profile(host, 2, -1, key=KEY.replace("TestScale", "TestAdd")).to_json()
    missing = {k: v for k, v in good.items() if k != "values"}
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps(
            {"format": "onnx-light-tuning-profiles", "version": 1, "profiles": [good, out_of_bounds, missing, 17]}
        )
    )
    source, reports = kt.build_tuning_source(str(path), num_threads=2)
    profiles = reports[0].profiles
    assert [p.status for p in profiles] == [kt.LOADED, kt.INVALID, kt.INVALID, kt.INVALID]
    assert "$.profiles[1].values" in profiles[1].reason and "outside" in profiles[1].reason
    assert profiles[2].reason == "$.profiles[2].values: missing"
    assert "$.profiles[3]: expected an object" in profiles[3].reason
    assert source.resolve(KEY)[PARAM] == (4096, "exact_machine")


@pytest.mark.parametrize(
    "value,message",
    [
        ("many", "is int64; got a string"),
        (1.5, "is int64; got a double"),
        (True, "is int64; got a bool"),
        (0, r"outside \[1, "),
        (None, "expected a number, bool or string, got NoneType"),
        ([4096], "expected a number, bool or string, got list"),
    ],
    ids=["string", "double", "bool", "below_minimum", "null", "list"],
)
def test_an_explicit_profile_with_a_value_its_schema_refuses_raises(tmp_path, value, message):
    # It used to be reported as invalid and dropped, and the session ran on the defaults.
    profile = make_profile(kt.host_processor(), 2, value)
    with pytest.raises(kt.ProfileError, match=r"<given>: \$.profiles\[0\].values.*" + message):
        kt.tuning_source(None, explicit=[profile], num_threads=2)
    path = tmp_path / "explicit.json"
    path.write_text(json.dumps({"format": "onnx-light-tuning-profiles", "version": 1, "profiles": [profile.to_json()]}))
    with pytest.raises(kt.ProfileError, match=str(path) + r": \$.profiles\[0\].values.*" + message):
        kt.tuning_source(None, explicit=str(path), num_threads=2)


@pytest.mark.parametrize(
    "values,message",
    [
        ({PARAM: "many"}, "is int64; got a string"),
        ({PARAM: 4096, "parallel.block_elements": 0.5}, "is int64; got a double"),
    ],
    ids=["string", "second_value_double"],
)
def test_explicit_dict_values_are_checked_all_before_any_is_added(values, message):
    with pytest.raises(kt.ProfileError, match="explicit values for " + KEY + ".*" + message):
        kt.tuning_source(None, explicit={KEY: values})


def test_a_stored_profile_with_one_bad_value_is_applied_not_at_all(tmp_path):
    # All or nothing: the good first value must not reach the session without the second.
    profile = make_profile(kt.host_processor(), 2, 4096)
    profile.values["parallel.block_elements"] = "wide"
    path = str(tmp_path / "p.json")
    kt.save_profiles(path, [profile])
    source, reports = kt.build_tuning_source(path, num_threads=2)
    assert [p.status for p in reports[0].profiles] == [kt.INVALID]
    assert "$.profiles[0].values.parallel.block_elements" in reports[0].profiles[0].reason
    assert source.resolve(KEY)[PARAM] == (32768, "portable_default")


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), {"n": 1}], ids=["null", "nan", "inf", "dict"])
def test_save_refuses_a_profile_loading_would_call_invalid(tmp_path, value):
    path = tmp_path / "p.json"
    with pytest.raises(kt.ProfileError, match=r"<to save>\[0\].values.parallel.minimum_elements"):
        kt.save_profiles(str(path), [make_profile(kt.host_processor(), 2, value)])
    assert not path.exists()


def test_round_trip_and_merge(tmp_path):
    host = kt.host_processor()
    path = str(tmp_path / "sub" / "p.json")
    first = make_profile(host, 2, 2048)
    kt.save_profiles(path, [first])
    raw = kt.read_document(path)
    assert [kt.profile_from_json(r, "$") for r in raw] == [first]
    # Same identity replaces, another adds.
    replaced = copy.deepcopy(first)
    replaced.values = {PARAM: 4096}
    assert kt.save_profiles(path, [replaced, make_profile(host, 4, 8192)]) == 2
    loaded = [kt.profile_from_json(r, "$") for r in kt.read_document(path)]
    assert sorted(p.values[PARAM] for p in loaded) == [4096, 8192]
    assert not [f for f in os.listdir(tmp_path / "sub") if f.endswith(".tmp")]


def _writer(path, worker, count):
    host = {"architecture": "x86_64", "isa_level": "x86-64-v3", "vendor": "V", "worker": worker}
    for i in range(count):
        kt.save_profiles(path, [make_profile(dict(host, i=i), 2, 1000 + i)])


def test_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "p.json")
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_writer, args=(path, w, 15)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    raw = kt.read_document(path)
    assert len(raw) == 60
    assert {(r["processor"]["worker"], r["processor"]["i"]) for r in raw} == {
        (w, i) for w in range(4) for i in range(15)
    }


@pytest.mark.parametrize(
    "text,where",
    [
        (
            '{"format": "onnx-light-tuning-profiles", "version": 1, "profiles": [{"schema_key": ',
            r"p\.json:1:\d+: not valid JSON",
        ),
        ('{"format": "onnx-light-tuning-profiles",\n "version": 1,\n "profiles": [}', r"p\.json:3:\d+: not valid JSON"),
        ("[]", r"\$: expected an object"),
        ('{"format": "something-else", "version": 1, "profiles": []}', r"\$\.format"),
        ('{"format": "onnx-light-tuning-profiles", "version": 9, "profiles": []}', r"\$\.version"),
        ('{"format": "onnx-light-tuning-profiles", "version": 1, "profiles": {}}', r"\$\.profiles: expected a list"),
    ],
)
def test_corrupt_file_is_reported_and_left_untouched(tmp_path, text, where):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(kt.ProfileError, match=where):
        kt.tuning_source(str(path))
    with pytest.raises(kt.ProfileError, match=where):
        kt.save_profiles(str(path), [make_profile(kt.host_processor(), 2, 4096)])
    assert path.read_text() == text


def test_default_profile_path_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert kt.default_profile_path() == str(tmp_path / "onnx-light" / "tuning_profiles.json")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert kt.default_profile_path().endswith(os.path.join(".cache", "onnx-light", "tuning_profiles.json"))


def test_run_kernel_serial_and_parallel():
    x = (np.arange(20000) % 7).astype(np.float32)  # below the default threshold: serial path
    serial = kt.run_kernel("TestScale", [x], opset=1, domain="test.tuning")
    np.testing.assert_array_equal(serial["outputs"][0], 2 * x + 1)
    assert serial["regions"] == []
    parallel = kt.run_kernel("TestScale", [x], opset=1, domain="test.tuning", tuning={PARAM: 1}, num_threads=4)
    assert parallel["outputs"][0].tobytes() == serial["outputs"][0].tobytes()
    assert parallel["regions"][0]["requested_participants"] == 4
    assert parallel["bytes_allocated"] >= x.nbytes
    # A tuning source decides the path: threshold 1 from an explicit profile -> parallel.
    source = kt.tuning_source(profiles_path=None, explicit={KEY: {PARAM: 1}})
    profiled = kt.run_kernel("TestScale", [x], opset=1, domain="test.tuning", num_threads=2, tuning_source=source)
    assert profiled["regions"][0]["requested_participants"] == 2
    with pytest.raises(onnx_light.NotImplemented, match="element type double"):
        kt.run_kernel("TestScale", [x.astype(np.float64)], opset=1, domain="test.tuning")
    with pytest.raises(ValueError, match="input 1 is required but absent"):
        kt.run_kernel("TestAdd", [x], opset=1, domain="test.tuning")
    with pytest.raises(ValueError, match="unknown tuning parameter"):
        kt.run_kernel("TestScale", [x], opset=1, domain="test.tuning", tuning={"nope": 1})


def test_calibrate_writes_profiles_with_evidence(tmp_path):
    path = str(tmp_path / "p.json")
    seen = []
    result = kt.calibrate(
        ops=["TestAdd", "TestWrongInParallel"],
        element_types=["float"],
        domain="test.tuning",
        budget=kt.CalibrationBudget(time_ms=600, memory_mb=64, threads=2),
        output=path,
        revision="abc123",
        max_size=1 << 17,
        repetitions=3,
        progress=lambda done, total, schema, report: seen.append((done, total)),
    )
    assert seen[-1] == (2, 2)
    assert len(result.reports) == 2 and not result.skipped
    by_op = {r["schema_key"].split("/")[2]: r for r in result.reports}
    wrong = by_op["TestWrongInParallel"]
    assert wrong["evidence"]["rejected"] and not wrong["choices"][0]["changed"]
    for r in result.reports:
        assert r["budget"]["max_threads_used"] == 2
        assert r["budget"]["peak_memory_bytes"] <= 64 << 20
        for size in r["evidence"]["sizes"]:
            assert all(len(s) == 3 for s in size["samples_ns"].values())
    saved = [kt.profile_from_json(p, "$") for p in kt.read_document(path)]
    assert {p.schema_key for p in saved} == {r["schema_key"] for r in result.reports}
    assert all(p.revision == "abc123" and p.evidence["sizes"] for p in saved)
    assert all(len(p.evidence["load_average"]) == 2 for p in saved)
    wrong_profile = next(p for p in saved if "TestWrongInParallel" in p.schema_key)
    assert wrong_profile.values == {}
    # What was saved loads back as this machine's exact tier.
    report = kt.inspect_profiles(path, num_threads=2)  # the participants calibration used
    assert {p.tier for p in report.profiles} == {kt.EXACT_MACHINE}


def test_calibrate_rejects_bad_selections_and_budgets():
    with pytest.raises(ValueError, match="op\\(s\\) NoSuchOp"):
        kt.calibrate(ops=["NoSuchOp"])
    with pytest.raises(ValueError, match="time_ms must be positive"):
        kt.calibrate(ops=["TestAdd"], budget=kt.CalibrationBudget(time_ms=0))


def test_forced_parallel_tuning_sets_every_parallel_threshold_to_its_minimum():
    source = kt.forced_parallel_tuning()
    checked = 0
    for schema in kt.schemas():
        resolved = source.resolve(schema["key"])
        for param in schema["params"]:
            value, origin = resolved[param["name"]]
            if param["name"].startswith("parallel."):
                assert (value, origin) == (param["minimum"], "explicit_profile"), (schema["key"], param["name"])
                checked += 1
            else:
                assert (value, origin) == (param["default"], "portable_default"), (schema["key"], param["name"])
    assert checked > 100


def test_forced_parallel_splits_a_tiny_add_and_matches_the_serial_run():
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Mul", ["x", "x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 14)],
    )
    feed = {"x": np.linspace(-3, 3, 1024, dtype=np.float32)}
    (serial,) = onnx_light.InferenceSession(model, onnx_light.CpuExecutionPolicy(num_threads=1)).run(None, feed)
    default = onnx_light.InferenceSession(model, onnx_light.CpuExecutionPolicy(num_threads=4))
    _, _, regions = default.run_with_events(None, feed)
    assert not any(r.admitted_participants > 1 for r in regions)  # 1024 elements: serial by default
    forced = onnx_light.InferenceSession(
        model, onnx_light.CpuExecutionPolicy(num_threads=4), tuning_profile=kt.forced_parallel_tuning()
    )
    (out,), _, regions = forced.run_with_events(None, feed)
    assert any(r.admitted_participants > 1 for r in regions), regions
    assert out.tobytes() == serial.tobytes()


def _mul_model():
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024])
    return helper.make_model(
        helper.make_graph([helper.make_node("Mul", ["x", "x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 14)],
    )


def _calibrated_mul_profile(threads: int) -> kt.Profile:
    """A profile for this machine that splits Mul as finely as its schema allows (every
    parallel.* parameter at its minimum, as the forced-parallel policy sets them)."""
    key = next(s["key"] for s in kt.schemas() if s["op"] == "Mul" and s["element_type"] == "float")
    profile = make_profile(kt.host_processor(), kt.execution_descriptor(threads)["threads"], 1, key=key)
    forced = kt.forced_parallel_tuning().resolve(key)
    profile.values = {name: value for name, (value, _) in forced.items() if name.startswith("parallel.")}
    return profile


def test_sessions_load_the_calibrated_profile_from_the_documented_location(tmp_path, monkeypatch):
    """//tools:calibrate writes to default_profile_path(); a session given no tuning_profile
    takes its values from there (here: a 1-element minimum that splits a 1024-element Mul)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    model, feed = _mul_model(), {"x": np.linspace(-3, 3, 1024, dtype=np.float32)}
    policy = onnx_light.CpuExecutionPolicy(num_threads=4)
    _, _, regions = onnx_light.InferenceSession(model, policy).run_with_events(None, feed)
    assert not any(r.admitted_participants > 1 for r in regions)  # no profile yet: the default (serial)
    kt.save_profiles(kt.default_profile_path(), [_calibrated_mul_profile(4)])
    assert kt.default_profile_path() == str(tmp_path / "onnx-light" / "tuning_profiles.json")
    session = onnx_light.InferenceSession(model, policy)
    (out,), _, regions = session.run_with_events(None, feed)
    assert any(r.admitted_participants > 1 for r in regions), regions
    assert out.tobytes() == (feed["x"] * feed["x"]).tobytes()
    sources = {r.parameter: r.source for r in session.tuning_report() if "/Mul/" in r.schema}
    assert sources["parallel.minimum_elements"] == kt.EXACT_MACHINE
    # Opting out, and a profile of another thread count, keep the defaults.
    opted_out = onnx_light.InferenceSession(model, policy, tuning_profile=kt.portable_defaults())
    assert not any(r.admitted_participants > 1 for r in opted_out.run_with_events(None, feed)[2])
    other = onnx_light.InferenceSession(model, onnx_light.CpuExecutionPolicy(num_threads=3))
    assert not any(r.admitted_participants > 1 for r in other.run_with_events(None, feed)[2])


def test_a_corrupt_profile_document_warns_and_sessions_run_on_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    os.makedirs(tmp_path / "onnx-light")
    (tmp_path / "onnx-light" / "tuning_profiles.json").write_text("{not json", encoding="utf-8")
    with pytest.warns(UserWarning, match="portable defaults used"):
        session = onnx_light.InferenceSession(_mul_model(), onnx_light.CpuExecutionPolicy(num_threads=4))
    assert all(r.source == "portable_default" for r in session.tuning_report())


def test_profiled_values_are_what_a_session_would_take(tmp_path):
    path = str(tmp_path / "p.json")
    assert kt.profiled_values(path) == []
    profile = _calibrated_mul_profile(0)
    kt.save_profiles(path, [profile, make_profile(machines()[3], 0, 7)])  # the second: another machine
    assert sorted(kt.profiled_values(path)) == [(profile.schema_key, p, v) for p, v in sorted(profile.values.items())]


def test_calibrate_skips_a_schema_the_generic_calibrator_cannot_drive():
    """DynamicQuantizeLinear has three outputs; the generic calibrator asks for one. The
    calibration goes on without it (listed as skipped) instead of failing whole."""
    result = kt.calibrate(
        ops=["DynamicQuantizeLinear"], budget=kt.CalibrationBudget(time_ms=200, memory_mb=64, threads=2)
    )
    assert result.reports == [] and result.profiles == []
    (reason,) = result.skipped
    assert "DynamicQuantizeLinear" in reason
