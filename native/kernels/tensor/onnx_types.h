// Type constraints as ONNX's schemas spell them, for registrations' TypesAt(...), and the
// opset range that covers a version. Checked against onnx.defs by
// python/tests/kernel_registrations_test.py.
#pragma once

#include <initializer_list>
#include <vector>

#include "native/core/data_type.h"
#include "native/registry/kernel.h"

namespace onnx_light {

struct TensorTypeSet {
  bool string = true;
  bool complex = true;
  bool bool_type = true;
  bool float8 = true;    // float8e4m3fn/fnuz, float8e5m2/fnuz (opset 19+), float8e8m0 (24+)
  bool sub_byte = true;  // int4/uint4 (21+), float4e2m1 (23+), int2/uint2 (25+), float6 (28+)
};

// The element types ONNX's "all tensor types" constraint lists at `opset` (types join the
// standard as opsets grow: bfloat16 at 13, float8 at 19, int4 at 21, ...), minus what
// `set` leaves out.
std::vector<DataType> TensorTypesAt(int opset, TensorTypeSet set = {});

// The since_version of the range (from `versions`, ascending) that covers `opset`.
int CoveringVersion(std::initializer_list<int> versions, int opset);

}  // namespace onnx_light
