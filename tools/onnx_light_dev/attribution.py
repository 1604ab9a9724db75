"""Attribution against ONNX Runtime: where onnx-light spends a whole model's time, per op type.

For each model and thread count: outputs agree; end-to-end wall time of onnx-light, ORT
(default graph optimizations) and ORT with ORT_DISABLE_ALL, interleaved sample by sample;
per-node times from onnx-light's node events and ORT's profiler (separate, profiled
runs: profiling costs time, so it never runs in the end-to-end samples).

Per-node time is the median over the profiled runs of that node; an op type's total is
the sum of its nodes' medians, so op totals add up to the model's node total.

onnx-light's end-to-end time is at its default graph optimisation level; its per-node
profile is of a session with graph optimisations disabled, which runs the model's own
nodes, as ORT_DISABLE_ALL does: that table compares op type with op type. The default level fuses nodes (Conv+BatchNormalization+Relu -> FusedConv, MatMul+Add
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

from onnx_light_dev.model_corpus import CorpusModel

SCHEMA = "onnx_light.ort_attribution/1"
LEVELS = {"ort": None, "ort_disable_all": ort.GraphOptimizationLevel.ORT_DISABLE_ALL}
RTOL = 1e-3  # relative to the largest reference magnitude (float32 accumulations differ in order)


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


def _agreement(ours: list[np.ndarray], theirs: list[np.ndarray]) -> dict[str, Any]:
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
    return {**worst, "tolerance": f"max|ours-ORT| <= {RTOL} * max(1, max|ORT|)", "ok": ok}


def unsupported_ops(model: onnx.ModelProto) -> list[str]:
    """Op types of the model onnx-light registers no kernel for (reported, never skipped)."""
    registered = {(k.domain, k.op) for k in onnx_light.registered_kernels()}
    return sorted({n.op_type for n in model.graph.node if (n.domain or "ai.onnx", n.op_type) not in registered})


def _end_to_end(sessions: dict[str, Any], feeds: dict[str, np.ndarray], samples: int, warmup: int) -> dict[str, Any]:
    """Wall and caller CPU time of whole runs, the three sessions interleaved sample by sample."""
    order = ["onnx_light", "ort", "ort_disable_all"]
    for _ in range(warmup):
        for name in order:
            sessions[name].run(None, feeds)
    timed = {name: [] for name in order}
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
) -> dict[str, Any]:
    """Per-node medians of both runtimes and the op-type tables; profiled runs interleaved
    like the end-to-end samples (profiling slows every run, so they are kept apart)."""
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
) -> dict[str, Any]:
    """One model at one thread count; ort_session: benchmarks.ort_reference.ort_session."""
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
        ours = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
        got = ours.run(None, feeds)
    except Exception as error:  # an unsupported op or a failing kernel is data for the report
        return {
            **result,
            "status": "onnx_light_error",
            "error": str(error),
            "unsupported_ops": unsupported_ops(corpus_model.model),
        }
    result["agreement"] = _agreement(got, sessions["ort"].run(None, feeds))
    sessions["onnx_light"] = ours
    result.update(_end_to_end(sessions, feeds, samples, warmup))
    # The model's own nodes, node for node (see the module doc).
    unoptimized = onnx_light.InferenceSession(
        data,
        cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads),
        graph_optimization_level="disabled",
    )
    result.update(_per_node(corpus_model.model, unoptimized, feeds, threads, ort_session, profiled_runs, warmup))
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
) -> dict[str, Any]:
    """The attribution document for `models` (CorpusModel list) x `threads` (ints)."""
    doc = {
        "schema": SCHEMA,
        "conditions": {
            "load_before": uptime(),
            "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "onnxruntime": ort.__version__,
            "cpus": os.cpu_count(),
            "samples": samples,
            "profiled_runs": profiled_runs,
            "timing": "wall time (perf_counter) per run, onnx-light / ORT / ORT_DISABLE_ALL interleaved sample by sample",
            "ort_settings": "benchmarks/ort_reference.py: intra-op spinning off, sequential, inter-op 1",
        },
        "results": [],
    }
    for model in models:
        for t in threads:
            result = attribute_model(model, t, ort_session, samples, profiled_runs)
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


def markdown(doc: dict[str, Any]) -> str:
    c = doc["conditions"]
    lines = [
        "# onnx-light vs ONNX Runtime: attribution per op type",
        "",
        "Generated by `./bazelw run --config=opt //tools:ort_attribution` at revision "
        f"{c.get('revision', 'unknown')}{' (with uncommitted changes)' if c.get('uncommitted_changes') else ''}. "
        "Conditions: "
        f"started {c['started_utc']} UTC, {c['cpus']} CPUs shared with other engineers' builds, "
        f"{c['load_before']} before and {c['load_after']} after; onnxruntime {c['onnxruntime']}; "
        f"{c['samples']} end-to-end samples per runtime ({c['timing']}); per-node medians over "
        f"{c['profiled_runs']} profiled runs (onnx-light node events, ORT profiler). {c['ort_settings']}. "
        "Raw samples are in attribution.json.",
        "",
        "Ratios are ours / ORT (>1: onnx-light slower). Tables are sorted by the gap (ours - ORT, ms): "
        "the top rows are where onnx-light loses the most time. Per-node times include each runtime's "
        "per-node dispatch cost.",
        "",
    ]
    lines += [
        "## Summary",
        "",
        "End to end: median wall ms (ratio ours/ORT); 1 thread also as the calling thread's CPU ms (both "
        "runtimes compute on the caller then; other processes inflate it less). Node sums: per-node "
        "medians of the profiled runs added up (the rest of end to end is per-run overhead).",
        "",
        "| model | threads | ours ms | ORT ms | ratio | ORT_DISABLE_ALL ms | ratio | 1T CPU ratio | "
        "node sums ours / ORT / ORT_DISABLE_ALL ms | outputs agree |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["results"]:
        if r["status"] != "ok":
            lines.append(f"| {r['model']} | {r['threads']} | error: {r['error'][:80]} | | | | | |")
            continue
        e = r["end_to_end"]
        cpu_ratio = (
            "-"
            if r["threads"] != 1
            else _fmt(e["onnx_light"]["caller_cpu_median_ms"] / e["ort"]["caller_cpu_median_ms"])
        )
        lines.append(
            f"| {r['model']} | {r['threads']} | {_fmt(e['onnx_light']['median_ms'])} | "
            f"{_fmt(e['ort']['median_ms'])} | {_fmt(r['ratio_vs_ort'])} | "
            f"{_fmt(e['ort_disable_all']['median_ms'])} | {_fmt(r['ratio_vs_ort_disable_all'])} | "
            f"{cpu_ratio} | {' / '.join(_fmt(_node_sum(r, side)) for side in NODE_SIDES)} | "
            f"{'yes' if r['agreement']['ok'] else 'NO'} (max diff {r['agreement']['max_abs_diff']:.1e}) |"
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


def write(doc: dict[str, Any], directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "attribution.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(os.path.join(directory, "attribution.md"), "w") as f:
        f.write(markdown(doc))
