"""Attribution against ONNX Runtime: where onnx-light spends a whole model's time, per op type.

For each model and thread count: outputs agree; end-to-end wall time of onnx-light, ORT
(default graph optimizations) and ORT with ORT_DISABLE_ALL, either interleaved sample by
sample (ORT's intra-op spinning off) or each runtime in its own block of samples (ORT at
its defaults, spinning on: its workers spin after a run, so a runtime run right after it
pays for that; blocks are separated by a pause); per-node times from onnx-light's node
events and ORT's profiler (separate, profiled runs: profiling costs time, so it never
runs in the end-to-end samples).

Per-node time is the median over the profiled runs of that node; an op type's total is
the sum of its nodes' medians, so op totals add up to the model's node total.

onnx-light's end-to-end time is at its level (`level`, default: the session's default);
its per-node profile is of a session with graph optimisations disabled, which runs the
model's own nodes, as ORT_DISABLE_ALL does: that table compares op type with op type.
ORT's default level fuses nodes (Conv+BatchNormalization+Relu -> FusedConv, MatMul+Add
-> Gemm, ...): each ORT node is mapped to the original nodes it covers (from the graph ORT
saves after optimizing), and its time is compared with the sum of ours over those nodes.
"""

import collections
import json
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import onnx
import onnx_light
import onnxruntime as ort

from onnx_light_dev import environment
from onnx_light_dev.model_corpus import CorpusModel

SCHEMA = "onnx_light.ort_attribution/1"
LEVELS = {"ort": None, "ort_disable_all": ort.GraphOptimizationLevel.ORT_DISABLE_ALL}
RTOL = 1e-3  # relative to the largest reference magnitude (float32 accumulations differ in order)
TIMINGS = ("interleaved", "blocks")
BLOCK_PAUSE_S = 0.5  # between blocks: longer than ORT's workers spin after a run
# onnx-light's graph optimisation levels, as ORT names them (GraphOptimizationLevel).
OPTIMIZATION_LEVELS = {
    "disabled": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "all": "ORT_ENABLE_ALL",
}


def optimization_level(name: str) -> ort.GraphOptimizationLevel:
    """ORT's GraphOptimizationLevel for "disabled"/"basic"/"extended"/"all" or an ORT name
    ("ORT_ENABLE_BASIC", any case); ValueError for anything else."""
    ort_name = OPTIMIZATION_LEVELS.get(name.lower(), name.upper())
    level = getattr(ort.GraphOptimizationLevel, ort_name, None)
    if not isinstance(level, ort.GraphOptimizationLevel):
        names = sorted(OPTIMIZATION_LEVELS) + sorted(OPTIMIZATION_LEVELS.values())
        raise ValueError(f"unknown graph optimization level {name!r}; one of {names}")
    return level


