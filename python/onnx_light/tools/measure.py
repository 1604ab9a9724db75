"""Raw serial timings of one kernel path, for exemption evidence.

Inputs come from the ONNX conformance node cases of the op (onnx.backend.test): small,
realistic shapes chosen by the operator's authors. The kernel runs through the native
single-kernel runner (onnx_light._native.run_kernel, from the tuning work) with one
participant, and a sample is the kernel's own compute_ns; without that runner there are
no measurements and the writer says so.
"""
import collections
import dataclasses
import functools
import time

import numpy as np

WARMUP = 3
SAMPLES = 11
MAX_CASES = 3


@dataclasses.dataclass
class Case:
    name: str
    opset: int
    inputs: list
    attributes: dict


def find_runner():
    """runner(domain, op, opset, inputs, attributes, participants) -> compute ns, or None
    when the native module has no single-kernel runner."""
    from onnx_light import _native  # pylint: disable=import-outside-toplevel
    native = getattr(_native, "run_kernel", None)
    if native is None:
        return None

    def run(domain, op, opset, inputs, attributes, participants):
        # The binding takes tensors as (bytes, shape, ONNX element type) triples.
        triples = [(a.tobytes(), list(a.shape), _onnx_type(a)) for a in inputs]
        attributes = {k: v.decode() if isinstance(v, bytes) else v for k, v in attributes.items()}
        result = native(op=op, opset=opset, domain="" if domain == "ai.onnx" else domain,
                        inputs=triples, attributes=attributes, num_threads=participants)
        return result["compute_ns"]
    return run


def _onnx_type(array):
    import onnx  # pylint: disable=import-outside-toplevel
    return onnx.helper.np_dtype_to_tensor_dtype(array.dtype)


def _element_type_name(array):
    import onnx  # pylint: disable=import-outside-toplevel
    return onnx.TensorProto.DataType.Name(_onnx_type(array)).lower()


def _inputs_text(inputs):
    return " ".join(f"{_element_type_name(a)}{list(a.shape)}" if isinstance(a, np.ndarray) else type(a).__name__
                    for a in inputs)


@functools.lru_cache(maxsize=1)
def _single_node_cases():
    """{(domain, op): [onnx TestCase]}: the single-node conformance cases, loaded once."""
    from onnx.backend.test.case import node as node_cases  # pylint: disable=import-outside-toplevel
    by_op = collections.defaultdict(list)
    for case in node_cases.collect_testcases(None):
        graph = case.model.graph
        if len(graph.node) == 1 and case.data_sets:
            node = graph.node[0]
            by_op[(node.domain or "ai.onnx", node.op_type)].append(case)
    return by_op


def conformance_cases(domain, op, element_type, limit=MAX_CASES):
    """Single-node conformance cases of (domain, op) whose first input has element_type."""
    import onnx  # pylint: disable=import-outside-toplevel
    cases = []
    for case in _single_node_cases().get((domain, op), []):
        inputs = list(case.data_sets[0][0])
        if element_type != "*" and not (inputs and isinstance(inputs[0], np.ndarray)
                                        and _element_type_name(inputs[0]) == element_type):
            continue
        opset = next((o.version for o in case.model.opset_import
                      if (o.domain or "ai.onnx") == domain), 0)
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in case.model.graph.node[0].attribute}
        cases.append(Case(case.name, opset, inputs, attributes))
        if len(cases) == limit:
            break
    return cases


def measure_path(runner, domain, op, element_type):
    """[{case, inputs, participants, samples_ns}] for up to MAX_CASES conformance cases.

    A sample is what the runner returns (the kernel's own compute time) or, when it
    returns nothing, the wall time of the call."""
    measurements = []
    for case in conformance_cases(domain, op, element_type):
        def run():
            return runner(domain, op, case.opset, case.inputs, case.attributes, 1)
        try:
            for _ in range(WARMUP):
                run()
        except Exception:  # pylint: disable=broad-except  (a case the kernel rejects is skipped)
            continue
        samples, clock = [], "compute_ns"
        for _ in range(SAMPLES):
            start = time.perf_counter_ns()
            compute_ns = run()
            if compute_ns is None:
                compute_ns, clock = time.perf_counter_ns() - start, "wall time of the call"
            samples.append(max(1, int(compute_ns)))
        measurements.append({"case": f"onnx conformance {case.name} ({clock})",
                             "inputs": _inputs_text(case.inputs), "participants": 1,
                             "samples_ns": samples})
    return measurements
