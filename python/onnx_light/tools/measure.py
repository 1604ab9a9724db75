"""Raw serial timings of one kernel path, for exemption evidence.

Inputs come from the ONNX conformance node cases of the op (onnx.backend.test): small,
realistic shapes chosen by the operator's authors. The kernel runs through the native
single-kernel runner (onnx_light._native.run_kernel) with one participant; without that
runner there are no measurements and the writer says so.
"""
import dataclasses
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
    from onnx_light import _native  # pylint: disable=import-outside-toplevel
    return getattr(_native, "run_kernel", None)


def _element_type_name(array):
    import onnx  # pylint: disable=import-outside-toplevel
    return onnx.TensorProto.DataType.Name(onnx.helper.np_dtype_to_tensor_dtype(array.dtype)).lower()


def _inputs_text(inputs):
    return " ".join(f"{_element_type_name(a)}{list(a.shape)}" if isinstance(a, np.ndarray) else type(a).__name__
                    for a in inputs)


def conformance_cases(domain, op, element_type, limit=MAX_CASES):
    """Single-node conformance cases of (domain, op) whose first input has element_type."""
    import onnx  # pylint: disable=import-outside-toplevel
    from onnx.backend.test.case import node as node_cases  # pylint: disable=import-outside-toplevel
    cases = []
    for case in node_cases.collect_testcases(None):
        graph = case.model.graph
        if len(graph.node) != 1 or not case.data_sets:
            continue
        node = graph.node[0]
        if node.op_type != op or (node.domain or "ai.onnx") != domain:
            continue
        inputs = list(case.data_sets[0][0])
        if element_type != "*" and not (inputs and isinstance(inputs[0], np.ndarray)
                                        and _element_type_name(inputs[0]) == element_type):
            continue
        opset = next((o.version for o in case.model.opset_import
                      if (o.domain or "ai.onnx") == domain), 0)
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        cases.append(Case(case.name, opset, inputs, attributes))
        if len(cases) == limit:
            break
    return cases


def measure_path(runner, domain, op, element_type):
    """[{case, inputs, participants, samples_ns}] for up to MAX_CASES conformance cases."""
    measurements = []
    for case in conformance_cases(domain, op, element_type):
        def run():
            return runner(domain, op, case.opset, case.inputs, case.attributes, 1)
        try:
            for _ in range(WARMUP):
                run()
        except Exception:  # pylint: disable=broad-except  (a case the kernel rejects is skipped)
            continue
        samples = []
        for _ in range(SAMPLES):
            start = time.perf_counter_ns()
            run()
            samples.append(max(1, time.perf_counter_ns() - start))
        measurements.append({"case": f"onnx conformance {case.name} (run_kernel wall time)",
                             "inputs": _inputs_text(case.inputs), "participants": 1,
                             "samples_ns": samples})
    return measurements
