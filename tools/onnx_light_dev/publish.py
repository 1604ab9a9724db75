"""Writes the kernel report: JSON decisions, a Markdown summary and PNG plots.

Inputs are baseline documents grouped by architecture (several runs each, same commit);
decisions come from onnx_light_dev.report, whose rules the summary quotes.
"""

import dataclasses
import json
import os
import statistics
from typing import Any

from onnx_light_dev import baseline, report


def analyse(
    runs_by_arch: dict[str, list[dict[str, Any]]],
) -> dict[str, tuple[dict[report.CellKey, report.Cell], list[report.FamilyCrossover], bool]]:
    """architecture -> (cells, crossovers, emulated)."""
    out = {}
    for arch, runs in runs_by_arch.items():
        cells = report.collect_cells(runs)
        emulated = any(r["metadata"].get("emulated") for r in runs)
        out[arch] = (cells, report.find_crossovers(cells), emulated)
    return out


def decisions(
    analysis: dict[str, tuple[dict[report.CellKey, report.Cell], list[report.FamilyCrossover], bool]],
) -> list[report.PromotionDecision]:
    families = sorted({(c.family, c.op, c.element_type) for _, crossovers, _ in analysis.values() for c in crossovers})
    result = []
    for family, op, element_type in families:
        per_arch = {}
        for arch, (_, crossovers, emulated) in analysis.items():
            for c in crossovers:
                if (c.family, c.op, c.element_type) == (family, op, element_type):
                    per_arch[arch] = (c, emulated)
        label = f"{op} {element_type}".strip()
        result.append(report.decide_promotion(family, label, per_arch))
    return result