def ours_session(model: bytes, threads: int, level: str | None = None) -> onnx_light.InferenceSession:
    """onnx-light on `threads` threads; level (an optimization_level name) goes to the session
    as ORT's session options carry it (sess_options.graph_optimization_level); None: the
    session's default."""
    if level is None:
        return onnx_light.InferenceSession(model, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = optimization_level(level)
    return onnx_light.InferenceSession(model, sess_options=options)


def ort_session_at_defaults(
    model: bytes | onnx.ModelProto,
    threads: int,
    graph_optimization_level: ort.GraphOptimizationLevel | None = None,
    profile_prefix: str | None = None,
    optimized_model_path: str | None = None,
) -> ort.InferenceSession:
    """benchmarks.ort_reference.ort_session with ORT's intra-op spinning left at its default
    (on): for block timing, where nothing runs beside ORT's spinning workers."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if graph_optimization_level is not None:
        options.graph_optimization_level = graph_optimization_level
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    if optimized_model_path is not None:
        options.optimized_model_filepath = optimized_model_path
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    """{node: median seconds} over a list of {node: seconds} runs (every run has every node)."""
    return {node: statistics.median(run[node] for run in runs) for node in runs[0]}


def _ours_node_run(
    session: onnx_light.InferenceSession, feeds: dict[str, np.ndarray]
) -> tuple[dict[str, float], dict[str, str]]:
    """{node: seconds} and {node: op} of one run from onnx-light's node events."""
    _, nodes, _ = session.run_with_events(None, feeds)
    return {e.node: e.duration_ns * 1e-9 for e in nodes}, {e.node: e.op for e in nodes}


def _ort_node_runs(profile_path: str, warmup: int) -> tuple[list[dict[str, float]], dict[str, str]]:
    """Per-run {node: seconds} and {node: op} from an ORT profile (kernel_time events only)."""
    with open(profile_path) as f:
        events = json.load(f)
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name") == "model_run")
    per_run = [dict() for _ in runs]
    ops = {}
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        node = e["name"][: -len("_kernel_time")]
        ops[node] = e["args"]["op_name"]
        index = next(i for i, (start, end) in enumerate(runs) if start <= e["ts"] <= end)
        per_run[index][node] = per_run[index].get(node, 0.0) + e["dur"] * 1e-6
    return per_run[warmup:], ops


def fusion_coverage(original: onnx.ModelProto, optimized: onnx.ModelProto) -> dict[str | None, list[str]]:
    """{ORT node name (None: folded at load): [original node names]} for ORT's optimized graph.

    ORT keeps the name of a fused chain's anchor in the fused node's name ("fused Gemm_1",
    "MatMul_3/MatMulAddFusion", "Relu_3_out_nchwc"; output names are no guide: a reshape ORT
    inserts after a Gemm takes over the bias Add's output name). A node named nowhere was absorbed:
    it goes to the nearest named node reachable through absorbed nodes whose ORT node is a
    fusion (runs another op type), else to the nearest named one.
    """
    names = {n.name: n for n in original.graph.node}
    anchor = {}  # original node -> ORT node
    for n in optimized.graph.node:
        for token in re.findall(r"[A-Za-z]+_[0-9]+", n.name):
            if token in names:
                anchor.setdefault(token, n.name)
    ort_op = {n.name: n.op_type for n in optimized.graph.node}
    neighbours = collections.defaultdict(set)
    producer = {out: n.name for n in original.graph.node for out in n.output}
    for n in original.graph.node:
        for tensor in n.input:
            if tensor in producer:
                neighbours[n.name].add(producer[tensor])
                neighbours[producer[tensor]].add(n.name)
    coverage = collections.defaultdict(list)
    for node in original.graph.node:
        owner = anchor.get(node.name)
        if owner is None:
            candidates, frontier, seen = [], [node.name], {node.name}
            while frontier:  # breadth first: candidates in order of distance
                frontier = sorted({m for f in frontier for m in neighbours[f]} - seen)
                seen.update(frontier)
                candidates += [m for m in frontier if m in anchor]
                frontier = [m for m in frontier if m not in anchor]
            fused = [m for m in candidates if ort_op[anchor[m]] != names[m].op_type]
            owner = anchor[(fused or candidates)[0]] if candidates else None
        coverage[owner].append(node.name)
    return dict(coverage)


def outside_nodes(
    session: onnx_light.InferenceSession, feeds: dict[str, np.ndarray], runs: int, warmup: int
) -> dict[str, Any]:
    """onnx-light's time outside its nodes, each sample from one run of one session: the
    run's wall time (run_with_events, binding and output conversion included) minus the sum
    of that same run's node durations. The node sums of the per-node table come from other
    runs of another session (graph optimisations disabled), so end to end minus them is not
    an overhead. Node events read the clock and the allocator's counters around every node,
    which lands outside the nodes: an upper bound of what a plain run() spends there."""
    walls, sums = [], []
    for i in range(warmup + runs):
        start = time.perf_counter()
        _, nodes, _ = session.run_with_events(None, feeds)
        wall = time.perf_counter() - start
        if i >= warmup:
            walls.append(wall * 1e3)
            sums.append(sum(e.duration_ns for e in nodes) * 1e-6)
    outside = [w - n for w, n in zip(walls, sums, strict=True)]
    return {
        "median_ms": statistics.median(outside),
        "samples_ms": outside,
        "run_median_ms": statistics.median(walls),
        "node_sum_median_ms": statistics.median(sums),
    }


def _timed(session: Any, feeds: dict[str, np.ndarray]) -> tuple[float, float]:
    """(wall seconds, calling thread's CPU seconds) of one run."""
    start, cpu_start = time.perf_counter(), time.thread_time()
    session.run(None, feeds)
    return time.perf_counter() - start, time.thread_time() - cpu_start


def _node_entries(runs: list[dict[str, float]], ops: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {
        n: {"op": ops[n], "median_ms": s * 1e3, "samples_ms": [r[n] * 1e3 for r in runs]}
        for n, s in _medians(runs).items()
    }


def _op_table(
    ours_nodes: dict[str, float], ours_ops: dict[str, str], theirs_nodes: dict[str, float], theirs_ops: dict[str, str]
) -> list[dict[str, Any]]:
    """Per op type of the same graph: ours and ORT totals (ms), shares, ratio, gap."""
    rows = {}
    for nodes, ops, side in ((ours_nodes, ours_ops, "ours"), (theirs_nodes, theirs_ops, "ort")):
        total = sum(nodes.values())
        for node, seconds in nodes.items():
            row = rows.setdefault(
                ops[node],
                {
                    "op": ops[node],
                    "ours_ms": 0.0,
                    "ort_ms": 0.0,
                    "ours_nodes": 0,
                    "ort_nodes": 0,
                    "ours_share": 0.0,
                    "ort_share": 0.0,
                },
            )
            row[f"{side}_ms"] += seconds * 1e3
            row[f"{side}_nodes"] += 1
            row[f"{side}_share"] += seconds / total if total else 0.0
    return _finish(rows.values())


def _finish(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = list(rows)
    for row in rows:
        row["gap_ms"] = row["ours_ms"] - row["ort_ms"]
        row["ratio"] = row["ours_ms"] / row["ort_ms"] if row["ort_ms"] else None
    return sorted(rows, key=lambda r: -r["gap_ms"])


def _empty_row(ort_op: str) -> dict[str, Any]:
    """A row of the fused table before any node is counted."""
    return {
        "ort_op": ort_op,
        "covers": collections.Counter(),
        "ours_ms": 0.0,
        "ort_ms": 0.0,
        "ort_nodes": 0,
        "ours_share": 0.0,
        "ort_share": 0.0,
    }


def _fused_table(
    ours_nodes: dict[str, float],
    ours_ops: dict[str, str],
    theirs_nodes: dict[str, float],
    theirs_ops: dict[str, str],
    coverage: dict[str | None, list[str]],
) -> list[dict[str, Any]]:
    """Per ORT op type at the default level: its time beside ours over the nodes it covers."""
    ours_total = sum(ours_nodes.values())
    theirs_total = sum(theirs_nodes.values())
    rows = {}
    for ort_node, covered in coverage.items():
        op = theirs_ops.get(ort_node, "(folded at load)" if ort_node is None else "(not profiled)")
        row = rows.setdefault(op, _empty_row(op))
        # Nodes that onnx-light's own graph rewrites folded away ran as part of another node.
        row["covers"].update(ours_ops[n] for n in covered if n in ours_ops)
        ours = sum(ours_nodes.get(n, 0.0) for n in covered)
        row["ours_ms"] += ours * 1e3
        row["ours_share"] += ours / ours_total
        if ort_node is not None:
            theirs = theirs_nodes.get(ort_node, 0.0)
            row["ort_ms"] += theirs * 1e3
            row["ort_share"] += theirs / theirs_total
            row["ort_nodes"] += 1
    # ORT nodes that cover none of ours (layout reorders, inserted casts) cost time too.
    for ort_node, seconds in theirs_nodes.items():
        if ort_node not in coverage:
            op = theirs_ops[ort_node]
            row = rows.setdefault(op, _empty_row(op))
            row["ort_ms"] += seconds * 1e3
            row["ort_share"] += seconds / theirs_total
            row["ort_nodes"] += 1
    for row in rows.values():
        covers = row.pop("covers")
        row["covers"] = dict(sorted(covers.items()))
        if not covers:
            row["fusion"] = "ORT only"  # inserted by ORT (layout reorders, reshapes around Gemm)
        elif sum(covers.values()) != row["ort_nodes"] or set(covers) != {row["ort_op"]}:
            row["fusion"] = "fused"
        else:
            row["fusion"] = ""
    return _finish(rows.values())


def agreement(ours: list[np.ndarray], theirs: list[np.ndarray]) -> dict[str, Any]:
    """The largest difference over the outputs, also relative to the largest reference
    magnitude (the one to read where outputs are far below 1, as with untrained CNNs)."""
    worst = {"max_abs_diff": 0.0, "reference_max_abs": 0.0}
    ok = True
    for got, expected in zip(ours, theirs):
        diff = float(np.max(np.abs(got.astype(np.float64) - expected))) if expected.size else 0.0
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
        ok = ok and got.shape == expected.shape and diff <= RTOL * max(scale, 1.0)
        worst = {
            "max_abs_diff": max(worst["max_abs_diff"], diff),
            "reference_max_abs": max(worst["reference_max_abs"], scale),
        }
    scale = worst["reference_max_abs"]
    relative = worst["max_abs_diff"] / scale if scale else (0.0 if worst["max_abs_diff"] == 0 else float("inf"))
    return {
        **worst,
        "relative_diff": relative,
        "tolerance": f"max|ours-ORT| <= {RTOL} * max(1, max|ORT|)",
        "ok": ok,
    }


def unsupported_ops(model: onnx.ModelProto) -> list[str]:
    """Op types of the model onnx-light registers no kernel for (reported, never skipped)."""
    registered = {(k.domain, k.op) for k in onnx_light.registered_kernels()}
    return sorted({n.op_type for n in model.graph.node if (n.domain or "ai.onnx", n.op_type) not in registered})


def _end_to_end(
    sessions: dict[str, Any],
    feeds: dict[str, np.ndarray],
    samples: int,
    warmup: int,
    timing: str = "interleaved",
    rounds: int = 1,
) -> dict[str, Any]:
    """Wall and caller CPU time of whole runs, the three sessions interleaved sample by sample
    or each in its own block (warm-up, then its samples, then a pause).

    Blocks come in `rounds` rounds (the order rotating each round), `samples` split evenly
    over them: the ratio is then the median of the per-round ratios of block medians, so a
    machine that drifts between rounds (this VM: up to 1.5x within minutes) moves both
    runtimes of a round together instead of one runtime's whole block."""
    order = ["onnx_light", "ort", "ort_disable_all"]
    timed = {name: [] for name in order}
    round_medians = {name: [] for name in order}
    if timing == "blocks":
        per_round = max(1, samples // rounds)
        for r in range(rounds):
            for name in order[r % len(order) :] + order[: r % len(order)]:
                for _ in range(warmup):
                    sessions[name].run(None, feeds)
                block = [_timed(sessions[name], feeds) for _ in range(per_round)]
                timed[name] += block
                round_medians[name].append(statistics.median(w for w, _ in block))
                time.sleep(BLOCK_PAUSE_S)
    else:
        for _ in range(warmup):
            for name in order:
                sessions[name].run(None, feeds)
        for _ in range(samples):
            for name in order:
                timed[name].append(_timed(sessions[name], feeds))
    e2e = {
        name: {
            "median_ms": statistics.median(w for w, _ in s) * 1e3,
            "samples_ms": [w * 1e3 for w, _ in s],
            "caller_cpu_median_ms": statistics.median(c for _, c in s) * 1e3,
            "caller_cpu_samples_ms": [c * 1e3 for _, c in s],
        }
        for name, s in timed.items()
    }
    if timing == "blocks" and rounds > 1:
        per_round_ratios = {
            other: [a / b for a, b in zip(round_medians["onnx_light"], round_medians[other], strict=True)]
            for other in ("ort", "ort_disable_all")
        }
        return {
            "end_to_end": e2e,
            "round_ratios_vs_ort": per_round_ratios["ort"],
            "round_ratios_vs_ort_disable_all": per_round_ratios["ort_disable_all"],
            "ratio_vs_ort": statistics.median(per_round_ratios["ort"]),
            "ratio_vs_ort_disable_all": statistics.median(per_round_ratios["ort_disable_all"]),
        }
    return {
        "end_to_end": e2e,
        "ratio_vs_ort": e2e["onnx_light"]["median_ms"] / e2e["ort"]["median_ms"],
        "ratio_vs_ort_disable_all": e2e["onnx_light"]["median_ms"] / e2e["ort_disable_all"]["median_ms"],
    }


def _per_node(
    model: onnx.ModelProto,
    ours: onnx_light.InferenceSession,
    feeds: dict[str, np.ndarray],
    threads: int,
    ort_session: Callable[..., ort.InferenceSession],
    profiled_runs: int,
    warmup: int,
    timing: str = "interleaved",
) -> dict[str, Any]:
    """Per-node medians of both runtimes and the op-type tables; profiled runs interleaved or
    in blocks like the end-to-end samples (profiling slows every run, so they are kept apart)."""
    data = model.SerializeToString()
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        optimized_path = {level: os.path.join(tmp, f"{level}_optimized.onnx") for level in LEVELS}
        profiled = {
            level: ort_session(
                data, threads, opt, profile_prefix=os.path.join(tmp, level), optimized_model_path=optimized_path[level]
            )
            for level, opt in LEVELS.items()
        }
        ours_runs = []
        if timing == "blocks":
            for _ in range(warmup + profiled_runs):
                run, ours_ops = _ours_node_run(ours, feeds)
                ours_runs.append(run)
            for session in profiled.values():
                time.sleep(BLOCK_PAUSE_S)
                for _ in range(warmup + profiled_runs):
                    session.run(None, feeds)
        else:
            for _ in range(warmup + profiled_runs):
                run, ours_ops = _ours_node_run(ours, feeds)
                ours_runs.append(run)
                for session in profiled.values():
                    session.run(None, feeds)
        result["onnx_light_nodes"] = _node_entries(ours_runs[warmup:], ours_ops)
        ours_nodes = _medians(ours_runs[warmup:])
        for level, session in profiled.items():
            runs, ops = _ort_node_runs(session.end_profiling(), warmup)
            result[f"{level}_nodes"] = _node_entries(runs, ops)
            nodes = _medians(runs)
            if level == "ort_disable_all":
                result["op_types_vs_ort_disable_all"] = _op_table(ours_nodes, ours_ops, nodes, ops)
            else:
                coverage = fusion_coverage(model, onnx.load(optimized_path[level]))
                result["ort_fusion_coverage"] = {str(k): v for k, v in coverage.items()}
                result["op_types_vs_ort"] = _fused_table(ours_nodes, ours_ops, nodes, ops, coverage)
    return result


def attribute_model(
    corpus_model: CorpusModel,
    threads: int,
    ort_session: Callable[..., ort.InferenceSession],
    samples: int = 15,
    profiled_runs: int = 10,
    warmup: int = 2,
    timing: str = "interleaved",
    level: str | None = None,
    rounds: int = 1,
) -> dict[str, Any]:
    """One model at one thread count; ort_session: benchmarks.ort_reference.ort_session (or
    ort_session_at_defaults for blocks); level: onnx-light's graph optimisation level."""
    data = corpus_model.model.SerializeToString()
    feeds = corpus_model.feeds
    result = {
        "model": corpus_model.name,
        "description": corpus_model.description,
        "threads": threads,
        "nodes": len(corpus_model.model.graph.node),
        "op_counts": dict(collections.Counter(n.op_type for n in corpus_model.model.graph.node)),
    }
    sessions = {level: ort_session(data, threads, opt) for level, opt in LEVELS.items()}
    try:
        ours = ours_session(data, threads, level)
        got = ours.run(None, feeds)
    except Exception as error:  # an unsupported op or a failing kernel is data for the report
        return {
            **result,
            "status": "onnx_light_error",
            "error": str(error),
            "unsupported_ops": unsupported_ops(corpus_model.model),
        }
    result["agreement"] = agreement(got, sessions["ort"].run(None, feeds))
    sessions["onnx_light"] = ours
    if timing == "blocks":
        # The agreement run leaves ORT's workers spinning: on 2 cores they would take the
        # second core from onnx-light's first block (MobileNetV3 at 2 threads: 5.55 ms in
        # that block, 2.5-3.0 ms alone, session 8).
        time.sleep(BLOCK_PAUSE_S)
    result.update(_end_to_end(sessions, feeds, samples, warmup, timing, rounds))
    result["onnx_light_outside_nodes"] = outside_nodes(ours, feeds, profiled_runs, warmup)
    # The model's own nodes, node for node (see the module doc).
    unoptimized = ours_session(data, threads, "disabled")
    result.update(
        _per_node(corpus_model.model, unoptimized, feeds, threads, ort_session, profiled_runs, warmup, timing)
    )
    result["status"] = "ok"
    return result


def uptime() -> str:
    try:
        with open("/proc/loadavg") as f:
            return "load average " + " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def run(
    models: Sequence[CorpusModel],
    threads: Sequence[int],
    ort_session: Callable[..., ort.InferenceSession],
    samples: int = 15,
    profiled_runs: int = 10,
    progress: Callable[[dict[str, Any]], None] | None = None,
    timing: str = "interleaved",
    level: str | None = None,
    rounds: int = 1,
) -> dict[str, Any]:
    """The attribution document for `models` (CorpusModel list) x `threads` (ints).

    timing: "interleaved" (sample by sample; give an ort_session with spinning off) or
    "blocks" (each runtime in its own block); level: onnx-light's graph optimisation level
    (optimization_level names; None: the session's default); rounds: blocks mode only, the
    number of rounds of blocks (see _end_to_end)."""
    if timing not in TIMINGS:
        raise ValueError(f"timing must be one of {TIMINGS}, not {timing!r}")
    if rounds < 1 or (rounds > 1 and timing != "blocks"):
        raise ValueError(f"rounds must be 1, or more with blocks timing, not {rounds} with {timing}")
    if level is not None:
        optimization_level(level)  # a bad name fails before any model runs
    timing_text = {
        "interleaved": "wall time (perf_counter) per run, onnx-light / ORT / ORT_DISABLE_ALL interleaved sample by sample",
        "blocks": "wall time (perf_counter) per run, onnx-light, ORT and ORT_DISABLE_ALL each in its own block "
        f"(warm-up, samples, {BLOCK_PAUSE_S} s pause)"
        + (
            f", in {rounds} rounds of {max(1, samples // rounds)} samples (order rotating); "
            "ratios are medians of the per-round ratios"
            if rounds > 1
            else ""
        ),
    }[timing]
    build = onnx_light.build_info()
    doc = {
        "schema": SCHEMA,
        "conditions": {
            "load_before": uptime(),
            "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "onnxruntime": ort.__version__,
            "cpus": os.cpu_count(),
            "samples": samples,
            "profiled_runs": profiled_runs,
            "timing": timing_text,
            "timing_mode": timing,
            "rounds": rounds,
            "ort_settings": "benchmarks/ort_reference.py: intra-op spinning off, sequential, inter-op 1"
            if timing == "interleaved"
            else "ORT defaults (intra-op spinning on), sequential, inter-op 1",
            "graph_optimization_level": level or "default",
            "cpu": environment.processor_descriptor().get("model_name", "unknown"),
            "processor": environment.processor_descriptor(),
            "build": build,
            "build_mode": build.get("compilation_mode", "unknown"),
            "isa": build.get("isa_selected", "unknown"),
            **isa_conditions(build),
        },
        "results": [],
    }
    for model in models:
        for t in threads:
            result = attribute_model(
                model, t, ort_session, samples, profiled_runs, timing=timing, level=level, rounds=rounds
            )
            doc["results"].append(result)
            if progress:
                progress(result)
    doc["conditions"]["load_after"] = uptime()
    return doc


def corpus_op_types(doc: dict[str, Any], threads: int) -> list[dict[str, Any]]:
    """The node-for-node op tables of every model at `threads`, added up per op type."""
    rows = {}
    for r in doc["results"]:
        if r["status"] != "ok" or r["threads"] != threads:
            continue
        for row in r["op_types_vs_ort_disable_all"]:
            total = rows.setdefault(row["op"], {"op": row["op"], "ours_ms": 0.0, "ort_ms": 0.0, "models": []})
            total["ours_ms"] += row["ours_ms"]
            total["ort_ms"] += row["ort_ms"]
            total["models"].append(r["model"])
    return _finish(rows.values())


def problems(doc: dict[str, Any]) -> list[str]:
    """Inconsistencies of a document: op tables that do not add up to the node totals."""
    found = []
    for r in doc["results"]:
        if r["status"] != "ok":
            continue
        where = f"{r['model']}/{r['threads']}T"
        ours = _node_sum(r, "onnx_light")
        for table, level in (("op_types_vs_ort_disable_all", "ort_disable_all"), ("op_types_vs_ort", "ort")):
            theirs = _node_sum(r, level)
            for side, total in (("ours", ours), ("ort", theirs)):
                summed = sum(row[f"{side}_ms"] for row in r[table])
                if not np.isclose(summed, total, rtol=1e-9, atol=1e-9):
                    found.append(f"{where} {table}: {side} rows sum to {summed} ms, nodes to {total} ms")
                shares = sum(row[f"{side}_share"] for row in r[table])
                if total and not np.isclose(shares, 1.0):
                    found.append(f"{where} {table}: {side} shares sum to {shares}")
    return found


NODE_SIDES = ("onnx_light", "ort", "ort_disable_all")


def _node_sum(result: dict[str, Any], side: str) -> float:
    return sum(n["median_ms"] for n in result[f"{side}_nodes"].values())


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio_text(result: dict[str, Any], other: str) -> str:
    """The ratio ours/other, with the range of the per-round ratios when blocks ran in rounds."""
    text = _fmt(result[f"ratio_vs_{other}"])
    rounds = result.get(f"round_ratios_vs_{other}")
    return f"{text} ({_fmt(min(rounds))}-{_fmt(max(rounds))})" if rounds else text


_ISA_NAMES = {"avx512": "AVX-512", "avx2": "AVX2", "neon": "NEON", "portable": "portable code"}


def isa_conditions(build: dict[str, Any]) -> dict[str, Any]:
    """What each runtime's kernels use: ONNX_LIGHT_MAX_ISA caps ours, while ORT has no cap
    (no CPUID faulting on the hosts we run on) and takes the host's best ISA, so a capped
    run compares our kernels at the cap with ORT's at the host's level. (Under valgrind both
    see the ISA valgrind exposes, and nothing is capped.)"""
    ours, host = build.get("isa_selected", "unknown"), build.get("isa_supported", "unknown")
    capped = ours != host
    note = (
        f"onnx-light ISA {ours} (capped); ORT uses the host's ISA ({host}), so ratios compare "
        f"our {_ISA_NAMES.get(ours, ours)} with ORT's {_ISA_NAMES.get(host, host)}"
        if capped
        else f"onnx-light ISA {ours}, ORT the host's ({host}): the same level"
    )
    return {"isa_capped": capped, "ort_isa": host, "isa_note": note}


def _conditions_text(c: dict[str, Any]) -> str:
    """The conditions sentence of the report (documents before the build fields had none)."""
    text = (
        f"started {c['started_utc']} UTC, {c['cpus']} CPUs, "
        f"{c['load_before']} before and {c['load_after']} after; onnxruntime {c['onnxruntime']}; "
        f"{c['samples']} end-to-end samples per runtime ({c['timing']}); per-node medians over "
        f"{c['profiled_runs']} profiled runs (onnx-light node events, ORT profiler). {c['ort_settings']}."
    )
    if "build" in c:
        text += (
            f" CPU {c['cpu']}; onnx-light build {c['build_mode']}, "
            + (f"{c['isa_note']}; " if "isa_note" in c else f"ISA {c['isa']}; ")
            + f"onnx-light graph optimization level {c['graph_optimization_level']}."
        )
    return text


def ratio_summary(doc: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """{threads: geometric mean and largest ours/ORT end-to-end ratio over the models that ran,
    and the models that did not run}."""
    summary = {}
    for threads in sorted({r["threads"] for r in doc["results"]}):
        ok = [r for r in doc["results"] if r["threads"] == threads and r["status"] == "ok"]
        ratios = [r["ratio_vs_ort"] for r in ok]
        worst = max(ok, key=lambda r: r["ratio_vs_ort"]) if ok else None
        summary[threads] = {
            "models": len(ok),
            "geometric_mean": float(np.exp(np.mean(np.log(ratios)))) if ratios else None,
            "max": worst["ratio_vs_ort"] if worst else None,
            "max_model": worst["model"] if worst else None,
            "failed": [r["model"] for r in doc["results"] if r["threads"] == threads and r["status"] != "ok"],
        }
    return summary


def chart_data(doc: dict[str, Any]) -> tuple[list[str], dict[int, list[float | None]]]:
    """(models in document order, {threads: ours/ORT end-to-end ratio per model, None where
    onnx-light failed or the model did not run at that thread count})."""
    models = list(dict.fromkeys(r["model"] for r in doc["results"]))
    ratios = {}
    for threads in sorted({r["threads"] for r in doc["results"]}):
        by_model = {r["model"]: r for r in doc["results"] if r["threads"] == threads}
        ratios[threads] = [
            by_model[m]["ratio_vs_ort"] if m in by_model and by_model[m]["status"] == "ok" else None for m in models
        ]
    return models, ratios


def chart(doc: dict[str, Any], path: str) -> None:
    """A bar chart (PNG): ours/ORT end-to-end latency per model, one bar per thread count, a
    line at 1.0 (below: onnx-light faster); models onnx-light failed on are marked."""
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    models, ratios = chart_data(doc)
    width = 0.8 / max(len(ratios), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(models) + 2), 4.5))
    for i, (threads, values) in enumerate(ratios.items()):
        xs = [m + (i - (len(ratios) - 1) / 2) * width for m in range(len(models))]
        bars = ax.bar(xs, [v or 0.0 for v in values], width, label=f"{threads} thread{'s' if threads > 1 else ''}")
        for bar, value in zip(bars, values):
            label = "failed" if value is None else f"{value:.2f}"
            ax.annotate(
                label, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=7
            )
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--")
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("latency ours / ORT (lower is better)")
    c = doc["conditions"]
    ax.set_title(
        f"onnx-light vs ONNX Runtime {c['onnxruntime']} (default level), end to end\n"
        f"{c.get('cpu', '')} {c.get('isa', '')}, onnx-light level {c.get('graph_optimization_level', 'default')}",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def markdown(doc: dict[str, Any], name: str = "attribution") -> str:
    c = doc["conditions"]
    command = "./bazelw run --config=opt //tools:ort_attribution"
    if c.get("corpus") and c["corpus"] != ["builtin"]:
        command += f" -- --corpus={','.join(c['corpus'])}"
    lines = [
        "# onnx-light vs ONNX Runtime: attribution per op type",
        "",
        f"Generated by `{command}` at revision "
        f"{c.get('revision', 'unknown')}{' (with uncommitted changes)' if c.get('uncommitted_changes') else ''}. "
        f"Conditions: {_conditions_text(c)} Raw samples are in {name}.json; the chart is {name}.png.",
        "",
        "Ratios are ours / ORT (>1: onnx-light slower). Tables are sorted by the gap (ours - ORT, ms): "
        "the top rows are where onnx-light loses the most time. Per-node times include each runtime's "
        "per-node dispatch cost.",
        "",
    ]
    lines += [
        "## Corpus",
        "",
        "End-to-end ours/ORT over the models that ran: geometric mean and the largest.",
        "",
        "| threads | models | geometric mean | largest | failed |",
        "|---|---|---|---|---|",
    ]
    for threads, row in ratio_summary(doc).items():
        largest = f"{_fmt(row['max'])} ({row['max_model']})" if row["max_model"] else "-"
        lines.append(
            f"| {threads} | {row['models']} | {_fmt(row['geometric_mean'])} | {largest} | "
            f"{', '.join(row['failed']) or 'none'} |"
        )
    lines.append("")
    lines += [
        "## Summary",
        "",
        "End to end: median wall ms (ratio ours/ORT); 1 thread also as the calling thread's CPU ms (both "
        "runtimes compute on the caller then; other processes inflate it less). Node sums: per-node "
        "medians of the profiled runs added up; ours are of a session with graph optimisations disabled "
        "(the model's own nodes), so end to end minus them is not an overhead. Ours outside nodes: "
        "median over runs of the end-to-end session of (run wall time - that run's node durations), "
        "binding and output conversion included; node events add their own clock reads to it.",
        "",
        "| model | threads | ours ms | ORT ms | ratio | ORT_DISABLE_ALL ms | ratio | 1T CPU ratio | "
        "node sums ours / ORT / ORT_DISABLE_ALL ms | ours outside nodes ms | outputs agree |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["results"]:
        if r["status"] != "ok":
            lines.append(f"| {r['model']} | {r['threads']} | error: {r['error'][:80]} | | | | | | | | |")
            continue
        e = r["end_to_end"]
        cpu_ratio = (
            "-"
            if r["threads"] != 1
            else _fmt(e["onnx_light"]["caller_cpu_median_ms"] / e["ort"]["caller_cpu_median_ms"])
        )
        lines.append(
            f"| {r['model']} | {r['threads']} | {_fmt(e['onnx_light']['median_ms'])} | "
            f"{_fmt(e['ort']['median_ms'])} | {_ratio_text(r, 'ort')} | "
            f"{_fmt(e['ort_disable_all']['median_ms'])} | {_ratio_text(r, 'ort_disable_all')} | "
            f"{cpu_ratio} | {' / '.join(_fmt(_node_sum(r, side)) for side in NODE_SIDES)} | "
            f"{_fmt(r['onnx_light_outside_nodes']['median_ms'], 3) if 'onnx_light_outside_nodes' in r else '-'} | "
            f"{'yes' if r['agreement']['ok'] else 'NO'} (max diff {r['agreement']['max_abs_diff']:.1e}"
            + (f", relative {r['agreement']['relative_diff']:.1e}" if "relative_diff" in r["agreement"] else "")
            + ") |"
        )
    for threads in sorted({r["threads"] for r in doc["results"]}):
        lines += [
            "",
            f"## Across the corpus, {threads} thread(s)",
            "",
            "Node-for-node (ORT_DISABLE_ALL) op totals of every model added up: where kernel work pays.",
            "",
            "| op | ours ms | ORT ms | ratio | gap ms | models |",
            "|---|---|---|---|---|---|",
        ]
        for row in corpus_op_types(doc, threads):
            lines.append(
                f"| {row['op']} | {_fmt(row['ours_ms'], 3)} | {_fmt(row['ort_ms'], 3)} | "
                f"{_fmt(row['ratio'])} | {row['gap_ms']:+.3f} | {', '.join(row['models'])} |"
            )
    for r in doc["results"]:
        lines += [
            "",
            f"## {r['model']}, {r['threads']} thread(s)",
            "",
            f"{r['description']}; {r['nodes']} nodes: "
            + ", ".join(f"{op} x{n}" for op, n in sorted(r["op_counts"].items()))
            + ".",
            "",
        ]
        if r["status"] != "ok":
            lines += [
                f"onnx-light failed: `{r['error']}`; ops without an onnx-light kernel: "
                f"{', '.join(r['unsupported_ops']) or 'none'}."
            ]
            continue
        lines += [
            "Same graph as ORT_DISABLE_ALL (node for node):",
            "",
            "| op | ours ms | ORT ms | ours share | ORT share | ratio | gap ms | nodes |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in r["op_types_vs_ort_disable_all"]:
            lines.append(
                f"| {row['op']} | {_fmt(row['ours_ms'], 3)} | {_fmt(row['ort_ms'], 3)} | "
                f"{row['ours_share']:.0%} | {row['ort_share']:.0%} | {_fmt(row['ratio'])} | "
                f"{row['gap_ms']:+.3f} | {row['ours_nodes']} |"
            )
        lines += [
            "",
            "Against ORT's default optimizations (ours summed over the nodes each ORT op covers; "
            "fused = one ORT node runs several of ours or another op type; ORT only = nodes ORT inserted):",
            "",
            "| ORT op | covers (ours) | fusion | ours ms | ORT ms | ours share | ORT share | ratio | gap ms |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in r["op_types_vs_ort"]:
            covers = ", ".join(f"{op} x{n}" for op, n in row["covers"].items()) or "none"
            lines.append(
                f"| {row['ort_op']} | {covers} | {row['fusion']} | "
                f"{_fmt(row['ours_ms'], 3)} | {_fmt(row['ort_ms'], 3)} | {row['ours_share']:.0%} | "
                f"{row['ort_share']:.0%} | {_fmt(row['ratio'])} | {row['gap_ms']:+.3f} |"
            )
    return "\n".join(lines) + "\n"


def write(doc: dict[str, Any], directory: str, name: str = "attribution") -> list[str]:
    """<name>.json, <name>.md and the chart <name>.png in `directory`; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    paths = [os.path.join(directory, f"{name}.{ext}") for ext in ("json", "md", "png")]
    with open(paths[0], "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(paths[1], "w") as f:
        f.write(markdown(doc, name))
    chart(doc, paths[2])
    return paths
