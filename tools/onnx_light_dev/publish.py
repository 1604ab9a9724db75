"""Writes the kernel report: JSON decisions, a Markdown summary and PNG plots.

Inputs are baseline documents grouped by architecture (several runs each, same commit);
decisions come from onnx_light_dev.report, whose rules the summary quotes.
"""

import json
import os
import statistics
from typing import Any

from onnx_light_dev import report


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
    families = sorted({(c.family, c.op) for _, crossovers, _ in analysis.values() for c in crossovers})
    result = []
    for family, op in families:
        per_arch = {}
        for arch, (_, crossovers, emulated) in analysis.items():
            for c in crossovers:
                if (c.family, c.op) == (family, op):
                    per_arch[arch] = (c, emulated)
        result.append(report.decide_promotion(family, op, per_arch))
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
            for policy, style in (("serial", "o-"), ("parallel", "s--")):
                points = sorted(
                    (c.work_units, c.median_ns)
                    for c in cells.values()
                    if (c.family, c.op, c.policy) == (family, op, policy)
                )
                if points:
                    label = f"{arch}{' (emulated)' if emulated else ''} {policy}"
                    ax.plot([p[0] for p in points], [p[1] / 1e3 for p in points], style, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("work units")
        ax.set_ylabel("median latency (us)")
        ax.set_title(f"{family}: {op}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(directory, f"{family}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def markdown(
    runs_by_arch: dict[str, list[dict[str, Any]]],
    analysis: dict[str, tuple[dict[report.CellKey, report.Cell], list[report.FamilyCrossover], bool]],
    decided: list[report.PromotionDecision],
    plot_paths: list[str],
    report_dir: str,
) -> str:
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
            f"{p.get('physical_cores')} cores); session threads {meta['execution']['session_threads']}, "
            f"spin {meta['execution']['spin_microseconds']} us, affinity {meta['execution']['affinity']}; "
            f"build {meta['build_config']}"
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
    lines += [
        "",
        "## Rules",
        "",
        f"- Unstable: a cell whose run medians spread more than {report.STABILITY_MAX_SPREAD:.2f}x "
        "(max/min) is rejected and decides nothing.",
        f"- Parallel wins at a size when in every run its median is below serial / {1 + report.WIN_MARGIN:.2f}; "
        "the crossover is the geometric mean of the last losing and first winning sizes.",
        "- A portable default is promoted only with stable, non-emulated crossovers on both x86-64 and "
        f"ARM64 and no size where it picks the slower policy (tolerance {report.REGRESSION_TOLERANCE:.0%}). "
        "ARM64 timings here are emulated under qemu: they check correctness (serial vs parallel outputs "
        "are compared bitwise) but never promote a default; ARM64 promotion waits for hardware.",
        "",
    ]
    lines += [
        "## Crossovers",
        "",
        "| family | op | arch | sizes (work units: parallel wins?) | crossover | unstable |",
        "|---|---|---|---|---|---|",
    ]
    for arch, (_, crossovers, emulated) in sorted(analysis.items()):
        for c in crossovers:
            sizes = ", ".join(
                f"{label} {units}: {'?' if w is None else ('yes' if w else 'no')}"
                for (label, units), w in zip(c.sizes, c.parallel_wins)
            )
            cross = "none" if c.crossover_work_units is None else f"{c.crossover_work_units:.0f}"
            lines.append(
                f"| {c.family} | {c.op} | {arch}{' (emulated)' if emulated else ''} | {sizes} | {cross} | "
                f"{', '.join(c.unstable) or '-'} |"
            )
    lines += [
        "",
        "## Median latency (us) and parallel speed-up",
        "",
        "| family | op | arch | size | serial | parallel | speed-up | spread s/p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for arch, (cells, _, _emulated) in sorted(analysis.items()):
        keys = sorted(
            {(c.family, c.op, c.size, c.work_units) for c in cells.values()}, key=lambda k: (k[0], k[1], k[3])
        )
        for family, op, size, _ in keys:
            s = cells.get((family, op, size, "serial"))
            p = cells.get((family, op, size, "parallel"))
            if not s or not p:
                continue
            lines.append(
                f"| {family} | {op} | {arch} | {size} | {s.median_ns / 1e3:.1f} | {p.median_ns / 1e3:.1f} | "
                f"{s.median_ns / p.median_ns:.2f}x | {s.spread:.2f}/{p.spread:.2f} |"
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
) -> str:
    """The report's decisions as JSON; with `runs_by_arch`, each architecture also carries the
    conditions of its runs (revision, build, processor, load before and after each run)."""
    out: dict[str, Any] = {
        "rules": {
            "stability_max_spread": report.STABILITY_MAX_SPREAD,
            "win_margin": report.WIN_MARGIN,
            "regression_tolerance": report.REGRESSION_TOLERANCE,
        },
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
                    "size": c.size,
                    "policy": c.policy,
                    "work_units": c.work_units,
                    "run_medians_ns": c.run_medians_ns,
                    "median_ns": statistics.median(c.run_medians_ns),
                }
                for c in cells.values()
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
                "execution": meta["execution"],
                "load_average_per_run": [r["metadata"].get("conditions") for r in runs],
            }
    out["promotions"] = [d.__dict__ for d in decided]
    return json.dumps(out, indent=1) + "\n"
