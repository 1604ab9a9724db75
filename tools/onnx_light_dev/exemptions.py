"""Serial exemptions: one reviewed disposition file per implementation family.

    exemptions/<family>.json
    {
      "family": "sequence",
      "exemptions": [
        {
          "domain": "ai.onnx", "op": "SequenceAt", "element_types": ["*"],
          "category": "ordered/control-flow",
          "reason": "<the dependency that prevents partitioning, or the benchmark shapes>",
          "revisit": "<the size or semantic boundary at which to look again>",
          "fingerprint": "sha256:<64 hex>",        # the family implementation reviewed
          "evidence": {
            "revision": "<40 hex>", "processor": {...}, "policy": {...},
            "measurements": [{"case": "...", "inputs": "float[3,4]", "participants": 1,
                              "samples_ns": [812, 790, ...]}]
          }
        }
      ]
    }

Measurements are required for the categories whose argument is a benchmark (tiny payload,
unsupported benchmark); for the others the stated dependency is the argument.
"""

import dataclasses
import json
import os
import re
from typing import Any

from onnx_light_dev import fingerprint as fingerprint_lib

ORDERED = "ordered/control-flow"
METADATA_ONLY = "metadata-only"
TINY_PAYLOAD = "tiny payload"
CONFLICTING_WRITES = "conflicting writes"
DETERMINISTIC_RNG = "deterministic RNG"
UNSUPPORTED_BENCHMARK = "unsupported benchmark"
CATEGORIES = (ORDERED, METADATA_ONLY, TINY_PAYLOAD, CONFLICTING_WRITES, DETERMINISTIC_RNG, UNSUPPORTED_BENCHMARK)
NEEDS_MEASUREMENTS = (TINY_PAYLOAD, UNSUPPORTED_BENCHMARK)

TODO = "TODO(reviewer)"
_ENTRY_KEYS = ("domain", "op", "element_types", "category", "reason", "revisit", "fingerprint", "evidence")
_EVIDENCE_KEYS = ("revision", "processor", "policy", "measurements", "build", "load")
_MEASUREMENT_KEYS = ("case", "inputs", "participants", "samples_ns")
_REVISION = re.compile(r"^[0-9a-f]{40}$")

_RNG_REASON = (
    "Consumes one ordered pseudo-random stream: splitting the output across workers "
    "would change which stream position feeds which element (and how many draws "
    "rejection sampling consumes), so seeded runs would lose their bit-for-bit sequence."
)
_RNG_REVISIT = "When a counter-based or skip-ahead generator replaces the sequential stream (the plan introduces none)."
_SHAPE_REASON = (
    "The output is computed from the input's shape alone; no element of the payload "
    "is read, so there is no per-element work to partition."
)
_SHAPE_REVISIT = "If the kernel ever reads or copies the input payload."
_CONTROL_FLOW_REASON = (
    "Runs subgraphs through the session: If one branch, Loop and Scan one iteration "
    "after another, each consuming the state the previous one produced. The "
    "subgraphs' own kernels use the session executor; the node has no "
    "independent payload work of its own to partition."
)
_CONTROL_FLOW_REVISIT = (
    "If Scan/Loop iterations without carried state become common in the model "
    "corpus (they could run as independent tasks)."
)

# Dispositions the writer fills in because they follow from the op's definition, not from
# its implementation (every other op needs a reviewer):
#   - the six random generators are serial by design (plan, "Random generators"),
#   - Shape and Size read only shape metadata,
#   - If, Loop and Scan are control flow over subgraphs.
DERIVED_DISPOSITIONS = {
    **{
        ("ai.onnx", op): (DETERMINISTIC_RNG, _RNG_REASON, _RNG_REVISIT)
        for op in ("RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial")
    },
    **{("ai.onnx", op): (METADATA_ONLY, _SHAPE_REASON, _SHAPE_REVISIT) for op in ("Shape", "Size")},
    **{("ai.onnx", op): (ORDERED, _CONTROL_FLOW_REASON, _CONTROL_FLOW_REVISIT) for op in ("If", "Loop", "Scan")},
}


@dataclasses.dataclass
class ExemptionFile:
    family: str  # from the file name
    path: str
    doc: object = None  # parsed JSON; None when it does not parse
    parse_error: str = ""


