"""kernel_report's rules on interleaved documents (synthetic samples), its budget plan and
its Markdown: stability of per-run speed-ups, losses, the calibrated column."""

import math

import pytest
from onnx_light_dev import baseline, publish, report


def interleaved_case(policy: str, size: str, units: int, median_ns: float, speedup: float | None, regions: int = 1):
    case = {
        "family": "gemm",
        "op": "MatMul",
        "element_type": "float",
        "size": size,
        "policy": policy,
        "work_units": units,
        "samples_ns": [median_ns] * 6,
        "blocks": 6,
        "decided": True,
        "regions": regions,
        "outputs_identical_to_serial": True,
    }
    if speedup is not None:
        case["speedup"] = {"median": speedup, "low": speedup, "high": speedup, "exact": True}
    return case


def runs(parallel_speedups: list[list[float]], calibrated_speedups: list[list[float]] | None = None):
    """Runs of sizes small/crossover/large, with the per-run speed-ups given per size.
    Serial medians move 1.5x between runs (VM variance) while the speed-ups do not."""
    sizes = [("small", 1), ("crossover", 8), ("large", 512)]
    docs = []
    for r, drift in enumerate((1.0, 1.5, 1.2)):
        cases = []
        for i, (label, units) in enumerate(sizes):
            serial = 1000.0 * units * drift
            p = parallel_speedups[i][r]
            cases.append(interleaved_case("serial", label, units, serial, None))
            cases.append(interleaved_case("parallel", label, units, serial / p, p))
            if calibrated_speedups:
                c = calibrated_speedups[i][r]
                cases.append(interleaved_case("calibrated", label, units, serial / c, c))
        docs.append({"cases": cases})
    return docs


def test_stability_is_judged_on_speedups_not_absolute_medians():
    cells = report.collect_cells(runs([[1.0, 1.0, 1.0], [1.0, 1.01, 0.99], [1.9, 1.95, 1.9]]))
    serial = cells[("gemm", "MatMul", "float", "large", "serial")]
    assert not serial.stable  # medians 1.5x apart across runs...
    (c,) = report.find_crossovers(cells)
    assert c.parallel_wins == [False, False, True]  # ...but every speed-up comparison decides
    assert c.unstable == []
    assert math.isclose(c.crossover_work_units, math.sqrt(8 * 512))


def test_speedups_that_spread_are_unstable():
    cells = report.collect_cells(runs([[1.0, 1.0, 1.0], [0.7, 1.2, 1.0], [1.9, 1.95, 1.9]]))
    (c,) = report.find_crossovers(cells)
    assert c.parallel_wins[1] is None and c.unstable == ["crossover"]


def test_a_stable_speedup_below_the_tolerance_is_a_loss():
    cells = report.collect_cells(runs([[1.0, 1.0, 1.0], [0.92, 0.93, 0.91], [1.9, 1.95, 1.9]]))
    (loss,) = report.find_losses(cells)
    assert (loss.size, loss.policy) == ("crossover", "parallel")
    assert math.isclose(loss.speedup, 0.92)
    # 0.96x is within the 5% tolerance: not a loss.
    cells = report.collect_cells(runs([[1.0, 1.0, 1.0], [0.96, 0.96, 0.96], [1.9, 1.95, 1.9]]))
    assert report.find_losses(cells) == []


@pytest.mark.parametrize("blocks", [1, 2, report.MIN_BLOCKS - 1])
def test_a_run_of_too_few_blocks_decides_neither_a_loss_nor_a_win(blocks: int):
    # The ScatterElements float16 large cell of kernel_report_avx2.md (f15155e): 2 blocks per
    # run, speed-ups 0.87, 0.99, 0.93 of a policy with the default's tuning.
    docs = runs([[1.0] * 3, [0.87, 0.99, 0.93], [1.9, 1.95, 1.9]])
    for case in docs[1]["cases"]:
        case["blocks"] = blocks  # the second run stopped at the time cap, every size
    cells = report.collect_cells(docs)
    assert report.find_losses(cells) == []
    (c,) = report.find_crossovers(cells)
    assert c.parallel_wins == [None, None, None]
    assert c.unstable == ["small", "crossover", "large"]


def test_runs_of_the_minimum_blocks_decide():
    docs = runs([[1.0] * 3, [0.87, 0.99, 0.93], [1.9, 1.95, 1.9]])
    for doc in docs:
        for case in doc["cases"]:
            case["blocks"] = report.MIN_BLOCKS
    cells = report.collect_cells(docs)
    (loss,) = report.find_losses(cells)
    assert (loss.size, math.isclose(loss.speedup, 0.93)) == ("crossover", True)
    (c,) = report.find_crossovers(cells)
    assert c.parallel_wins == [False, False, True]


def test_calibrated_losses_are_found_separately():
    docs = runs([[1.0] * 3, [1.0] * 3, [1.9] * 3], calibrated_speedups=[[0.8] * 3, [1.0] * 3, [1.9] * 3])
    cells = report.collect_cells(docs)
    assert report.find_losses(cells, "parallel") == []
    (loss,) = report.find_losses(cells, "calibrated")
    assert loss.size == "small"


