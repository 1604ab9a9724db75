"""The kernel inventory: every kernel path with its coverage state, derived from

  * the native registry (onnx_light.registered_kernels(): op, opset range, family,
    element types, tuning schema, calibratable),
  * the build (each kernel_family writes <family>_manifest.json: package, label, sources),
  * the sources (ParallelFor call sites, fingerprint).

A path is (domain, op, element type, family); the opset ranges of one op and type are one
path. Nothing here is kept by hand.
"""

import collections
import csv
import dataclasses
import io
import json
import os
from collections.abc import Collection, Iterable
from typing import Any

from onnx_light_dev import fingerprint

CALIBRATABLE = "calibratable"
TUNABLE = "tunable"
PARALLEL_FIXED_POLICY = "parallel_fixed_policy"
SERIAL = "serial"
STATES = (CALIBRATABLE, TUNABLE, PARALLEL_FIXED_POLICY, SERIAL)
STATE_MEANINGS = {
    CALIBRATABLE: "A tuning schema and bounded calibration callback are registered.",
    TUNABLE: "A tuning schema exists; no runtime calibration callback is registered.",
    PARALLEL_FIXED_POLICY: "ParallelFor without a tuning schema: forbidden.",
    SERIAL: "No schema and no ParallelFor call site in the family: needs a reviewed exemption.",
}
# A path whose opset ranges disagree takes the state of its weakest range.
_WEAKEST_FIRST = (PARALLEL_FIXED_POLICY, SERIAL, TUNABLE, CALIBRATABLE)
UNTYPED = "*"
MANIFEST_SUFFIX = "_manifest.json"


@dataclasses.dataclass(frozen=True)
class Problem:
    """Something structurally wrong with the build or the registrations."""

    message: str
    remedy: str


@dataclasses.dataclass
class Family:
    name: str
    label: str
    package: str
    sources: list
    # Sources of kernel helper libraries the family builds on: fingerprinted, but their
    # ParallelFor calls are their own families' call sites, not this family's.
    shared_sources: list = dataclasses.field(default_factory=list)
    fingerprint: str = ""
    call_sites: list = dataclasses.field(default_factory=list)

    @property
    def calls_parallel_for(self) -> bool:
        return bool(self.call_sites)


@dataclasses.dataclass
class KernelPath:
    domain: str
    op: str
    element_type: str
    family: str
    state: str
    opsets: list  # ["1-12", "13-"]
    tuning: list  # parameter names of the schema (union over opset ranges)
    calls_parallel_for: bool
    sources: list
    fingerprint: str
    disposition: str = ""  # serial paths: "<category>" or "MISSING"; filled by attach_dispositions

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.domain, self.op, self.element_type, self.family)

    def name(self) -> str:
        return f"{self.domain}::{self.op}[{self.element_type}] ({self.family})"


@dataclasses.dataclass
class Inventory:
    paths: list
    families: dict  # name -> Family (every manifest)
    problems: list  # [Problem]

    def counts(self) -> dict[str, int]:
        counts = collections.Counter(p.state for p in self.paths)
        return {state: counts.get(state, 0) for state in STATES}

    def family_counts(self) -> dict[str, dict[str, int]]:
        """{family: {state: count}} over every family with a manifest or a registration."""
        out = {name: {s: 0 for s in STATES} for name in self.families}
        for p in self.paths:
            out.setdefault(p.family, {s: 0 for s in STATES})[p.state] += 1
        return dict(sorted(out.items()))

    def filtered(self, families: Collection[str] = (), states: Collection[str] = ()) -> list[KernelPath]:
        return [p for p in self.paths if (not families or p.family in families) and (not states or p.state in states)]


def find_manifests(root: str, under: str = "native/kernels") -> list[str]:
    """Every <family>_manifest.json below root/under (a runfiles tree or a workspace)."""
    found = []
    for directory, _, files in os.walk(os.path.join(root, under)):
        found.extend(os.path.join(directory, f) for f in files if f.endswith(MANIFEST_SUFFIX))
    return sorted(found)


def load_manifests(manifest_files: Iterable[str], root: str) -> tuple[dict[str, Family], list[Problem]]:
    """Families from manifest files; sources are read relative to root.

    Returns (families, problems)."""
    families, problems = {}, []
    for manifest_file in manifest_files:
        with open(manifest_file, encoding="utf-8") as f:
            data = json.load(f)
        family = Family(
            name=data["family"],
            label=data["label"],
            package=data["package"],
            sources=sorted(data["sources"]),
            shared_sources=sorted(data.get("shared_sources", [])),
        )
        if family.name in families:
            problems.append(
                Problem(
                    f"family {family.name!r} has two manifests ({families[family.name].label}, {family.label})",
                    "rename one kernel_family target",
                )
            )
            continue
        texts = {}
        for source in family.sources + family.shared_sources:
            try:
                with open(os.path.join(root, source), encoding="utf-8") as f:
                    texts[source] = f.read()
            except OSError as e:
                problems.append(
                    Problem(
                        f"family {family.name!r}: cannot read source {source} ({e.strerror})",
                        "the manifest's runfiles must include its sources (list the manifests in `data`)",
                    )
                )
        family.fingerprint = fingerprint.family_fingerprint(texts)
        family.call_sites = [
            site
            for source in family.sources
            if source in texts
            for site in fingerprint.parallel_for_call_sites(source, texts[source])
        ]
        families[family.name] = family
    return families, problems