def plot(
    analysis: dict[str, tuple[dict[report.CellKey, report.Cell], list[report.FamilyCrossover], bool]], directory: str
) -> list[str]:
    """One PNG per family: median latency against work size, serial and parallel, per arch."""
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    os.makedirs(directory, exist_ok=True)
    written = []
    families = sorted({(c.family, c.op) for cells, _, _ in analysis.values() for c in cells.values()})
    for family, op in families:
        fig, ax = plt.subplots(figsize=(6, 4))
        for arch, (cells, _, emulated) in sorted(analysis.items()):
            types = sorted({c.element_type for c in cells.values() if (c.family, c.op) == (family, op)})
            for element_type, (policy, style) in (
                (t, ps) for t in types for ps in (("serial", "o-"), ("parallel", "s--"), ("calibrated", "^:"))
            ):
                points = sorted(
                    (c.work_units, c.median_ns)
                    for c in cells.values()
                    if (c.family, c.op, c.element_type, c.policy) == (family, op, element_type, policy)
                )
                if points:
                    label = f"{arch}{' (emulated)' if emulated else ''} {element_type} {policy}"
                    ax.plot([p[0] for p in points], [p[1] / 1e3 for p in points], style, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("work units")
        ax.set_ylabel("median latency (us)")
        ax.set_title(f"{family}: {op}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(directory, f"{family}_{op}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def _speedup_text(serial: report.Cell | None, other: report.Cell | None) -> tuple[str, str]:
    """(median speed-up over the runs, spread of the per-run speed-ups) as text."""
    if serial is None or other is None:
        return "-", "-"
    sp = report.speedups(serial, other)
    if not sp:
        return "-", "-"
    undecided = "" if all(other.run_decided or [True]) else "*"
    return f"{statistics.median(sp):.2f}x{undecided}", f"{report.spread(sp):.2f}"


def markdown(
    runs_by_arch: dict[str, list[dict[str, Any]]],
    analysis: dict[str, tuple[dict[report.CellKey, report.Cell], list[report.FamilyCrossover], bool]],
    decided: list[report.PromotionDecision],
    plot_paths: list[str],
    report_dir: str,
    settings: dict[str, Any] | None = None,
) -> str:
    """settings: how the report was taken (budget, calibration), quoted under Rules."""
    settings = settings or {}
    lines = ["# Kernel report", ""]
    revisions = {r["metadata"]["revision"] for runs in runs_by_arch.values() for r in runs}
    lines.append(
        f"Source revision: {', '.join(sorted(revisions))}"
        + ("" if len(revisions) == 1 else " (WARNING: runs come from different commits)")
    )
    lines.append("")
    for arch, runs in sorted(runs_by_arch.items()):
        meta = runs[0]["metadata"]
        p = meta["processor"]
        lines.append(
            f"- **{arch}**: {len(runs)} runs, {meta['timings']}; processor {p.get('vendor', '')} "
            f"{p.get('model_name') or p.get('microarchitecture') or ''} ({p.get('isa_level', '')}, "
            f"kernels' ISA {meta.get('isa_selected', '?')}, {p.get('physical_cores')} cores); session threads "
            f"{meta['execution']['session_threads']}, spin {meta['execution']['spin_microseconds']} us, affinity "
            f"{meta['execution']['affinity']}; build {meta['build_config']}"
        )
        loads = [r["metadata"].get("conditions") for r in runs]
        if all(loads):
            lines.append(
                "  - 1-minute load average before/after each run: "
                + ", ".join(
                    f"{c['load_before']:.2f}/{c['load_after']:.2f}" + ("" if c["quiet"] else " (NOT QUIET)")
                    for c in loads
                )
                + f" (each run waits for load <= {loads[0]['quiet_load']})"
            )
        compared = [c for r in runs for c in r["cases"] if c["policy"] != "serial" and "samples_ns" in c]
        same = sum(1 for c in compared if c.get("outputs_identical_to_serial"))
        lines.append(f"  - outputs bit-identical to serial: {same} of {len(compared)} non-serial cells")
        skipped = [s for r in runs for s in baseline.skipped(r)]
        if skipped:
            lines.append(f"  - NOT MEASURED (time budget spent): {len(skipped)} cells, e.g. {', '.join(skipped[:5])}")
    m = next(iter(runs_by_arch.values()))[0]["metadata"].get("measurement", {}) if runs_by_arch else {}
    lines += [
        "",
        "## Rules",
        "",
        "- Measurement: within a run, the policies of one cell (serial; the default policy with the session's "
        "threads; the calibrated profile when one was given) run interleaved in blocks, one run of each per block, "
        "the order rotated every block. Each block gives a speed-up serial time / policy time. Blocks repeat until "
        "the 95% distribution-free confidence interval of the median speed-up (binomial order statistics) has "
        f"high/low <= {1 + m.get('ci_width', 0):.2f}, after at least {m.get('min_blocks', '?')} blocks, or until "
        f"the cell's time cap ({m.get('cell_time_cap_ms', '?')} ms, which also waits for those blocks) or "
        f"{m.get('max_blocks', '?')} blocks; a "
        "speed-up marked * stopped at the cap with a wider interval. A run's value for a cell is its median "
        "speed-up.",
        f"- Unstable: a comparison whose per-run speed-ups spread more than {report.STABILITY_MAX_SPREAD:.2f}x "
        f"(max/min), or with a run of fewer than {report.MIN_BLOCKS} blocks (no 95% interval of a median exists "
        "below that: such a run is one or two samples), is rejected and decides nothing.",
        f"- Parallel wins at a size when its speed-up exceeds {1 + report.WIN_MARGIN:.2f} in every run; "
        "the crossover is the geometric mean of the last losing and first winning sizes.",
        f"- A policy loses at a size when the comparison is stable and its median speed-up is below "
        f"1/{1 + report.REGRESSION_TOLERANCE:.2f}.",
        "- A portable default is promoted only with stable, non-emulated crossovers on both x86-64 and "
        f"ARM64 and no size where it picks the slower policy (tolerance {report.REGRESSION_TOLERANCE:.0%}). "
        "ARM64 timings here are emulated under qemu: they check correctness (serial vs parallel outputs "
        "are compared bitwise) but never promote a default; ARM64 promotion waits for hardware.",
    ]
    for key, text in sorted(settings.items()):
        lines.append(f"- {key}: {text}")
    lines.append("")
    lines += ["## Losses of the default and calibrated policies", ""]
    any_loss = False
    for arch, (cells, _, emulated) in sorted(analysis.items()):
        if emulated:
            continue
        for policy in ("parallel", "calibrated"):
            for loss in report.find_losses(cells, policy):
                any_loss = True
                why = " (no region: the kernel ran its serial path)" if loss.regions == 0 else ""
                lines.append(
                    f"- {arch} {loss.op} {loss.element_type} {loss.size}, {policy}: {loss.speedup:.2f}x "
                    f"(per run {', '.join(f'{x:.2f}' for x in loss.run_speedups)}){why}"
                )
    if not any_loss:
        lines.append("- none (no stable comparison below the tolerance)")
    lines += [
        "",
        "## Crossovers",
        "",
        "| family | op | type | arch | sizes (work units: parallel wins?) | crossover | unstable |",
        "|---|---|---|---|---|---|---|",
    ]
    for arch, (_, crossovers, emulated) in sorted(analysis.items()):
        for c in crossovers:
            sizes = ", ".join(
                f"{label} {units}: {'?' if w is None else ('yes' if w else 'no')}"
                for (label, units), w in zip(c.sizes, c.parallel_wins)
            )
            cross = "none" if c.crossover_work_units is None else f"{c.crossover_work_units:.0f}"
            lines.append(
                f"| {c.family} | {c.op} | {c.element_type} | {arch}{' (emulated)' if emulated else ''} | {sizes} | "
                f"{cross} | {', '.join(c.unstable) or '-'} |"
            )
    lines += [
        "",
        "## Median latency (us) and speed-up over serial: default and calibrated side by side",
        "",
        "| family | op | type | arch | size | serial | default | default speed-up | spread | calibrated | "
        "calibrated speed-up | spread |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arch, (cells, _, _emulated) in sorted(analysis.items()):
        keys = sorted(
            {(c.family, c.op, c.element_type, c.size, c.work_units) for c in cells.values()},
            key=lambda k: (k[0], k[1], k[2], k[4]),
        )
        for family, op, element_type, size, _ in keys:
            s = cells.get((family, op, element_type, size, "serial"))
            p = cells.get((family, op, element_type, size, "parallel"))
            c = cells.get((family, op, element_type, size, "calibrated"))
            if not s or not p:
                continue
            p_speed, p_spread = _speedup_text(s, p)
            c_speed, c_spread = _speedup_text(s, c)
            c_us = f"{c.median_ns / 1e3:.1f}" if c else "-"
            lines.append(
                f"| {family} | {op} | {element_type} | {arch} | {size} | {s.median_ns / 1e3:.1f} | "
                f"{p.median_ns / 1e3:.1f} | {p_speed} | {p_spread} | {c_us} | {c_speed} | {c_spread} |"
            )
    lines += [
        "",
        "## Promotion of portable defaults",
        "",
        "| family | op | promoted | proposed minimum | reason |",
        "|---|---|---|---|---|",
    ]
    for d in decided:
        lines.append(
            f"| {d.family} | {d.op} | {'yes' if d.promoted else 'no'} | "
            f"{d.proposed_minimum_elements or '-'} | {d.reason} |"
        )
    lines += ["", "## Plots", ""]
    for path in plot_paths:
        rel = os.path.relpath(path, report_dir)
        lines.append(f"![{os.path.basename(path)}]({rel})")
    lines += ["", "Raw samples: the baseline documents in this directory (`<arch>/baseline_run<N>.json`).", ""]
    return "\n".join(lines)


def summary_json(
    analysis: dict[str, tuple[dict[report.CellKey, report.Cell], list[report.FamilyCrossover], bool]],
    decided: list[report.PromotionDecision],
    runs_by_arch: dict[str, list[dict[str, Any]]] | None = None,
    settings: dict[str, Any] | None = None,
) -> str:
    """The report's decisions as JSON; with `runs_by_arch`, each architecture also carries the
    conditions of its runs (revision, build, processor, load before and after each run)."""
    out: dict[str, Any] = {
        "rules": {
            "stability_max_spread": report.STABILITY_MAX_SPREAD,
            "win_margin": report.WIN_MARGIN,
            "regression_tolerance": report.REGRESSION_TOLERANCE,
        },
        "settings": settings or {},
        "architectures": {},
        "promotions": [],
    }
    for arch, (cells, crossovers, emulated) in analysis.items():
        out["architectures"][arch] = {
            "emulated": emulated,
            "crossovers": [
                {
                    "family": c.family,
                    "op": c.op,
                    "element_type": c.element_type,
                    "sizes": c.sizes,
                    "parallel_wins": c.parallel_wins,
                    "crossover_work_units": c.crossover_work_units,
                    "unstable": c.unstable,
                }
                for c in crossovers
            ],
            "cells": [
                {
                    "family": c.family,
                    "op": c.op,
                    "element_type": c.element_type,
                    "size": c.size,
                    "policy": c.policy,
                    "work_units": c.work_units,
                    "run_medians_ns": c.run_medians_ns,
                    "median_ns": statistics.median(c.run_medians_ns),
                    "run_speedups": c.run_speedups,
                    "run_decided": c.run_decided,
                    "regions": c.regions,
                }
                for c in cells.values()
            ],
            "losses": [
                dataclasses.asdict(loss)
                for policy in ("parallel", "calibrated")
                for loss in report.find_losses(cells, policy)
            ],
        }
    for arch, runs in (runs_by_arch or {}).items():
        if arch in out["architectures"]:
            meta = runs[0]["metadata"]
            out["architectures"][arch]["conditions"] = {
                "revision": meta["revision"],
                "build": meta["build_config"],
                "timings": meta["timings"],
                "processor": meta["processor"],
                "isa_selected": meta.get("isa_selected"),
                "max_isa": meta.get("max_isa", "none"),
                "measurement": meta.get("measurement"),
                "execution": meta["execution"],
                "load_average_per_run": [r["metadata"].get("conditions") for r in runs],
            }
    out["promotions"] = [d.__dict__ for d in decided]
    return json.dumps(out, indent=1) + "\n"
