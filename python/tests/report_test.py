"""kernel_report's decisions on synthetic samples."""

import math

from onnx_light_dev import report


def run(cases):
    return {
        "cases": [
            dict(family=f, op=o, size=s, policy=p, work_units=u, samples_ns=samples) for f, o, s, p, u, samples in cases
        ]
    }


def family_runs(serial, parallel, jitter=(1.0, 1.0, 1.0)):
    """Three runs of one family at sizes small/mid/large with given medians."""
    sizes = [("small", 1_000), ("mid", 100_000), ("large", 10_000_000)]
    runs = []
    for j in jitter:
        cases = []
        for (label, units), s, p in zip(sizes, serial, parallel):
            cases.append(("math", "Add", label, "serial", units, [s * j] * 5))
            cases.append(("math", "Add", label, "parallel", units, [p * j] * 5))
        runs.append(run(cases))
    return runs


def test_crossover_between_last_loss_and_first_win():
    cells = report.collect_cells(family_runs(serial=[10, 1000, 100000], parallel=[30, 600, 52000]))
    (c,) = report.find_crossovers(cells)
    assert c.parallel_wins == [False, True, True]
    assert math.isclose(c.crossover_work_units, math.sqrt(1_000 * 100_000))


def test_win_requires_margin():
    cells = report.collect_cells(family_runs(serial=[10, 1000, 100000], parallel=[30, 980, 52000]))
    (c,) = report.find_crossovers(cells)
    assert c.parallel_wins == [False, False, True]  # 2% faster is within the margin


def test_unstable_cells_are_rejected():
    runs = family_runs(serial=[10, 1000, 100000], parallel=[30, 600, 52000])
    runs[2]["cases"][3]["samples_ns"] = [2000] * 5  # "mid" parallel: one run far off
    cells = report.collect_cells(runs)
    (c,) = report.find_crossovers(cells)
    assert c.parallel_wins[1] is None
    assert c.unstable == ["mid"]
    assert c.crossover_work_units is None


def test_no_crossover_when_parallel_never_wins():
    cells = report.collect_cells(family_runs(serial=[10, 100, 1000], parallel=[20, 200, 2000]))
    (c,) = report.find_crossovers(cells)
    assert c.crossover_work_units is None


def crossover(serial, parallel):
    (c,) = report.find_crossovers(report.collect_cells(family_runs(serial, parallel)))
    return c


def test_promotion_needs_both_architectures_on_hardware():
    x86 = crossover([10, 1000, 100000], [30, 600, 52000])
    arm = crossover([10, 1000, 100000], [30, 600, 52000])
    emulated = report.decide_promotion("math", "Add", {"x86_64": (x86, False), "aarch64": (arm, True)})
    assert not emulated.promoted and "waits for hardware" in emulated.reason
    missing = report.decide_promotion("math", "Add", {"x86_64": (x86, False)})
    assert not missing.promoted and "aarch64" in missing.reason
    both = report.decide_promotion("math", "Add", {"x86_64": (x86, False), "aarch64": (arm, False)})
    assert both.promoted and both.proposed_minimum_elements == math.ceil(math.sqrt(1_000 * 100_000))


def test_promotion_refused_when_one_architecture_never_wins():
    x86 = crossover([10, 1000, 100000], [30, 600, 52000])
    arm = crossover([10, 100, 1000], [20, 200, 2000])
    d = report.decide_promotion("math", "Add", {"x86_64": (x86, False), "aarch64": (arm, False)})
    assert not d.promoted and "never wins on aarch64" in d.reason
