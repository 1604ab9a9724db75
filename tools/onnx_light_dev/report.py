"""Report logic for kernel_report: stability, crossover and the promotion rule.

Input: kernel_baseline documents (see benchmarks/README.md for the format), several runs
per architecture from the same commit. Everything here is pure: it reads samples and
returns decisions, so that it can be tested on synthetic samples.

Rules (stated here once; the Markdown report quotes them):
- A measurement is a (family, op, size, policy) cell. Within one run its value is the
  median of its raw samples. A cell is *unstable* when the spread of its run medians,
  max/min, exceeds STABILITY_MAX_SPREAD; unstable cells take no part in crossover or
  promotion decisions and are listed in the report.
- Parallel *wins* at a size when, in every run, its median is below the serial median
  divided by (1 + WIN_MARGIN). The *crossover* of a family is the smallest size from
  which parallel wins at that size and every larger one; it is reported as the
  geometric mean of the last losing and the first winning work sizes (or the first
  size when parallel wins everywhere, none when it never does).
- A portable default is *promoted* only when both architectures have stable,
  non-emulated measurements of the family, both show a crossover, and at no size does
  the proposed default make either architecture slower than its alternative by more
  than REGRESSION_TOLERANCE. Emulated runs (aarch64 under qemu) never promote: the
  report says promotion waits for hardware. Machine-specific winners stay profiles.
"""

import dataclasses
import math
import statistics
from collections.abc import Iterable, Sequence

STABILITY_MAX_SPREAD = 1.15
WIN_MARGIN = 0.05
REGRESSION_TOLERANCE = 0.05

CellKey = tuple[str, str, str, str]  # family, op, size label, policy


@dataclasses.dataclass
class Cell:
    family: str
    op: str
    size: str
    policy: str
    work_units: int
    run_medians_ns: list[float]

    @property
    def spread(self) -> float:
        lo, hi = min(self.run_medians_ns), max(self.run_medians_ns)
        return math.inf if lo <= 0 else hi / lo

    @property
    def stable(self) -> bool:
        return len(self.run_medians_ns) > 0 and self.spread <= STABILITY_MAX_SPREAD

    @property
    def median_ns(self) -> float:
        return statistics.median(self.run_medians_ns)


def collect_cells(runs: Sequence[dict]) -> dict[CellKey, Cell]:
    """Groups the cases of several baseline runs into cells with one median per run."""
    cells: dict[CellKey, Cell] = {}
    for run in runs:
        for case in run["cases"]:
            key = (case["family"], case["op"], case["size"], case["policy"])
            cell = cells.get(key)
            if cell is None:
                cell = cells[key] = Cell(
                    case["family"], case["op"], case["size"], case["policy"], case["work_units"], []
                )
            cell.run_medians_ns.append(statistics.median(case["samples_ns"]))
    return cells


@dataclasses.dataclass
class FamilyCrossover:
    family: str
    op: str
    sizes: list[tuple[str, int]]  # (label, work units), ascending
    parallel_wins: list[bool | None]  # per size; None when a cell is unstable/missing
    crossover_work_units: float | None
    unstable: list[str]  # labels of sizes with an unstable cell

    @property
    def decided(self) -> bool:
        return all(w is not None for w in self.parallel_wins)


def _wins(serial: Cell, parallel: Cell) -> bool | None:
    if not (serial.stable and parallel.stable) or len(serial.run_medians_ns) != len(parallel.run_medians_ns):
        return None
    return all(p < s / (1 + WIN_MARGIN) for s, p in zip(serial.run_medians_ns, parallel.run_medians_ns))


def find_crossovers(cells: dict[CellKey, Cell]) -> list[FamilyCrossover]:
    by_family: dict[tuple[str, str], dict[str, dict[str, Cell]]] = {}
    for (family, op, size, policy), cell in cells.items():
        by_family.setdefault((family, op), {}).setdefault(size, {})[policy] = cell
    out = []
    for (family, op), sizes in sorted(by_family.items()):
        ordered = sorted(sizes.items(), key=lambda kv: next(iter(kv[1].values())).work_units)
        labels = [(label, next(iter(pol.values())).work_units) for label, pol in ordered]
        wins: list[bool | None] = []
        unstable = []
        for label, policies in ordered:
            serial, parallel = policies.get("serial"), policies.get("parallel")
            w = _wins(serial, parallel) if serial and parallel else None
            if w is None:
                unstable.append(label)
            wins.append(w)
        out.append(FamilyCrossover(family, op, labels, wins, _crossover(labels, wins), unstable))
    return out


def _crossover(sizes: list[tuple[str, int]], wins: list[bool | None]) -> float | None:
    if any(w is None for w in wins):
        return None
    for i in range(len(wins)):
        if all(wins[i:]):
            if i == 0:
                return float(sizes[0][1])
            return math.sqrt(sizes[i - 1][1] * sizes[i][1])
    return None


@dataclasses.dataclass
class PromotionDecision:
    family: str
    op: str
    promoted: bool
    proposed_minimum_elements: int | None
    reason: str


def decide_promotion(
    family: str,
    op: str,
    per_arch: dict[str, tuple[FamilyCrossover, bool]],
    required_architectures: Iterable[str] = ("x86_64", "aarch64"),
) -> PromotionDecision:
    """per_arch: architecture -> (crossover result, emulated?)."""
    for arch in required_architectures:
        if arch not in per_arch:
            return PromotionDecision(family, op, False, None, f"no {arch} measurements")
    for arch, (crossover, emulated) in sorted(per_arch.items()):
        if emulated:
            return PromotionDecision(
                family, op, False, None, f"{arch} timings are emulated (qemu): promotion waits for hardware"
            )
        if not crossover.decided:
            return PromotionDecision(
                family, op, False, None, f"{arch} has unstable sizes: {', '.join(crossover.unstable)}"
            )
        if crossover.crossover_work_units is None:
            return PromotionDecision(family, op, False, None, f"parallel never wins on {arch}")
    # The most conservative crossover serves both; check it regresses neither.
    proposed = int(math.ceil(max(c.crossover_work_units for c, _ in per_arch.values())))
    for arch, (crossover, _) in per_arch.items():
        for (label, units), win in zip(crossover.sizes, crossover.parallel_wins):
            picks_parallel = units >= proposed
            if picks_parallel and not win:
                return PromotionDecision(
                    family,
                    op,
                    False,
                    None,
                    f"default {proposed} would run {label} in parallel on {arch}, where serial wins",
                )
    return PromotionDecision(family, op, True, proposed, "stable crossover on every architecture, no regression")
