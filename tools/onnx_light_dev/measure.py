"""Raw serial timings of one kernel path, for exemption evidence.

Inputs come from the ONNX conformance node cases of the op (onnx.backend.test): small,
realistic shapes chosen by the operator's authors. The kernel runs through the native
single-kernel runner (onnx_light.kernel_tuning.run_kernel) with one participant, and a
sample is the kernel's own compute_ns. A case the kernel rejects (an unsupported
attribute or type) is skipped.
"""

import collections
import dataclasses
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx.backend.test.case import node as node_cases
from onnx_light import kernel_tuning

WARMUP = 3
SAMPLES = 11
MAX_CASES = 3
# "Typical" size: a case whose tensor inputs all share one shape is also run with them
# repeated along axis 0 up to about this many elements each.
TYPICAL_ELEMENTS = 1 << 16


@dataclasses.dataclass
class Case:
    name: str
    opset: int
    inputs: list
    attributes: dict
    num_outputs: int


# runner(domain, op, case, participants) -> the kernel's compute ns (native_runner).
Runner = Callable[[str, str, Case, int], int]


def native_runner(domain: str, op: str, case: Case, participants: int) -> int:
    """Runs one registered kernel on a case; returns the kernel's own compute ns."""
    result = kernel_tuning.run_kernel(
        op,
        case.inputs,
        case.opset,
        domain="" if domain == "ai.onnx" else domain,
        attributes=case.attributes,
        num_threads=participants,
        num_outputs=case.num_outputs,
    )
    return result["compute_ns"]


def _onnx_type(array: np.ndarray) -> int:
    return onnx.helper.np_dtype_to_tensor_dtype(array.dtype)


def _python_attribute(value: Any) -> Any:
    """onnx attribute values as the runner takes them (text as str, not bytes)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [_python_attribute(v) for v in value]
    return value


def _element_type_name(array: np.ndarray) -> str:
    return onnx.TensorProto.DataType.Name(_onnx_type(array)).lower()


def _inputs_text(inputs: list[Any]) -> str:
    text = " ".join(
        f"{_element_type_name(a)}{list(a.shape)}" if isinstance(a, np.ndarray) else type(a).__name__ for a in inputs
    )
    return text or "no inputs"


@functools.lru_cache(maxsize=1)
def _single_node_cases() -> dict[tuple[str, str], list[Any]]:
    """{(domain, op): [onnx TestCase]}: the single-node conformance cases, loaded once."""
    by_op = collections.defaultdict(list)
    with warnings.catch_warnings():  # the generators' own overflow/divide warnings
        warnings.simplefilter("ignore")
        all_cases = node_cases.collect_testcases(None)
    for case in all_cases:
        graph = case.model.graph
        if len(graph.node) == 1 and case.data_sets:
            node = graph.node[0]
            by_op[(node.domain or "ai.onnx", node.op_type)].append(case)
    return by_op


def conformance_cases(domain: str, op: str, element_type: str, limit: int = MAX_CASES) -> list[Case]:
    """Single-node conformance cases of (domain, op) whose first input has element_type."""
    cases = []
    for case in _single_node_cases().get((domain, op), []):
        inputs = list(case.data_sets[0][0])
        if element_type != "*" and not (
            inputs and isinstance(inputs[0], np.ndarray) and _element_type_name(inputs[0]) == element_type
        ):
            continue
        opset = next((o.version for o in case.model.opset_import if (o.domain or "ai.onnx") == domain), 0)
        node = case.model.graph.node[0]
        attributes = {a.name: _python_attribute(onnx.helper.get_attribute_value(a)) for a in node.attribute}
        cases.append(Case(case.name, opset, inputs, attributes, len(node.output)))
        if len(cases) == limit:
            break
    return cases


def scaled(case: Case) -> Case | None:
    """The case at a typical size, or None when its inputs do not share one shape."""
    shapes = {a.shape for a in case.inputs if isinstance(a, np.ndarray)}
    if len(shapes) != 1 or len(case.inputs) == 0 or not all(isinstance(a, np.ndarray) for a in case.inputs):
        return None
    shape = shapes.pop()
    size = int(np.prod(shape))
    if not shape or size == 0 or size >= TYPICAL_ELEMENTS:
        return None
    repeats = -(-TYPICAL_ELEMENTS // size)
    inputs = [np.concatenate([a] * repeats, axis=0) for a in case.inputs]
    return dataclasses.replace(case, name=f"{case.name} x{repeats} on axis 0", inputs=inputs)


def measure_path(runner: Runner, domain: str, op: str, element_type: str) -> list[dict[str, Any]]:
    """[{case, inputs, participants, samples_ns}] for up to MAX_CASES conformance cases,
    each also at a typical size where scaled() can make one. runner(domain, op, case,
    participants) returns the kernel's compute ns (native_runner)."""
    measurements = []
    small = conformance_cases(domain, op, element_type)
    for case in small + [c for c in map(scaled, small) if c is not None]:
        try:
            for _ in range(WARMUP):
                runner(domain, op, case, 1)
        except Exception:  # pylint: disable=broad-except  (a case the kernel rejects is skipped)
            continue
        samples = [max(1, int(runner(domain, op, case, 1))) for _ in range(SAMPLES)]
        measurements.append(
            {
                "case": f"onnx conformance {case.name} (compute_ns)",
                "inputs": _inputs_text(case.inputs),
                "participants": 1,
                "samples_ns": samples,
            }
        )
    return measurements
