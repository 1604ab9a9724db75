"""Kernel tuning from Python: schemas and current values, calibration within a budget,
profiles, and the TuningSource that InferenceSession(..., tuning_profile=...) takes.

    import onnx_light.kernel_tuning as kt
    result = kt.calibrate(ops=["Add"], budget_ms=2000, output=kt.default_profile_path())
    source = kt.tuning_source()                 # profiles of this machine, by precedence
    session = onnx_light.InferenceSession(model, tuning_profile=source)

A session given no tuning_profile loads the same profiles itself (machine_tuning_source:
default_profile_path(), i.e. $XDG_CACHE_HOME/onnx-light/tuning_profiles.json, where
//tools:calibrate writes them); tuning_profile=kt.portable_defaults() opts out.

Precedence (highest first): an explicitly given profile, a profile for this exact
processor and execution descriptor, the same microarchitecture, the same ISA level, the
portable defaults. The native TableTuningSource enforces it; this module decides which
tier each stored profile belongs to.
"""

import dataclasses
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import onnx
import onnx.defs
import onnx.helper

from onnx_light import _native
from onnx_light.tuning_profiles import (  # noqa: F401  (re-exported)
    EXACT_MACHINE,
    EXPLICIT,
    INVALID,
    LOADED,
    OTHER_MACHINE,
    SAME_ISA_LEVEL,
    SAME_MICROARCHITECTURE,
    STALE_ABI,
    Profile,
    ProfileError,
    default_profile_path,
    key_abi,
    now_utc,
    parse_document,
    profile_from_json,
    read_document,
    save_profiles,
    tier_for,
)

TUNING_ABI = _native.TUNING_ABI


def schemas() -> list[dict[str, Any]]:
    """Every registered tuning schema (key, domain, op, element type, family, params)."""
    return sorted((s.to_dict() for s in _native.tuning_schemas()), key=lambda s: s["key"])


def host_processor() -> dict[str, Any]:
    return _native.host_processor().to_dict()


def host_isa() -> str:
    """The best ISA level with kernel code this CPU supports: portable, avx2, avx512, neon."""
    return _native.host_isa()


def max_isa() -> str:
    """The ISA level the kernels of this process may use (host_isa() unless capped)."""
    return _native.max_isa()


def set_max_isa(name: str) -> bool:
    """Caps the kernels' ISA level for this process, like ONNX_LIGHT_MAX_ISA: "portable",
    "avx2", "avx512" or "neon". Kernels choose their variant once, so call it before the
    first session runs; it returns False (and changes nothing) once they have chosen under
    another cap. Process-wide, hence not a CpuExecutionPolicy field."""
    return _native.set_max_isa(name)


def execution_descriptor(num_threads: int = 0, affinity: Sequence[int] = ()) -> dict[str, Any]:
    return _native.execution_descriptor(num_threads, list(affinity)).to_dict()


# ------------------------------------------------------------------------------ loading


@dataclasses.dataclass
class LoadedProfile:
    index: int
    schema_key: str
    status: str  # loaded, stale_abi, other_machine, invalid
    tier: str | None  # precedence tier when loaded
    reason: str


@dataclasses.dataclass
class LoadReport:
    path: str
    profiles: list[LoadedProfile]

    def count(self, status: str) -> int:
        return sum(1 for p in self.profiles if p.status == status)


def check_profile_values(profile: Profile) -> str | None:
    """The first value of `profile` that its schema refuses (unknown key or parameter, wrong
    type, out of bounds), as text; None when every value fits."""
    scratch = _native.TableTuningSource()
    for param, value in sorted(profile.values.items()):
        try:
            scratch.add(profile.schema_key, param, value, EXPLICIT)
        except (ValueError, TypeError) as e:
            return f"{param}: {e}"
    return None