def _def_state(kernel_def: dict[str, Any], calls_parallel_for: bool) -> str:
    if kernel_def.get("tuning"):
        return CALIBRATABLE if kernel_def.get("calibratable") else TUNABLE
    return PARALLEL_FIXED_POLICY if calls_parallel_for else SERIAL


def _opset_range(kernel_def: dict[str, Any]) -> str:
    end = kernel_def["end_version"]
    return f"{kernel_def['since_version']}-{'' if end is None or end < 0 else end}"


def build_kernel_inventory(
    registry: Iterable[dict[str, Any]], families: dict[str, Family], problems: Iterable[Problem] = ()
) -> Inventory:
    """The inventory from registry dicts (KernelRegistration.to_dict() of onnx_light.registered_kernels())
    and families."""
    problems = list(problems)
    grouped = collections.defaultdict(list)
    for kernel_def in registry:
        for element_type in kernel_def["element_types"] or [UNTYPED]:
            grouped[(kernel_def["domain"] or "ai.onnx", kernel_def["op"], element_type, kernel_def["family"])].append(
                kernel_def
            )

    registered_families = {key[3] for key in grouped}
    for name in sorted(registered_families - set(families)):
        problems.append(
            Problem(
                f"family {name!r} has registered kernels but no manifest",
                "declare it with kernel_family() and add its label to native/kernels/families.bzl",
            )
        )
    for name in sorted(set(families) - registered_families):
        problems.append(
            Problem(
                f"family {name!r} ({families[name].label}) has a manifest but registers no kernel",
                "check the family names in its OL_REGISTER_KERNELS, or remove it from native/kernels/families.bzl",
            )
        )

    paths = []
    for key in sorted(grouped, key=lambda k: (k[3], k[0], k[1], k[2])):  # by family
        defs = sorted(grouped[key], key=lambda d: d["since_version"])
        family = families.get(key[3])
        calls = family.calls_parallel_for if family else False
        states = {_def_state(d, calls) for d in defs}
        state = next(s for s in _WEAKEST_FIRST if s in states)
        if len(states) > 1:
            problems.append(
                Problem(
                    f"{key[1]}[{key[2]}] ({key[3]}): opset ranges disagree on the tuning "
                    f"schema ({', '.join(sorted(states))})",
                    "give every range the same schema",
                )
            )
        tuning = sorted({p["name"] for d in defs for p in d.get("tuning", [])})
        paths.append(
            KernelPath(
                domain=key[0],
                op=key[1],
                element_type=key[2],
                family=key[3],
                state=state,
                opsets=[_opset_range(d) for d in defs],
                tuning=tuning,
                calls_parallel_for=calls,
                sources=family.sources if family else [],
                fingerprint=family.fingerprint if family else "",
            )
        )
    return Inventory(paths=paths, families=families, problems=problems)


# ---- output ---------------------------------------------------------------------------

_COLUMNS = (
    "domain",
    "op",
    "element_type",
    "family",
    "state",
    "calls_parallel_for",
    "tuning",
    "opsets",
    "fingerprint",
    "disposition",
    "sources",
)


def _row(path: KernelPath) -> dict[str, Any]:
    return {c: getattr(path, c) for c in _COLUMNS}


def summary_table(inventory: Inventory) -> str:
    counts = inventory.counts()
    lines = [f"{'Coverage state':<22} {'Paths':>6}  Meaning"]
    for state in STATES:
        lines.append(f"{state:<22} {counts[state]:>6}  {STATE_MEANINGS[state]}")
    lines.append(f"{'total':<22} {len(inventory.paths):>6}  in {len(inventory.family_counts())} families")
    return "\n".join(lines)


def format_text(inventory: Inventory, paths: list[KernelPath]) -> str:
    lines = [summary_table(inventory), ""]
    for problem in inventory.problems:
        lines.append(f"PROBLEM: {problem.message}\n    -> {problem.remedy}")
    if inventory.problems:
        lines.append("")
    lines.append(
        f"{'family':<20} {'domain':<10} {'op':<24} {'type':<10} {'state':<22} "
        f"{'PF':<3} {'opsets':<12} disposition / tuning"
    )
    for p in paths:
        detail = ",".join(p.tuning) if p.tuning else p.disposition
        lines.append(
            f"{p.family:<20} {p.domain:<10} {p.op:<24} {p.element_type:<10} {p.state:<22} "
            f"{'yes' if p.calls_parallel_for else 'no':<3} {' '.join(p.opsets):<12} {detail}"
        )
    lines.append("")
    lines.append("Families (fingerprint, ParallelFor call sites, sources):")
    for family in sorted(inventory.families.values(), key=lambda f: f.name):
        lines.append(f"  {family.name} {family.label} {family.fingerprint}")
        lines.extend(f"    call site: {site}" for site in family.call_sites)
        lines.extend(f"    source: {source}" for source in family.sources)
    return "\n".join(lines)


def format_json(inventory: Inventory, paths: list[KernelPath]) -> str:
    return json.dumps(
        {
            "counts": inventory.counts(),
            "families": {name: dataclasses.asdict(f) for name, f in sorted(inventory.families.items())},
            "problems": [dataclasses.asdict(p) for p in inventory.problems],
            "paths": [_row(p) for p in paths],
        },
        indent=2,
    )


def format_csv(paths: list[KernelPath]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for p in paths:
        row = _row(p)
        for column in ("tuning", "opsets", "sources"):
            row[column] = " ".join(row[column])
        writer.writerow(row)
    return out.getvalue()
