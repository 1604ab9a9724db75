"""Report logic for kernel_report: stability, crossover and the promotion rule.

Input: kernel_baseline documents (see benchmarks/README.md for the format), several runs
per architecture from the same commit. Everything here is pure: it reads samples and
returns decisions, so that it can be tested on synthetic samples.

Rules (stated here once; the Markdown report quotes them):
- A measurement is a (family, op, element type, size, policy) cell. Within one run the
  policies of a size are timed interleaved (benchmarks/kernel_baseline/interleave.h) and
  a non-serial cell's value is its *speed-up*: the median of the per-block ratios serial
  time / policy time. A comparison is *unstable* when its per-run speed-ups spread, max/min,
  more than STABILITY_MAX_SPREAD; unstable comparisons take no part in crossover, loss or
  promotion decisions and are listed in the report. So does a comparison with a run of
  fewer than MIN_BLOCKS interleaved blocks (a cell stopped at its time cap after one or
  two blocks): below 6 samples no distribution-free 95% interval of a median exists (the
  widest, min..max of n samples, covers 1 - 2^(1-n): 50% at 2), so such a run's median is
  one or two noisy samples, not a measurement. (ScatterElements float16 large, AVX2 report
  at f15155e: 2 blocks a run; its parallel and calibrated arms, the same tuning since the
  profile holds no ScatterElements value, measured 0.80x and 0.87x in one run, 1.01x and
  0.93x in another, and the second was listed as a calibrated loss.) (Documents without per-block ratios,
  from before the interleaved method, use the ratio of the run medians.)
- Parallel *wins* at a size when its speed-up exceeds 1 + WIN_MARGIN in every run. A
  policy *loses* at a size when the comparison is stable and its median speed-up over the
  runs is below 1 / (1 + REGRESSION_TOLERANCE). The *crossover* of a family is the smallest size from
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
MIN_BLOCKS = 6  # per run, for a comparison to decide anything (see the rules above)

CellKey = tuple[str, str, str, str, str]  # family, op, element type, size label, policy


@dataclasses.dataclass
class Cell:
    family: str
    op: str
    size: str
    policy: str
    work_units: int
    run_medians_ns: list[float]
    element_type: str = ""
    # Per run: the median per-block speed-up over serial (non-serial policies of
    # interleaved documents; empty otherwise) and whether its interval was decided.
    run_speedups: list[float] = dataclasses.field(default_factory=list)
    run_decided: list[bool] = dataclasses.field(default_factory=list)
    # Per run: interleaved blocks (documents that record them; empty otherwise).
    run_blocks: list[int] = dataclasses.field(default_factory=list)
    regions: int = 0  # parallel regions the policy's last run opened (max over runs)

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
            if "skipped" in case or "error" in case or not case.get("samples_ns"):
                continue
            element_type = case.get("element_type", "")
            key = (case["family"], case["op"], element_type, case["size"], case["policy"])
            cell = cells.get(key)
            if cell is None:
                cell = cells[key] = Cell(
                    case["family"], case["op"], case["size"], case["policy"], case["work_units"], [], element_type
                )
            cell.run_medians_ns.append(statistics.median(case["samples_ns"]))
            if "speedup" in case:
                cell.run_speedups.append(case["speedup"]["median"])
                cell.run_decided.append(bool(case.get("decided")))
            if "blocks" in case:
                cell.run_blocks.append(int(case["blocks"]))
            cell.regions = max(cell.regions, case.get("regions", 0))
    return cells


def speedups(serial: Cell, other: Cell) -> list[float] | None:
    """Per run: other's speed-up over serial (see the rules); None when the runs do not pair."""
    if len(serial.run_medians_ns) != len(other.run_medians_ns):
        return None
    if other.run_speedups:
        return list(other.run_speedups) if len(other.run_speedups) == len(other.run_medians_ns) else None
    return [s / p if p > 0 else math.inf for s, p in zip(serial.run_medians_ns, other.run_medians_ns)]


def spread(values: Sequence[float]) -> float:
    lo, hi = min(values), max(values)
    return math.inf if lo <= 0 else hi / lo


def too_few_blocks(cell: Cell) -> bool:
    """Whether a run of `cell` stopped before MIN_BLOCKS interleaved blocks (see the rules)."""
    return any(b < MIN_BLOCKS for b in cell.run_blocks)


def stable_speedups(serial: Cell, other: Cell) -> list[float] | None:
    """The per-run speed-ups when the comparison is stable and every run has MIN_BLOCKS
    blocks, else None."""
    sp = speedups(serial, other)
    if not sp or spread(sp) > STABILITY_MAX_SPREAD or too_few_blocks(other):
        return None
    return sp


@dataclasses.dataclass
class Loss:
    family: str
    op: str
    element_type: str
    size: str
    policy: str
    run_speedups: list[float]
    regions: int  # 0: the policy ran the kernel's serial path too (same code as serial)

    @property
    def speedup(self) -> float:
        return statistics.median(self.run_speedups)


def find_losses(cells: dict[CellKey, Cell], policy: str = "parallel") -> list[Loss]:
    """Stable comparisons where `policy` is slower than serial beyond REGRESSION_TOLERANCE."""
    out = []
    for (family, op, element_type, size, pol), cell in sorted(cells.items()):
        serial = cells.get((family, op, element_type, size, "serial"))
        if pol != policy or serial is None:
            continue
        sp = stable_speedups(serial, cell)
        if sp and statistics.median(sp) < 1 / (1 + REGRESSION_TOLERANCE):
            out.append(Loss(family, op, element_type, size, policy, sp, cell.regions))
    return out


@dataclasses.dataclass
class FamilyCrossover:
    family: str
    op: str
    sizes: list[tuple[str, int]]  # (label, work units), ascending
    parallel_wins: list[bool | None]  # per size; None when a cell is unstable/missing
    crossover_work_units: float | None
    unstable: list[str]  # labels of sizes with an unstable cell
    element_type: str = ""

    @property
    def decided(self) -> bool:
        return all(w is not None for w in self.parallel_wins)


def _wins(serial: Cell, parallel: Cell) -> bool | None:
    sp = stable_speedups(serial, parallel)
    if sp is None:
        return None
    return all(x > 1 + WIN_MARGIN for x in sp)


def find_crossovers(cells: dict[CellKey, Cell]) -> list[FamilyCrossover]:
    by_family: dict[tuple[str, str, str], dict[str, dict[str, Cell]]] = {}
    for (family, op, element_type, size, policy), cell in cells.items():
        by_family.setdefault((family, op, element_type), {}).setdefault(size, {})[policy] = cell
    out = []
    for (family, op, element_type), sizes in sorted(by_family.items()):
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
        out.append(FamilyCrossover(family, op, labels, wins, _crossover(labels, wins), unstable, element_type))
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
