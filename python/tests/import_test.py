import onnx_light
import pytest


def test_native_module_loads_and_maps_errors():
    assert onnx_light._native.data_type_name(1) == "float"
    assert onnx_light._native.data_type_name(23) == "float4e2m1"
    with pytest.raises(ValueError, match="unknown ONNX element type 99"):
        onnx_light._native.data_type_name(99)
    assert issubclass(onnx_light.InvalidArgument, ValueError)


def test_registered_kernels_is_a_list():
    kernels = onnx_light.registered_kernels()
    assert isinstance(kernels, list)
    for k in kernels:
        assert {"domain", "op", "since_version", "family", "element_types", "tuning"} <= set(k)
