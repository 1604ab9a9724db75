"""Tuning profiles: one versioned JSON document of calibrated values per machine.

Each profile holds a schema key, the processor and execution descriptors it was measured
on, the values, the tuning ABI, the raw evidence and the source revision. Writes are
atomic (temp file in the same directory, fsync, rename) under an exclusive flock on a
side lock file, merging with what is on disk, so concurrent writers lose nothing.
Loading classifies every profile: loaded (with its precedence tier), stale_abi,
other_machine or invalid. A corrupt file raises ProfileError naming the place (line and
column, or JSON path) and is never rewritten.
"""

import contextlib
import dataclasses
import datetime
import fcntl
import json
import math
import os
import tempfile
from collections.abc import Iterator
from typing import Any

FORMAT = "onnx-light-tuning-profiles"
FORMAT_VERSION = 1

# Precedence tiers (the native ValueSource names), highest first.
EXPLICIT = "explicit_profile"
EXACT_MACHINE = "exact_machine"
SAME_MICROARCHITECTURE = "same_microarchitecture"
SAME_ISA_LEVEL = "same_isa_level"

LOADED = "loaded"
STALE_ABI = "stale_abi"
OTHER_MACHINE = "other_machine"
INVALID = "invalid"


class ProfileError(ValueError):
    """A profile document that cannot be read; the message names the file and the place."""


def default_profile_path() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "onnx-light", "tuning_profiles.json")


@dataclasses.dataclass
class Profile:
    schema_key: str
    processor: dict[str, Any]
    execution: dict[str, Any]
    values: dict[str, Any]
    tuning_abi: int
    evidence: dict[str, Any] = dataclasses.field(default_factory=dict)
    revision: str = ""
    created: str = ""

    def identity(self) -> tuple[str, str, str, int]:
        """Profiles with the same identity replace each other when merged."""
        return (self.schema_key, _canonical(self.processor), _canonical(self.execution), self.tuning_abi)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def now_utc() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


_FIELDS = {
    "schema_key": str,
    "processor": dict,
    "execution": dict,
    "values": dict,
    "tuning_abi": int,
    "evidence": dict,
    "revision": str,
    "created": str,
}
_REQUIRED = ("schema_key", "processor", "execution", "values", "tuning_abi")


