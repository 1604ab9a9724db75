"""Every kernel registration (all families, as the extension links them) against onnx.defs.

For each registration: the op exists in its domain; its opset range starts at a version
where the schema changed and does not extend past the next change; its element types are
allowed by the schema's type constraint of the dispatch input. Mismatches that are real
and intentional are listed below as data, with a reason; the test fails on any mismatch
not listed and on any listed one that no longer occurs, and reports the counts.
"""

import collections
import re

import onnx.defs
import onnx_light

DEFAULT_DOMAIN = "ai.onnx"

# Domains onnx.defs does not define: their registrations are checked by their own tests
# (com.microsoft: against onnxruntime's contrib schemas, below).
DOMAINS_OUTSIDE_ONNX = {
    "com.microsoft": "onnxruntime contrib ops: no schema in onnx.defs",
    "ai.onnx_light": "onnx-light's own fused ops, written only by its graph rewrites (SqueezeExcitation)",
}

# (domain, op, since_version, kind) -> why the mismatch is intended. kind is one of
# "range" (the range covers a schema change) or "types:<t1,t2,...>" (registered element
# types the schema's constraint does not allow).
INTENDED = {
    ("ai.onnx", "Gemm", 1, "range"): "Gemm-1 and Gemm-6 have the same attributes (broadcast) and types; one kernel",
    ("ai.onnx", "DeformConv", 19, "range"): "22 only adds bfloat16; the kernel serves float at every version",
    ("ai.onnx", "If", 1, "range"): "untyped; one kernel runs the branch subgraphs of every version",
    ("ai.onnx", "Loop", 1, "range"): "untyped; one kernel runs the body subgraph of every version",
    ("ai.onnx", "Scan", 9, "range"): "untyped; one kernel serves 9+ (Scan-8's batch form is its own registration)",
    ("ai.onnx", "Optional", 15, "range"): "untyped; later versions only widen the type constraint",
    ("ai.onnx", "OptionalGetElement", 15, "range"): "untyped; 18 accepts tensors too, which the kernel handles",
    ("ai.onnx", "OptionalHasElement", 15, "range"): "untyped; 18 accepts tensors too, which the kernel handles",
    ("ai.onnx", "SplitToSequence", 11, "range"): "untyped; 24 only widens the type constraint",
    (
        "ai.onnx.ml",
        "TreeEnsembleClassifier",
        1,
        "range",
    ): "one kernel serves 1 and 3 (reads the *_as_tensor attributes); 5 has 3's attributes (deprecated)",
    (
        "ai.onnx.ml",
        "TreeEnsembleRegressor",
        1,
        "range",
    ): "one kernel serves 1 and 3 (reads the *_as_tensor attributes); 5 has 3's attributes (deprecated)",
}


def _schemas():
    by_op = collections.defaultdict(list)
    for s in onnx.defs.get_all_schemas_with_history():
        by_op[(s.domain or DEFAULT_DOMAIN, s.name)].append(s)
    return {key: sorted(found, key=lambda s: s.since_version) for key, found in by_op.items()}


SCHEMAS = _schemas()
KERNELS = [k.to_dict() for k in onnx_light.registered_kernels()]  # plain dicts, like the cases below


def _element_type(type_str):
    """'tensor(float)', 'seq(tensor(int64))', 'optional(tensor(bool))' -> the element type;
    'map(int64, string)' -> its key type (the ml kernels dispatch on map keys)."""
    found = re.match(r"map\(([a-z0-9]+),", type_str) or re.search(r"tensor\(([a-z0-9]+)\)", type_str)
    return found.group(1) if found else None


def _allowed_types(schema, dispatch_input):
    """Element types the schema allows for input `dispatch_input` (variadic: the last formal);
    -1 (no input dispatches: the kernel's types are its output's): output 0."""
    formals = schema.inputs if dispatch_input >= 0 else schema.outputs
    if not formals:
        return set()
    formal = formals[min(max(dispatch_input, 0), len(formals) - 1)]
    allowed = [formal.type_str]
    for c in schema.type_constraints:
        if c.type_param_str == formal.type_str:
            allowed = c.allowed_type_strs
            break
    return {t for t in (_element_type(a) for a in allowed) if t is not None}