def _apply(source: _native.TableTuningSource, profile: Profile, tier: str) -> str | None:
    """Adds a profile's values, all or none: the first error (as text) when one does not
    fit, and then nothing of the profile reaches `source` (a half-applied profile would run
    values that were never measured together)."""
    error = check_profile_values(profile)
    if error:
        return error
    for param, value in sorted(profile.values.items()):
        source.add(profile.schema_key, param, value, tier)
    return None


def _load_into(
    source: _native.TableTuningSource,
    raw_profiles: list[Any],
    path: str,
    processor: dict[str, Any],
    execution: dict[str, Any],
    explicit: bool,
) -> LoadReport:
    report = LoadReport(path, [])
    for i, raw in enumerate(raw_profiles):
        where = f"$.profiles[{i}]"
        try:
            profile = profile_from_json(raw, where)
        except ProfileError as e:
            key = raw.get("schema_key", "?") if isinstance(raw, dict) else "?"
            report.profiles.append(LoadedProfile(i, str(key), INVALID, None, str(e)))
            continue
        if explicit:
            status, tier, reason = (
                (LOADED, EXPLICIT, "given explicitly")
                if profile.tuning_abi == TUNING_ABI
                else (STALE_ABI, None, f"tuning ABI {profile.tuning_abi}, this build uses {TUNING_ABI}")
            )
        else:
            status, tier, reason = tier_for(profile, processor, execution, TUNING_ABI)
        if status == LOADED:
            error = _apply(source, profile, tier)  # type: ignore[arg-type]  # a loaded profile has a tier
            if error:
                status, tier, reason = INVALID, None, f"{where}.values.{error}"
        report.profiles.append(LoadedProfile(i, profile.schema_key, status, tier, reason))
    if explicit:
        # Values given explicitly are a demand, not a hint: one that cannot be honoured is an
        # error, never a session quietly running on the defaults instead.
        invalid = [p for p in report.profiles if p.status == INVALID]
        if invalid:
            raise ProfileError(f"{path}: {invalid[0].reason}")
    return report


ExplicitProfile = str | list[Profile] | dict[str, dict[str, Any]]


def build_tuning_source(
    profiles_path: str | None = "",
    explicit: ExplicitProfile | None = None,
    num_threads: int = 0,
    affinity: Sequence[int] = (),
    processor: dict[str, Any] | None = None,
) -> tuple[_native.TableTuningSource, list[LoadReport]]:
    """A TableTuningSource for a session with policy (num_threads, affinity), and the load
    reports. profiles_path: the machine's profile document ("" = the default path, None =
    none). explicit: a profile document path, a list of Profiles, or {schema_key: {param:
    value}}; its values outrank every stored profile (an unknown key or parameter, a wrong
    type or an out-of-bounds value raises ValueError)."""
    source = _native.TableTuningSource()
    processor = processor if processor is not None else host_processor()
    execution = execution_descriptor(num_threads, affinity)
    reports = []
    if isinstance(explicit, dict):
        for key, values in explicit.items():
            abi = key_abi(key)
            if abi is not None and abi != TUNING_ABI:
                # Values of another ABI may name parameters that no longer exist (or mean
                # something else): ignored, loudly, like a stale stored profile.
                warnings.warn(
                    f"explicit values for {key}: tuning ABI {abi}, this build uses {TUNING_ABI}; ignored as stale",
                    stacklevel=2,
                )
                continue
            if not isinstance(values, dict):
                raise ProfileError(
                    f"explicit values for {key}: expected a dict of parameter -> value, got {type(values).__name__}"
                )
            error = check_profile_values(Profile(key, {}, {}, values, TUNING_ABI))
            if error:
                raise ProfileError(f"explicit values for {key}: {error}")
            for param, value in values.items():
                source.add(key, param, value, EXPLICIT)
    elif isinstance(explicit, str):
        reports.append(_load_into(source, read_document(explicit), explicit, processor, execution, explicit=True))
    elif explicit is not None:
        reports.append(_load_into(source, [p.to_json() for p in explicit], "<given>", processor, execution, True))
    if profiles_path is not None:
        path = profiles_path or default_profile_path()
        reports.append(_load_into(source, read_document(path), path, processor, execution, explicit=False))
    return source, reports


