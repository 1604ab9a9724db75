"""The validate_inventory gate: inventory and reviewed dispositions must agree.

Fails on: a structural inventory problem (family without manifest, ...); a
parallel_fixed_policy path; a serial path without a disposition; a disposition reviewed
at another fingerprint; a disposition naming a path that is gone or no longer serial; a
malformed file or entry (TODO markers included); a stale coverage report. Every failure
says what to do.
"""

import collections
import dataclasses
from typing import Any

from onnx_light_dev import coverage as coverage_lib
from onnx_light_dev import exemptions as exemptions_lib
from onnx_light_dev import fingerprint as fingerprint_lib
from onnx_light_dev import inventory as inventory_lib

MISSING = "MISSING"
UNREVIEWED = "UNREVIEWED"  # an entry exists but is malformed or stale

WRITE_TEMPLATES = "./bazelw run //tools:validate_inventory -- --write_templates --family={family}"
MARK_REVIEWED = WRITE_TEMPLATES + " --mark_reviewed"


@dataclasses.dataclass
class Failure:
    kind: str  # inventory, parallel_fixed_policy, missing, stale, orphan, malformed, coverage
    subject: str
    message: str
    remedy: str
    template: str = ""

    def render(self) -> str:
        text = f"[{self.kind}] {self.subject}: {self.message}\n    -> {self.remedy}"
        if self.template:
            text += "\n" + "\n".join("       " + line for line in self.template.splitlines())
        return text


def attach_dispositions(
    inventory: inventory_lib.Inventory, exemption_files: dict[str, exemptions_lib.ExemptionFile]
) -> dict[tuple[str, str, str, str], list[tuple[exemptions_lib.ExemptionFile, dict[str, Any]]]]:
    """Sets each serial path's disposition (its category, UNREVIEWED or MISSING).

    Returns {(domain, op, element type, family): [(ExemptionFile, entry), ...]}: every claim
    the entries make, whether or not the path exists."""
    claims = {}
    for exemption_file in exemption_files.values():
        for entry in exemptions_lib.entries(exemption_file):
            types = entry.get("element_types")
            for element_type in types if isinstance(types, list) else []:
                key = (entry.get("domain"), entry.get("op"), element_type, exemption_file.family)
                claims.setdefault(key, []).append((exemption_file, entry))
    for path in inventory.paths:
        if path.state != inventory_lib.SERIAL:
            path.disposition = ""
            continue
        claim = claims.get(path.key)
        if not claim:
            path.disposition = MISSING
            continue
        entry = claim[0][1]
        fresh = entry.get("fingerprint") == path.fingerprint and not exemptions_lib.entry_errors(entry)
        path.disposition = entry["category"] if fresh else UNREVIEWED
    return claims


def validate(
    inventory: inventory_lib.Inventory,
    exemption_files: dict[str, exemptions_lib.ExemptionFile],
    coverage_text: str | None,
    evidence: dict[str, Any] | None = None,
) -> list[Failure]:
    """Every failure of the gate, in a stable order. `evidence` (dict) is pasted into the
    templates printed for missing dispositions; None leaves TODO markers there."""
    failures = [Failure("inventory", "structure", problem.message, problem.remedy) for problem in inventory.problems]
    claims = attach_dispositions(inventory, exemption_files)
    paths = {p.key: p for p in inventory.paths}

    for path in inventory.paths:
        if path.state == inventory_lib.PARALLEL_FIXED_POLICY:
            sites = inventory.families[path.family].call_sites
            failures.append(
                Failure(
                    "parallel_fixed_policy",
                    path.name(),
                    f"its family calls ParallelFor ({'; '.join(sites)}) but the path has no tuning schema",
                    "give the KernelDef a tuning schema (e.g. MinimumElementsParam) that decides serial vs "
                    "parallel, or move the op to a family with no ParallelFor call",
                )
            )

    for _, exemption_file in sorted(exemption_files.items()):
        failures.extend(_file_failures(exemption_file, inventory, paths))

    for key, claim in sorted(claims.items()):
        if len(claim) > 1:
            failures.append(
                Failure(
                    "malformed",
                    f"{key[1]}[{key[2]}] ({key[3]})",
                    f"{len(claim)} entries claim this path",
                    "keep one entry per path",
                )
            )

    missing = collections.defaultdict(list)
    for path in inventory.paths:
        if path.state == inventory_lib.SERIAL and path.key not in claims:
            missing[(path.family, path.domain, path.op)].append(path)
    for (family, domain, op), op_paths in sorted(missing.items()):
        types = [p.element_type for p in op_paths]
        template = exemptions_lib.template_entry(
            domain, op, types, op_paths[0].fingerprint, evidence or _todo_evidence()
        )
        failures.append(
            Failure(
                "missing",
                f"{domain}::{op}[{','.join(types)}] ({family})",
                "serial path with no disposition",
                f"parallelize it with a tuning schema, or review it and add this entry to "
                f"exemptions/{exemptions_lib.file_name(family)} (or run {WRITE_TEMPLATES.format(family=family)}, "
                "which fills revision, processor, policy and measurements):",
                template=exemptions_lib.format_json(template),
            )
        )

    if coverage_text is None or coverage_text != coverage_lib.render_coverage(inventory):
        state = "is missing" if coverage_text is None else "is not current"
        failures.append(
            Failure(
                "coverage",
                coverage_lib.COVERAGE_PATH,
                f"the coverage report {state}",
                f"regenerate it: {coverage_lib.REGENERATE}",
            )
        )
    return failures