def test_old_documents_compare_run_medians():
    """Documents without per-block speed-ups (before interleaving) use serial / parallel medians."""
    doc = {
        "cases": [
            {"family": "f", "op": "Add", "size": "s", "policy": "serial", "work_units": 1, "samples_ns": [100] * 3},
            {"family": "f", "op": "Add", "size": "s", "policy": "parallel", "work_units": 1, "samples_ns": [50] * 3},
        ]
    }
    cells = report.collect_cells([doc, doc, doc])
    assert (
        report.speedups(cells[("f", "Add", "", "s", "serial")], cells[("f", "Add", "", "s", "parallel")]) == [2.0] * 3
    )


def test_skipped_cells_are_not_measurements():
    docs = runs([[1.0] * 3, [1.0] * 3, [1.9] * 3])
    for d in docs:
        d["cases"].append({"family": "gemm", "op": "Conv", "size": "large", "policy": "serial", "skipped": "budget"})
    cells = report.collect_cells(docs)
    assert not any(k[1] == "Conv" for k in cells)


def metadata(emulated: bool) -> dict:
    return {
        "revision": "abc",
        "build_config": "opt k8",
        "timings": "native",
        "emulated": emulated,
        "isa_selected": "avx2",
        "processor": {"vendor": "v", "model_name": "m", "isa_level": "x86-64-v3", "physical_cores": 2},
        "execution": {"session_threads": 2, "spin_microseconds": 0, "affinity": "none"},
        "measurement": {"ci_width": 0.04, "min_blocks": 6, "max_blocks": 200, "cell_time_cap_ms": 250},
    }


def test_markdown_shows_default_and_calibrated_side_by_side(tmp_path):
    docs = runs([[1.0] * 3, [0.92, 0.93, 0.91], [1.9] * 3], calibrated_speedups=[[1.0] * 3, [1.0] * 3, [1.9] * 3])
    for d in docs:
        d["metadata"] = metadata(False)
    docs[1]["cases"][-1]["outputs_identical_to_serial"] = False
    by_arch = {"x86_64": docs}
    analysis = publish.analyse(by_arch)
    text = publish.markdown(by_arch, analysis, publish.decisions(analysis), [], str(tmp_path), {"budget": "15 min"})
    assert "| calibrated | calibrated speed-up |" in text.replace("spread | calibrated", "| calibrated")
    row = next(line for line in text.splitlines() if line.startswith("| gemm | MatMul | float | x86_64 | crossover"))
    cols = [c.strip() for c in row.strip("|").split("|")]
    assert cols[7] == "0.92x" and cols[10] == "1.00x"  # default and calibrated speed-ups
    assert "x86_64 MatMul float crossover, parallel: 0.92x" in text
    assert "- budget: 15 min" in text
    assert "kernels' ISA avx2" in text
    assert "outputs bit-identical to serial: 17 of 18 non-serial cells" in text


def test_plan_divides_the_budget_over_runs_and_cells():
    cap_ms, deadline_ms = baseline.plan(cells=1000, runs=3, budget_s=900, calibrate_s=90, setup_share=0.25)
    assert math.isclose(deadline_ms, 270_000)
    assert math.isclose(cap_ms, 270_000 * 0.75 / 1000)
    assert baseline.plan(10, 3, budget_s=60, calibrate_s=90, setup_share=0.25) == (0.0, 0.0)


def test_runs_read_back_must_be_of_the_same_revision(tmp_path):
    for n, rev in ((1, "abc"), (2, "abc")):
        baseline.write({"metadata": {"revision": rev}, "cases": []}, str(tmp_path / f"baseline_run{n}.json"))
    assert len(baseline.read_runs(str(tmp_path), "abc")) == 2
    baseline.write({"metadata": {"revision": "old"}, "cases": []}, str(tmp_path / "baseline_run3.json"))
    with pytest.raises(ValueError, match="baseline_run3.json is of revision old, not abc"):
        baseline.read_runs(str(tmp_path), "abc")
    with pytest.raises(ValueError, match="no baseline_run"):
        baseline.read_runs(str(tmp_path / "missing"), "abc")


def test_an_isa_capped_report_goes_beside_the_default_one():
    default, avx2 = baseline.report_names(None), baseline.report_names("avx2")
    assert (default.stem, default.plots, default.arch_dir("x86_64")) == ("kernel_report", "plots", "x86_64")
    assert (avx2.stem, avx2.plots, avx2.arch_dir("x86_64")) == ("kernel_report_avx2", "plots_avx2", "x86_64_avx2")
    assert avx2.arch_dir("aarch64") == default.arch_dir("aarch64") == "aarch64"  # emulated: never capped


def test_the_isa_cap_is_set_or_cleared_in_the_measured_environment():
    base = {"PATH": "/bin", baseline.MAX_ISA_VARIABLE: "avx512"}
    assert baseline.isa_environment("avx2", base) == {"PATH": "/bin", baseline.MAX_ISA_VARIABLE: "avx2"}
    assert baseline.isa_environment(None, base) == {"PATH": "/bin"}
    assert base[baseline.MAX_ISA_VARIABLE] == "avx512"  # the caller's mapping is not changed