def tuning_source(
    profiles_path: str | None = "",
    explicit: ExplicitProfile | None = None,
    num_threads: int = 0,
    affinity: Sequence[int] = (),
) -> _native.TableTuningSource:
    """The _native.TuningSource that InferenceSession(..., tuning_profile=...) takes."""
    return build_tuning_source(profiles_path, explicit, num_threads, affinity)[0]


def portable_defaults() -> _native.TableTuningSource:
    """An empty profile: a session given it runs on the portable defaults whatever profiles
    the machine holds."""
    return _native.TableTuningSource()


def machine_tuning_source(num_threads: int = 0, affinity: Sequence[int] = ()) -> _native.TableTuningSource | None:
    """What InferenceSession uses when no tuning_profile is given: the profiles that
    //tools:calibrate wrote to default_profile_path() (the documented location), by the
    precedence above, for a session with policy (num_threads, affinity). None when that file
    does not exist or no profile in it applies to this machine and policy (the portable
    defaults). A document that cannot be read is reported as a warning, and the session
    runs on the defaults: a broken cache file must not stop every session."""
    path = default_profile_path()
    if not os.path.exists(path):
        return None
    try:
        source, reports = build_tuning_source(path, None, num_threads, affinity)
    except ProfileError as e:
        warnings.warn(f"tuning profiles not loaded, portable defaults used: {e}", stacklevel=3)
        return None
    return source if any(r.count(LOADED) for r in reports) else None


def forced_parallel_tuning() -> _native.ForcedParallelTuning:
    """A TuningSource with every `parallel.*` parameter of every schema at its minimum, as an
    explicit profile (the native ForcedParallelTuning, which the kernel tests' forced mode
    uses too): every kernel that can split its work does so, at the finest grain its schema
    allows, however small the input. Run it with CpuExecutionPolicy(num_threads=N) (N > 1,
    e.g. 4) to put every parallel path through N participants:

        session = onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=4),
                                              tuning_profile=kt.forced_parallel_tuning())

    Deterministic kernels must then give the serial result bit for bit; the conformance
    suite checks that (python/tests/conformance.py, policy "forced_parallel")."""
    return _native.ForcedParallelTuning()


def inspect_profiles(path: str | None = None, num_threads: int = 0, affinity: Sequence[int] = ()) -> LoadReport:
    """How each profile of a document would load here (status, tier, reason)."""
    path = path or default_profile_path()
    return build_tuning_source(path, None, num_threads, affinity)[1][-1]


def current_values(
    source: _native.TableTuningSource | _native.ForcedParallelTuning | None = None,
) -> list[dict[str, Any]]:
    """Per schema and parameter: the resolved value, where it came from, default, meaning."""
    source = source if source is not None else _native.TableTuningSource()
    rows = []
    for schema in schemas():
        resolved = source.resolve(schema["key"])
        for p in schema["params"]:
            value, origin = resolved[p["name"]]
            rows.append(
                {
                    "schema_key": schema["key"],
                    "op": schema["op"],
                    "element_type": schema["element_type"],
                    "param": p["name"],
                    "value": value,
                    "source": origin,
                    "default": p["default"],
                    "meaning": p["meaning"],
                    "calibratable": schema["calibratable"],
                }
            )
    return rows


def profiled_values(
    path: str | None = None, num_threads: int = 0, affinity: Sequence[int] = ()
) -> list[tuple[str, str, int | float | bool | str]]:
    """(schema key, parameter, value) of every value that the profiles at `path` (default:
    default_profile_path()) give a session with policy (num_threads, affinity), by the
    precedence above: what such a session runs with instead of the portable defaults.
    Empty when no profile applies (or the file does not exist)."""
    source, _ = build_tuning_source(path or default_profile_path(), None, num_threads, affinity)
    return [
        (row["schema_key"], row["param"], row["value"])
        for row in current_values(source)
        if row["source"] != "portable_default"
    ]