def is_todo(value: Any) -> bool:
    return isinstance(value, str) and value.strip().startswith("TODO")


def file_name(family: str) -> str:
    return f"{family}.json"


def load_exemption_files(directory: str) -> dict[str, ExemptionFile]:
    """{family: ExemptionFile} for every exemptions/<family>.json (missing dir: none)."""
    files = {}
    if not os.path.isdir(directory):
        return files
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(directory, name)
        exemption_file = ExemptionFile(family=name[: -len(".json")], path=path)
        try:
            with open(path, encoding="utf-8") as f:
                exemption_file.doc = json.load(f)
        except (OSError, ValueError) as e:
            exemption_file.parse_error = str(e)
        files[exemption_file.family] = exemption_file
    return files


def entries(exemption_file: ExemptionFile) -> list[dict[str, Any]]:
    """The well-shaped entries of a parsed file (validate() reports the others)."""
    doc = exemption_file.doc
    if not isinstance(doc, dict) or not isinstance(doc.get("exemptions"), list):
        return []
    return [e for e in doc["exemptions"] if isinstance(e, dict)]


def entry_name(entry: dict[str, Any], family: str) -> str:
    types = entry.get("element_types")
    types = ",".join(map(str, types)) if isinstance(types, list) else "?"
    return f"{entry.get('domain', '?')}::{entry.get('op', '?')}[{types}] ({family})"


def _text_error(entry: dict[str, Any], key: str, what: str) -> str | None:
    value = entry.get(key)
    if is_todo(value):
        return f"'{key}' is still a TODO marker: write {what}"
    if not isinstance(value, str) or not value.strip():
        return f"'{key}' must be a non-empty string: {what}"
    return None


def _measurement_errors(measurement: Any, index: int) -> list[str]:
    prefix = f"evidence.measurements[{index}]"
    if not isinstance(measurement, dict):
        return [f"{prefix} must be an object with {', '.join(_MEASUREMENT_KEYS)}"]
    errors = [f"{prefix}: unknown field '{k}'" for k in measurement if k not in _MEASUREMENT_KEYS]
    for key in ("case", "inputs"):
        if not isinstance(measurement.get(key), str) or not measurement[key].strip():
            errors.append(f"{prefix}.{key} must be a non-empty string")
    participants = measurement.get("participants")
    if not isinstance(participants, int) or isinstance(participants, bool) or participants < 1:
        errors.append(f"{prefix}.participants must be an integer >= 1")
    samples = measurement.get("samples_ns")
    if (
        not isinstance(samples, list)
        or not samples
        or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in samples)
    ):
        errors.append(f"{prefix}.samples_ns must be a non-empty list of positive integers (raw ns)")
    return errors


