"""Writes and refreshes a family's exemption file from the inventory.

New serial paths get a template (one entry per op: its serial element types), with the
fingerprint, revision, processor, policy and raw serial measurements (measure.py) filled
in; the reviewer fills category, reason and revisit, which stay TODO
markers that the gate rejects (except exemptions.DERIVED_DISPOSITIONS). Entries for paths
that are gone or no longer serial are dropped. An entry reviewed at an older fingerprint
is only moved to the current one with mark_reviewed: that is the reviewer's signature.
"""

import collections
import os
from collections.abc import Callable, Iterable
from typing import Any

from onnx_light_dev import environment, measure
from onnx_light_dev import exemptions as exemptions_lib
from onnx_light_dev import inventory as inventory_lib


class EvidenceCollector:
    """Builds the evidence object: where and how a review's numbers were taken."""

    def __init__(
        self,
        revision: str | None,
        processor: dict[str, Any],
        runner: measure.Runner | None = None,
        build: dict[str, Any] | None = None,
        load: dict[str, Any] | None = None,
    ) -> None:
        self.revision = revision or exemptions_lib.TODO + ": git revision unknown"
        self.processor = processor
        self.runner = runner
        self.build = build  # how the measured extension was compiled (build_info)
        self.load = load  # the machine's load when the measurements started

    def context(self) -> dict[str, Any]:
        """Evidence without measurements: revision, processor, policy (and the build and the
        load when measurements are taken)."""
        evidence: dict[str, Any] = {
            "revision": self.revision,
            "processor": self.processor,
            "policy": dict(environment.SERIAL_POLICY),
            "measurements": [],
        }
        if self.runner is not None:
            if self.build:
                evidence["build"] = self.build
            if self.load:
                evidence["load"] = self.load
        return evidence

    def __call__(self, domain: str, op: str, element_types: list[str]) -> dict[str, Any]:
        evidence = self.context()
        if self.runner is not None:
            for element_type in element_types:
                evidence["measurements"].extend(measure.measure_path(self.runner, domain, op, element_type))
        return evidence


def refresh_family(
    family: str,
    inventory: inventory_lib.Inventory,
    exemption_file: exemptions_lib.ExemptionFile | None,
    evidence: Callable[[str, str, list[str]], dict[str, Any]],
    mark_reviewed: bool = False,
) -> tuple[str | None, list[str]]:
    """(new file text, or None when the family needs no file; list of changes made)."""
    serial = {p.key: p for p in inventory.paths if p.family == family and p.state == inventory_lib.SERIAL}
    current = inventory.families[family].fingerprint if family in inventory.families else ""
    changes, kept, claimed = [], [], set()
    for entry in exemptions_lib.entries(exemption_file) if exemption_file else []:
        name = exemptions_lib.entry_name(entry, family)
        types = entry.get("element_types") if isinstance(entry.get("element_types"), list) else []
        live = [
            t
            for t in types
            if (entry.get("domain"), entry.get("op"), t, family) in serial
            and (entry.get("domain"), entry.get("op"), t, family) not in claimed
        ]
        if len(live) < len(types) or not types:
            changes.append(
                f"{name}: dropped {sorted(set(map(str, types)) - set(live)) or 'the entry'} "
                "(no such serial path, or claimed twice)"
            )
        if not live:
            continue
        entry = dict(entry, element_types=sorted(live))
        if mark_reviewed and entry.get("fingerprint") != current:
            entry["fingerprint"] = current
            fresh = evidence(entry["domain"], entry["op"], live)
            old = entry.get("evidence")
            if fresh["measurements"] or not (isinstance(old, dict) and old.get("measurements")):
                entry["evidence"] = fresh  # else keep the old numbers with the revision they were taken at
            changes.append(f"{name}: marked reviewed at {current}")
        kept.append(entry)
        claimed.update((entry["domain"], entry["op"], t, family) for t in live)

    missing = collections.defaultdict(list)
    for key, path in sorted(serial.items()):
        if key not in claimed:
            missing[(path.domain, path.op)].append(path.element_type)
    for (domain, op), types in sorted(missing.items()):
        entry = exemptions_lib.template_entry(domain, op, types, current, evidence(domain, op, types))
        kept.append(entry)
        todo = "derived disposition" if (domain, op) in exemptions_lib.DERIVED_DISPOSITIONS else "TODO: review"
        changes.append(
            f"{exemptions_lib.entry_name(entry, family)}: added template ({todo}, "
            f"{len(entry['evidence']['measurements'])} measured cases)"
        )
    if not kept:
        return None, changes
    return exemptions_lib.dumps(family, kept), changes


def families_to_refresh(
    inventory: inventory_lib.Inventory,
    exemption_files: dict[str, exemptions_lib.ExemptionFile],
    requested: Iterable[str] = (),
) -> list[str]:
    """The requested families, else every family with serial paths or an exemption file."""
    if requested:
        return sorted(set(requested))
    serial = {p.family for p in inventory.paths if p.state == inventory_lib.SERIAL}
    return sorted(serial | set(exemption_files))


def write_templates(
    directory: str,
    inventory: inventory_lib.Inventory,
    exemption_files: dict[str, exemptions_lib.ExemptionFile],
    evidence: Callable[[str, str, list[str]], dict[str, Any]],
    families: Iterable[str] = (),
    mark_reviewed: bool = False,
) -> list[str]:
    """Refreshes the exemption files of `families` (default: families_to_refresh) in
    directory; returns what changed, one line each."""
    os.makedirs(directory, exist_ok=True)
    report = []
    for family in families_to_refresh(inventory, exemption_files, families):
        if family not in inventory.families and family not in exemption_files:
            report.append(f"{family}: no such family (known: {', '.join(sorted(inventory.families))})")
            continue
        text, changes = refresh_family(family, inventory, exemption_files.get(family), evidence, mark_reviewed)
        path = os.path.join(directory, exemptions_lib.file_name(family))
        if text is None:
            if os.path.exists(path):
                os.remove(path)
                changes.append("no serial path left: file removed")
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        report.extend(f"{path}: {change}" for change in changes)
    return report
