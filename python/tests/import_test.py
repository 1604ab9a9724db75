import onnx_light
import pytest


def test_native_module_loads_and_maps_errors():
    assert onnx_light._native.data_type_name(1) == "float"
    assert onnx_light._native.data_type_name(23) == "float4e2m1"
    with pytest.raises(ValueError, match="unknown ONNX element type 99"):
        onnx_light._native.data_type_name(99)
    assert issubclass(onnx_light.InvalidArgument, ValueError)


def test_registered_kernels_is_a_list_of_registrations():
    kernels = onnx_light.registered_kernels()
    assert isinstance(kernels, list) and kernels
    for k in kernels:
        assert isinstance(k, onnx_light._native.KernelRegistration)
        assert {"domain", "op", "since_version", "family", "element_types", "tuning"} <= set(k.to_dict())
        assert k.to_dict()["op"] == k.op and repr(k).startswith("KernelRegistration(")