def entry_errors(entry: Any) -> list[str]:
    """Field errors of one entry: each a sentence naming the field and what it must hold."""
    if not isinstance(entry, dict):
        return ["an exemption must be an object"]
    errors = [f"unknown field '{k}' (allowed: {', '.join(_ENTRY_KEYS)})" for k in entry if k not in _ENTRY_KEYS]
    for key in ("domain", "op"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            errors.append(f"'{key}' must be a non-empty string")
    types = entry.get("element_types")
    if (
        not isinstance(types, list)
        or not types
        or not all(isinstance(t, str) and t for t in types)
        or len(set(types)) != len(types)
    ):
        errors.append(
            "'element_types' must be a non-empty list of distinct element type names ('*' for an untyped kernel)"
        )
    category = entry.get("category")
    if category not in CATEGORIES:
        state = "is still a TODO marker" if is_todo(category) else f"is {category!r}"
        errors.append(f"'category' {state}: choose one of {', '.join(repr(c) for c in CATEGORIES)}")
    for key, what in (
        (
            "reason",
            "the dependency that prevents partitioning, or the benchmark shapes where worker overhead dominates",
        ),
        ("revisit", "the size or semantic boundary at which to revisit"),
    ):
        error = _text_error(entry, key, what)
        if error:
            errors.append(error)
    if not isinstance(entry.get("fingerprint"), str) or not fingerprint_lib.FINGERPRINT_PATTERN.match(
        entry["fingerprint"]
    ):
        errors.append(f"'fingerprint' is {entry.get('fingerprint')!r}, not 'sha256:' + 64 lowercase hex")
    errors.extend(_evidence_errors(entry.get("evidence"), category))
    return errors


def _evidence_errors(evidence: Any, category: str | None) -> list[str]:
    if not isinstance(evidence, dict):
        return ["'evidence' must be an object with revision, processor, policy, measurements"]
    errors = [f"unknown field 'evidence.{k}'" for k in evidence if k not in _EVIDENCE_KEYS]
    if not isinstance(evidence.get("revision"), str) or not _REVISION.match(evidence["revision"]):
        errors.append(f"'evidence.revision' is {evidence.get('revision')!r}, not a 40-hex git commit")
    for key in ("processor", "policy"):
        if not isinstance(evidence.get(key), dict) or not evidence[key]:
            errors.append(f"'evidence.{key}' must be a non-empty object")
    measurements = evidence.get("measurements")
    if not isinstance(measurements, list):
        errors.append(
            "'evidence.measurements' must be a list (may be empty unless the category is a benchmark argument)"
        )
        return errors
    for index, measurement in enumerate(measurements):
        errors.extend(_measurement_errors(measurement, index))
    if category in NEEDS_MEASUREMENTS and not measurements:
        errors.append(
            f"category {category!r} is a benchmark argument: 'evidence.measurements' needs "
            "raw samples (run the template writer where a kernel runner exists, or paste "
            "kernel_baseline samples)"
        )
    return errors


def file_errors(exemption_file: ExemptionFile) -> list[str]:
    """Errors of the file as a whole (parse, top-level shape); entries are checked apart."""
    if exemption_file.parse_error:
        return [f"does not parse as JSON: {exemption_file.parse_error}"]
    doc = exemption_file.doc
    if not isinstance(doc, dict):
        return ["must be a JSON object with 'family' and 'exemptions'"]
    errors = [f"unknown top-level field '{k}'" for k in doc if k not in ("family", "exemptions")]
    if doc.get("family") != exemption_file.family:
        errors.append(
            f"'family' is {doc.get('family')!r} but the file is named for "
            f"{exemption_file.family!r}: one file per family, named <family>.json"
        )
    if not isinstance(doc.get("exemptions"), list):
        errors.append("'exemptions' must be a list")
    return errors


# ---- templates and writing -----------------------------------------------------------


def template_entry(
    domain: str, op: str, element_types: list[str], family_fingerprint: str, evidence: dict[str, Any] | None
) -> dict[str, Any]:
    """A new entry: derived fields filled, human fields TODO (see DERIVED_DISPOSITIONS)."""
    category, reason, revisit = DERIVED_DISPOSITIONS.get(
        (domain, op),
        (
            f"{TODO}: one of {' | '.join(CATEGORIES)}",
            f"{TODO}: the dependency that prevents partitioning, or the shapes where worker overhead dominates",
            f"{TODO}: the size or semantic boundary at which to revisit",
        ),
    )
    return {
        "domain": domain,
        "op": op,
        "element_types": sorted(element_types),
        "category": category,
        "reason": reason,
        "revisit": revisit,
        "fingerprint": family_fingerprint,
        "evidence": evidence,
    }


def _sort_key(entry: dict[str, Any]) -> tuple[str, str, str]:
    return (str(entry.get("domain")), str(entry.get("op")), str(entry.get("element_types")))


def format_json(value: Any, indent: int = 0) -> str:
    """JSON with two-space indentation; lists of scalars (samples, types) and short objects
    of scalars (processor, policy) on one line."""
    pad, inner = "  " * indent, "  " * (indent + 1)
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if isinstance(value, dict) and not any(isinstance(v, (dict, list)) for v in value.values()) and len(flat) <= 100:
        return flat
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {format_json(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + format_json(v, indent + 1) for v in value) + "\n" + pad + "]"
    return flat


def dumps(family: str, exemption_entries: list[dict[str, Any]]) -> str:
    """The canonical text of a family's file (stable order and formatting)."""
    doc = {"family": family, "exemptions": sorted(exemption_entries, key=_sort_key)}
    return format_json(doc) + "\n"