def profile_from_json(obj: Any, where: str) -> Profile:
    """Checks one profile's structure; ProfileError with the JSON path of what is wrong."""
    if not isinstance(obj, dict):
        raise ProfileError(f"{where}: expected an object, got {type(obj).__name__}")
    for name in _REQUIRED:
        if name not in obj:
            raise ProfileError(f"{where}.{name}: missing")
    unknown = sorted(set(obj) - set(_FIELDS))
    if unknown:
        raise ProfileError(f"{where}.{unknown[0]}: unknown field")
    for name, kind in _FIELDS.items():
        if name in obj and (not isinstance(obj[name], kind) or (kind is int and isinstance(obj[name], bool))):
            raise ProfileError(f"{where}.{name}: expected {kind.__name__}, got {type(obj[name]).__name__}")
    for param, value in obj["values"].items():
        if not isinstance(value, (bool, int, float, str)):
            raise ProfileError(f"{where}.values.{param}: expected a number, bool or string, got {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ProfileError(f"{where}.values.{param}: {value} is not a finite number")
    for name in ("threads",):
        if not isinstance(obj["execution"].get(name), int):
            raise ProfileError(f"{where}.execution.{name}: expected int")
    for name in ("architecture", "isa_level"):
        if not isinstance(obj["processor"].get(name), str):
            raise ProfileError(f"{where}.processor.{name}: expected str")
    return Profile(**obj)


def parse_document(text: str, path: str) -> list[Any]:
    """The raw profile objects of a document; ProfileError for a corrupt or foreign file."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); file left as is") from None
    if not isinstance(doc, dict):
        raise ProfileError(f"{path}: $: expected an object, got {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise ProfileError(f"{path}: $.format: expected {FORMAT!r}, got {doc.get('format')!r}")
    if doc.get("version") != FORMAT_VERSION:
        raise ProfileError(f"{path}: $.version: this build reads version {FORMAT_VERSION}, got {doc.get('version')!r}")
    profiles = doc.get("profiles")
    if not isinstance(profiles, list):
        raise ProfileError(f"{path}: $.profiles: expected a list")
    return profiles


def read_document(path: str) -> list[Any]:
    """Raw profile objects on disk; [] when the file does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    except UnicodeDecodeError as e:
        raise ProfileError(f"{path}: byte {e.start}: not UTF-8 text; file left as is") from None
    return parse_document(text, path)


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path + ".lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _write_atomically(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".tuning_profiles.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def save_profiles(path: str, profiles: list[Profile]) -> int:
    """Merges `profiles` into the document at `path` (same identity: replaced) atomically,
    under the lock. Returns the number of profiles in the document. A corrupt document is
    not overwritten: ProfileError."""
    for i, profile in enumerate(profiles):  # what loading would call invalid is never written
        profile_from_json(profile.to_json() if isinstance(profile, Profile) else profile, f"<to save>[{i}]")
    with _locked(path):
        existing = read_document(path)
        new_ids = {p.identity() for p in profiles}
        kept = []
        for i, raw in enumerate(existing):
            try:
                if profile_from_json(raw, f"$.profiles[{i}]").identity() in new_ids:
                    continue
            except ProfileError:
                pass  # an invalid entry is kept as it is: it is reported on load, not dropped
            kept.append(raw)
        merged = kept + [p.to_json() for p in profiles]
        doc = {"format": FORMAT, "version": FORMAT_VERSION, "profiles": merged}
        _write_atomically(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
        return len(merged)


def key_abi(schema_key: str) -> int | None:
    """The tuning ABI a schema key ends with ("...@2" -> 2); None when it has none."""
    _, at, abi = schema_key.rpartition("@")
    return int(abi) if at and abi.isdigit() else None


def tier_for(
    profile: Profile, processor: dict[str, Any], execution: dict[str, Any], abi: int
) -> tuple[str, str | None, str]:
    """(status, tier or None, reason) of a profile for this machine and execution policy."""
    if profile.tuning_abi != abi:
        return STALE_ABI, None, f"tuning ABI {profile.tuning_abi}, this build uses {abi}"
    p, mine = profile.processor, processor
    if p == mine and profile.execution == execution:
        return LOADED, EXACT_MACHINE, "same processor and execution descriptor"
    if profile.execution.get("threads") != execution.get("threads"):
        return (
            OTHER_MACHINE,
            None,
            (f"measured with {profile.execution.get('threads')} threads, this policy has {execution.get('threads')}"),
        )
    same_arch = p.get("architecture") == mine.get("architecture") and p.get("vendor") == mine.get("vendor")
    if same_arch and p.get("microarchitecture") and p.get("microarchitecture") == mine.get("microarchitecture"):
        return LOADED, SAME_MICROARCHITECTURE, f"same microarchitecture {p['microarchitecture']}"
    if (
        same_arch
        and not mine.get("microarchitecture")
        and (p.get("family"), p.get("model")) == (mine.get("family"), mine.get("model"))
    ):
        return LOADED, SAME_MICROARCHITECTURE, f"same family/model {p.get('family')}/{p.get('model')}"
    if p.get("architecture") == mine.get("architecture") and p.get("isa_level") == mine.get("isa_level"):
        return LOADED, SAME_ISA_LEVEL, f"same ISA level {p['isa_level']}"
    return (
        OTHER_MACHINE,
        None,
        (
            f"{p.get('architecture')} {p.get('vendor')} {p.get('isa_level')} "
            f"is not this {mine.get('architecture')} {mine.get('vendor')} {mine.get('isa_level')}"
        ),
    )