# --------------------------------------------------------------------------- kernel runs


def _to_triple(array: np.ndarray | tuple) -> tuple:
    if isinstance(array, tuple):
        return array  # already (bytes, shape, onnx_type)
    array = np.ascontiguousarray(array)
    return (array.tobytes(), list(array.shape), onnx.helper.np_dtype_to_tensor_dtype(array.dtype))


def _from_triple(triple: tuple | None) -> np.ndarray | None:
    if triple is None:
        return None
    data, shape, onnx_type = triple
    dtype = onnx.helper.tensor_dtype_to_np_dtype(onnx_type)
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


def run_kernel(
    op: str,
    inputs: Sequence[np.ndarray | None],
    opset: int,
    domain: str = "",
    attributes: dict[str, Any] | None = None,
    tuning: dict[str, Any] | None = None,
    num_threads: int = 1,
    num_outputs: int = 1,
    memory_limit: int = 0,
    tuning_source: _native.TuningSource | None = None,
) -> dict[str, Any]:
    """Runs one registered kernel on numpy inputs (None = an absent optional input) with
    `num_threads` participants, its tuning resolved through `tuning_source` (default: the
    portable defaults) and then `tuning` overrides. Returns outputs (numpy), region
    events, compute_ns and allocation stats."""
    result = _native.run_kernel(
        op,
        opset,
        domain,
        [None if a is None else _to_triple(a) for a in inputs],
        dict(attributes or {}),
        dict(tuning or {}),
        num_threads,
        num_outputs,
        "run_kernel",
        memory_limit,
        tuning_source,
    ).to_dict()
    result["outputs"] = [_from_triple(t) for t in result["outputs"]]
    return result


# ---------------------------------------------------------------------------- calibration


@dataclasses.dataclass
class CalibrationBudget:
    time_ms: float = 2000.0
    memory_mb: float = 256.0
    threads: int = 0  # participants of the parallel candidate; 0: the execution policy's threads

    def validate(self) -> None:
        if not self.time_ms > 0:
            raise ValueError(f"calibration budget: time_ms must be positive, got {self.time_ms}")
        if not self.memory_mb > 0:
            raise ValueError(f"calibration budget: memory_mb must be positive, got {self.memory_mb}")
        if self.threads < 0:
            raise ValueError(f"calibration budget: threads must be >= 0, got {self.threads}")


@dataclasses.dataclass
class CalibrationResult:
    reports: list[dict[str, Any]]
    profiles: list[Profile]
    spent_ns: int
    budget_ns: int
    skipped: list[str]


def select_schemas(
    ops: Iterable[str] | None = None, element_types: Iterable[str] | None = None, domain: str | None = None
) -> list[dict[str, Any]]:
    """Calibratable schemas of the given ops / element types (None: all); unknown op names
    raise ValueError."""
    chosen = [s for s in schemas() if s["calibratable"]]
    if domain is not None:
        chosen = [s for s in chosen if s["domain"] == domain]
    if ops is not None:
        ops = list(ops)
        known = {s["op"] for s in schemas()}
        unknown = [op for op in ops if op not in known]
        if unknown:
            raise ValueError(f"no registered kernel has a tuning schema for op(s) {', '.join(unknown)}")
        chosen = [s for s in chosen if s["op"] in ops]
    if element_types is not None:
        element_types = set(element_types)
        chosen = [s for s in chosen if s["element_type"] in element_types]
    return chosen


# Benign values for attributes that ops require (no default in onnx.defs), so that the
# generic calibrator can run them.
_REQUIRED_ATTRIBUTES = {
    ("ai.onnx", "BitShift"): {"direction": "LEFT"},
}


def _same_shaped_inputs(schema: dict[str, Any]) -> int:
    """Input count for the elementwise calibrator from onnx.defs (0: let it probe)."""
    domain = "" if schema["domain"] == "ai.onnx" else schema["domain"]
    try:
        op_schema = onnx.defs.get_schema(schema["op"], domain=domain)
    except onnx.defs.SchemaError:
        return 0
    return op_schema.min_input