def _mismatches(kernel, schemas_by_op=None):
    """The mismatches of one registration, as (kind, detail) pairs (against onnx.defs, or
    `schemas_by_op` shaped like SCHEMAS)."""
    key = (kernel["domain"], kernel["op"])
    schemas = (SCHEMAS if schemas_by_op is None else schemas_by_op).get(key)
    if schemas is None:
        return [("op", f"{kernel['op']} is not an op of domain {kernel['domain']}")]
    versions = [s.since_version for s in schemas]
    since, end = kernel["since_version"], kernel["end_version"]
    if since not in versions:
        return [("since", f"since_version {since} is not a schema version of {key} ({versions})")]
    found = []
    later = [v for v in versions if v > since]
    if later and (end == -1 or end >= later[0]):
        found.append(("range", f"[{since}, {end}] extends past the change at {later[0]} ({versions})"))
    covered = [s for s in schemas if s.since_version >= since and (end == -1 or s.since_version <= end)]
    if kernel["element_types"]:
        allowed = set()
        for s in covered:
            allowed |= _allowed_types(s, kernel["dispatch_input"])
        extra = sorted(set(kernel["element_types"]) - allowed)
        if extra:
            found.append(("types:" + ",".join(extra), f"not allowed for input {kernel['dispatch_input']}"))
    return found


def _all_mismatches():
    found, outside = {}, collections.Counter()
    for k in KERNELS:
        if k["domain"] in DOMAINS_OUTSIDE_ONNX:
            outside[k["domain"]] += 1
            continue
        for kind, detail in _mismatches(k):
            found[(k["domain"], k["op"], k["since_version"], kind)] = f"{k['family']}: {detail}"
    return found, outside


def test_registry_is_populated_from_every_domain():
    domains = {k["domain"] for k in KERNELS}
    assert {"ai.onnx", "ai.onnx.ml"} <= domains
    assert len(KERNELS) > 500


def test_every_registration_matches_onnx_defs_or_is_listed_with_a_reason():
    found, outside = _all_mismatches()
    unexpected = {k: v for k, v in found.items() if k not in INTENDED}
    stale = sorted(k for k in INTENDED if k not in found)
    print(f"{len(KERNELS)} registrations; {len(found)} intended mismatches listed; outside onnx.defs: {dict(outside)}")
    assert not unexpected, "\n".join(f"{k}: {v}" for k, v in sorted(unexpected.items()))
    assert not stale, f"listed mismatches that no longer occur: {stale}"


def test_checker_flags_a_wrong_range_and_a_wrong_type():
    kernel = {
        "domain": "ai.onnx",
        "op": "Relu",
        "since_version": 6,
        "end_version": -1,
        "element_types": ["float", "string"],
        "dispatch_input": 0,
        "family": "example",
    }
    kinds = [kind for kind, _ in _mismatches(kernel)]
    assert kinds == ["range", "types:string"]
    assert [kind for kind, _ in _mismatches(dict(kernel, since_version=5))] == ["since"]
    assert [kind for kind, _ in _mismatches(dict(kernel, op="NoSuchOp"))] == ["op"]
    assert _mismatches(dict(kernel, end_version=12, element_types=["float"])) == []


def _ort_contrib_schemas():
    """onnxruntime's com.microsoft schemas, shaped like onnx.defs ones for _mismatches."""
    from types import SimpleNamespace

    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    by_op = collections.defaultdict(list)
    for s in ort_state.get_all_operator_schema():
        if s.domain != "com.microsoft":
            continue
        by_op[(s.domain, s.name)].append(
            SimpleNamespace(
                since_version=s.since_version,
                inputs=[SimpleNamespace(type_str=i.typeStr) for i in s.inputs],
                outputs=[SimpleNamespace(type_str=o.typeStr) for o in s.outputs],
                type_constraints=[
                    SimpleNamespace(type_param_str=c.type_param_str, allowed_type_strs=c.allowed_type_strs)
                    for c in s.type_constraints
                ],
            )
        )
    return {key: sorted(found, key=lambda s: s.since_version) for key, found in by_op.items()}


def test_com_microsoft_registrations_match_onnxruntime_contrib_schemas():
    contrib = _ort_contrib_schemas()
    kernels = [k for k in KERNELS if k["domain"] == "com.microsoft"]
    assert {"Tokenizer", "QLinearAdd", "QGemm", "Gelu", "FastGelu"} <= {k["op"] for k in kernels}
    found = {}
    for k in kernels:
        for kind, detail in _mismatches(k, contrib):
            found[(k["op"], k["since_version"], kind)] = f"{k['family']}: {detail}"
    assert not found, "\n".join(f"{key}: {v}" for key, v in sorted(found.items()))