def _todo_evidence() -> dict[str, Any]:
    todo = exemptions_lib.TODO + ": run the template writer"
    return {"revision": todo, "processor": {}, "policy": {}, "measurements": []}


def _file_failures(
    exemption_file: exemptions_lib.ExemptionFile,
    inventory: inventory_lib.Inventory,
    paths: dict[tuple[str, str, str, str], inventory_lib.KernelPath],
) -> list[Failure]:
    family = exemption_file.family
    where = f"exemptions/{exemptions_lib.file_name(family)}"
    failures = [
        Failure("malformed", where, error, "fix the file (see tools/onnx_light_dev/exemptions.py)")
        for error in exemptions_lib.file_errors(exemption_file)
    ]
    if family not in inventory.families and not any(p.family == family for p in inventory.paths):
        failures.append(Failure("orphan", where, f"family {family!r} no longer exists", f"delete {where}"))
        return failures
    family_fingerprint = inventory.families[family].fingerprint if family in inventory.families else ""
    doc = exemption_file.doc
    raw_entries = doc.get("exemptions") if isinstance(doc, dict) else None
    for entry in raw_entries if isinstance(raw_entries, list) else []:
        name = exemptions_lib.entry_name(entry, family) if isinstance(entry, dict) else where
        for error in exemptions_lib.entry_errors(entry):
            failures.append(Failure("malformed", name, error, f"edit the entry in {where}"))
        if not isinstance(entry, dict) or not isinstance(entry.get("element_types"), list):
            continue
        for element_type in entry["element_types"]:
            path = paths.get((entry.get("domain"), entry.get("op"), element_type, family))
            if path is None:
                failures.append(
                    Failure(
                        "orphan",
                        name,
                        f"no path {entry.get('op')}[{element_type}] exists in family {family!r}",
                        f"remove it from the entry (or run {WRITE_TEMPLATES.format(family=family)}, which drops it)",
                    )
                )
            elif path.state != inventory_lib.SERIAL:
                failures.append(
                    Failure(
                        "orphan",
                        name,
                        f"{entry.get('op')}[{element_type}] is {path.state} now, not serial",
                        f"remove it from the entry (or run {WRITE_TEMPLATES.format(family=family)}, which drops it)",
                    )
                )
        reviewed = entry.get("fingerprint")
        if (
            isinstance(reviewed, str)
            and fingerprint_lib.FINGERPRINT_PATTERN.match(reviewed)
            and family_fingerprint
            and reviewed != family_fingerprint
        ):
            failures.append(
                Failure(
                    "stale",
                    name,
                    f"reviewed at {reviewed}, but the implementation of {family!r} is now {family_fingerprint}",
                    f"re-check category, reason and revisit against the changed sources (re-measure for "
                    f"benchmark categories), then record the review: {MARK_REVIEWED.format(family=family)}",
                )
            )
    return failures


def report(failures: list[Failure]) -> str:
    """Readable gate output."""
    if not failures:
        return "validate_inventory: OK"
    counts = collections.Counter(f.kind for f in failures)
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    return "\n".join([f"validate_inventory: FAILED ({summary})", ""] + [f.render() for f in failures])
