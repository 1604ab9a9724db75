"""onnx.backend implementation, as onnxruntime.backend provides one:

import onnx.backend.test
import onnx_light.backend
backend_test = onnx.backend.test.BackendTest(onnx_light.backend, __name__)
"""

from collections.abc import Sequence
from typing import Any

import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep

from onnx_light._values import element_type_of
from onnx_light.session import InferenceSession


class OnnxLightBackendRep(BackendRep):
    """A prepared model: run(inputs) with inputs a list (graph input order) or a dict."""

    def __init__(self, session: InferenceSession) -> None:
        self.session = session
        self._input_names = [vi.name for vi in session._model.graph.input]

    # onnx.backend.base declares tuples; the outputs are a list, as ONNX Runtime's backend returns.
    def run(self, inputs: Any, **kwargs: Any) -> list[Any]:  # type: ignore[override]
        return self.session.run(None, self._feeds(inputs), kwargs.get("run_options"))

    def run_with_events(self, inputs: Any, **kwargs: Any) -> tuple[list[Any], list[Any], list[Any]]:
        """As run, also returning (node events, region events) of the run."""
        return self.session.run_with_events(None, self._feeds(inputs), kwargs.get("run_options"))

    def _feeds(self, inputs: Any) -> dict[str, Any]:
        if isinstance(inputs, dict):
            feeds = inputs
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            if len(inputs) > len(self._input_names):
                raise ValueError(f"{len(inputs)} inputs given; the model has {len(self._input_names)}")
            feeds = dict(zip(self._input_names, inputs))
        return feeds


class OnnxLightBackend(Backend):
    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() == "CPU"

    @classmethod
    def prepare(cls, model: onnx.ModelProto | bytes | str, device: str = "CPU", **kwargs: Any) -> OnnxLightBackendRep:
        """kwargs: cpu_execution (CpuExecutionPolicy), tuning_profile, memory_limit_bytes (0 = the
        machine's memory), check_model (default True)."""
        if not cls.supports_device(device):
            raise ValueError(f"onnx-light runs on the CPU only, not {device!r}")
        if isinstance(model, (bytes, bytearray)):
            model = onnx.load_model_from_string(bytes(model))
        if isinstance(model, onnx.ModelProto) and kwargs.get("check_model", True):
            super().prepare(model, device)  # onnx.checker, as every backend does
        session = InferenceSession(
            model,
            cpu_execution=kwargs.get("cpu_execution"),
            tuning_profile=kwargs.get("tuning_profile"),
            memory_limit_bytes=kwargs.get("memory_limit_bytes", 0),
        )
        return OnnxLightBackendRep(session)

    @classmethod
    def run_model(  # type: ignore[override]  # a list, see OnnxLightBackendRep.run
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> list[Any]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(  # type: ignore[override]  # a list, see OnnxLightBackendRep.run
        cls,
        node: onnx.NodeProto,
        inputs: Sequence[Any],
        device: str = "CPU",
        outputs_info: Any = None,
        **kwargs: Any,
    ) -> list[Any]:
        """Runs one node on numpy inputs (positional, matching node.input)."""
        super().run_node(node, inputs, device=device, outputs_info=outputs_info, **kwargs)
        present = [name for name in node.input if name]
        if len(inputs) != len(present):
            raise ValueError(f"{node.op_type} has {len(present)} inputs, {len(inputs)} given")
        graph_inputs = [
            helper.make_tensor_value_info(name, element_type_of(value.dtype), value.shape)
            for name, value in zip(present, inputs)
        ]
        graph_outputs = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        model = helper.make_model(
            helper.make_graph([node], f"run_node_{node.op_type}", graph_inputs, graph_outputs),
            opset_imports=[helper.make_opsetid(node.domain or "", opset)],
        )
        # Outputs have no declared type, which the checker would refuse.
        return cls.prepare(model, device, check_model=False, **kwargs).run(list(inputs))


is_compatible = OnnxLightBackend.is_compatible
prepare = OnnxLightBackend.prepare
run = OnnxLightBackend.run_model
run_model = OnnxLightBackend.run_model
run_node = OnnxLightBackend.run_node
supports_device = OnnxLightBackend.supports_device
