"""The tensor families register every opset range and type constraint onnx defines."""

import collections

import onnx.defs
import onnx_light
import pytest

# op -> which schema constraint the registered element types must equal (None: untyped).
OPS = {
    "Cast": "input",
    "CastLike": "input",
    "Shape": "input",
    "Size": "input",
    "Reshape": "input",
    "Flatten": "input",
    "Squeeze": "input",
    "Unsqueeze": "input",
    "Identity": "input",
    "Constant": None,
    "ConstantOfShape": "output",
    "Range": "input",
    "EyeLike": "input",
    "Gather": "input",
    "GatherElements": "input",
    "GatherND": "input",
    "Concat": "input",
    "Split": "input",
    "Slice": "input",
    "Expand": "input",
    "Tile": "input",
    "Pad": "input",
    "ScatterElements": "input",
    "Scatter": "input",
    "ScatterND": "input",
    "DepthToSpace": "input",
    "SpaceToDepth": "input",
    "Trilu": "input",
    "NonZero": "input",
    "Compress": "input",
    "Unique": "input",
    "OneHot": "input",
    "ReverseSequence": "input",
}


def onnx_schemas(op):
    found = [s for s in onnx.defs.get_all_schemas_with_history() if s.domain == "" and s.name == op]
    return sorted(found, key=lambda s: s.since_version)


def constraint_types(schema, side):
    formal = (schema.inputs if side == "input" else schema.outputs)[0]
    for c in schema.type_constraints:
        if c.type_param_str == formal.type_str:
            allowed = c.allowed_type_strs
            break
    else:
        allowed = [formal.type_str]
    return sorted(t[len("tensor(") : -1] for t in allowed if t.startswith("tensor("))


def registered():
    by_op = collections.defaultdict(list)
    for k in (r.to_dict() for r in onnx_light.registered_kernels()):
        if k["domain"] == "ai.onnx" and k["op"] in OPS:
            by_op[k["op"]].append(k)
    return by_op


REGISTERED = registered()


@pytest.mark.parametrize("op", sorted(op for op in OPS if op in REGISTERED))
def test_every_opset_range_and_type_constraint(op):
    schemas = onnx_schemas(op)
    defs = sorted(REGISTERED[op], key=lambda k: k["since_version"])
    assert [k["since_version"] for k in defs] == [s.since_version for s in schemas]
    for i, (k, s) in enumerate(zip(defs, schemas)):
        end = schemas[i + 1].since_version - 1 if i + 1 < len(schemas) else -1
        assert k["end_version"] == end, (op, s.since_version)
        if OPS[op] is None:
            assert k["element_types"] == []
        else:
            assert sorted(k["element_types"]) == constraint_types(s, OPS[op]), (op, s.since_version)
