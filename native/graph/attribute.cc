#include "native/graph/attribute.h"

namespace onnx_light {

const char* AttributeTypeName(Attribute::Type type) {
  switch (type) {
    case Attribute::Type::kFloat:
      return "float";
    case Attribute::Type::kInt:
      return "int";
    case Attribute::Type::kString:
      return "string";
    case Attribute::Type::kTensor:
      return "tensor";
    case Attribute::Type::kGraph:
      return "graph";
    case Attribute::Type::kFloats:
      return "floats";
    case Attribute::Type::kInts:
      return "ints";
    case Attribute::Type::kStrings:
      return "strings";
    case Attribute::Type::kTensors:
      return "tensors";
    case Attribute::Type::kGraphs:
      return "graphs";
    case Attribute::Type::kSparseTensor:
      return "sparse_tensor";
    case Attribute::Type::kSparseTensors:
      return "sparse_tensors";
    case Attribute::Type::kTypeProto:
      return "type_proto";
    case Attribute::Type::kTypeProtos:
      return "type_protos";
    default:
      return "undefined";
  }
}

}  // namespace onnx_light