def calibrate(
    ops: Iterable[str] | None = None,
    element_types: Iterable[str] | None = None,
    budget: CalibrationBudget | None = None,
    num_threads: int = 0,
    affinity: Sequence[int] = (),
    output: str | None = None,
    revision: str = "",
    min_size: int = 1 << 10,
    max_size: int = 1 << 24,
    repetitions: int = 5,
    margin: float = 0.10,
    domain: str | None = None,
    progress: Callable[[int, int, dict[str, Any], dict[str, Any] | None], None] | None = None,
) -> CalibrationResult:
    """Calibrates the selected calibratable schemas within `budget` (shared: each schema
    gets an equal part of what is left) and returns the reports and profiles; writes them
    to `output` (merging) when given."""
    budget = budget or CalibrationBudget()
    budget.validate()
    # The profile is keyed by the participants the parallel candidate really used.
    execution = execution_descriptor(budget.threads or num_threads, affinity)
    threads = execution["threads"]
    processor = host_processor()
    selected = select_schemas(ops, element_types, domain)
    total_ns = int(budget.time_ms * 1e6)
    memory_bytes = int(budget.memory_mb * (1 << 20))
    spent = 0
    reports, profiles, skipped = [], [], []
    for i, schema in enumerate(selected):
        load_before = os.getloadavg()[0]
        remaining = total_ns - spent
        share = remaining // (len(selected) - i)
        if progress:
            progress(i, len(selected), schema, None)
        if share <= 0:
            skipped.append(f"{schema['key']}: no time budget left")
            continue
        try:
            report = _native.calibrate(
                schema["key"],
                share,
                memory_bytes,
                threads,
                min_size,
                max_size,
                repetitions,
                margin,
                _same_shaped_inputs(schema),
                0,
                _REQUIRED_ATTRIBUTES.get((schema["domain"], schema["op"]), {}),
            ).to_dict()
        except (ValueError, NotImplementedError, _native.InternalError) as e:
            # InternalError: the generic calibrator cannot drive this op (e.g. it asks for
            # one output where DynamicQuantizeLinear has three); the schema keeps its
            # defaults and the summary lists it, rather than ending the whole calibration.
            skipped.append(f"{schema['key']}: {e}")
            continue
        spent += report["budget"]["spent_ns"]
        reports.append(report)
        values = {c["name"]: c["selected"] for c in report["choices"] if c["changed"]}
        profiles.append(
            Profile(
                schema_key=schema["key"],
                processor=processor,
                execution=execution,
                values=values,
                tuning_abi=TUNING_ABI,
                evidence=_evidence(report, margin, repetitions, (load_before, os.getloadavg()[0])),
                revision=revision,
                created=now_utc(),
            )
        )
        if progress:
            progress(i + 1, len(selected), schema, report)
    for profile in profiles:  # never write a profile that loading would refuse
        error = check_profile_values(profile)
        if error:
            raise ProfileError(f"calibration produced a profile its schema refuses: {profile.schema_key} {error}")
    if output:
        save_profiles(output, profiles)
    return CalibrationResult(reports, profiles, spent, total_ns, skipped)


def _evidence(report: dict[str, Any], margin: float, repetitions: int, load: tuple[float, float]) -> dict[str, Any]:
    # The 1-minute load average before and after: a profile measured on a busy machine
    # says so (parallel candidates lose when other processes hold the cores).
    return {
        "calibrator": report["calibrator"],
        "margin": margin,
        "repetitions": repetitions,
        "load_average": list(load),
        "choices": report["choices"],
        "crossover": report["evidence"]["crossover"],
        "stop_reason": report["evidence"]["stop_reason"],
        "rejected": report["evidence"]["rejected"],
        "sizes": report["evidence"]["sizes"],
        "confirmations": report["evidence"]["confirmations"],
        "budget": report["budget"],
    }
