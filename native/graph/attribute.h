// Node attributes as the ONNX AttributeProto defines them (numbering included).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/core/tensor.h"

namespace onnx_light {

class Graph;  // native/graph/graph.h

// A TypeProto reduced to what kernels need (Optional/SequenceEmpty/... type attributes).
struct TypeDescription {
  enum class Kind { kTensor, kSequence, kOptional, kMap, kUnknown };
  Kind kind = Kind::kUnknown;
  DataType element_type = DataType::kUndefined;  // innermost tensor element type
  std::shared_ptr<TypeDescription> inner;        // for sequence / optional
};

struct Attribute {
  enum class Type {
    kUndefined = 0,
    kFloat = 1,
    kInt = 2,
    kString = 3,
    kTensor = 4,
    kGraph = 5,
    kFloats = 6,
    kInts = 7,
    kStrings = 8,
    kTensors = 9,
    kGraphs = 10,
    kSparseTensor = 11,
    kSparseTensors = 12,
    kTypeProto = 13,
    kTypeProtos = 14,
  };
  std::string name;
  Type type = Type::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<const Graph> g;
  TypeDescription tp;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<const Graph>> graphs;
};

const char* AttributeTypeName(Attribute::Type type);

using AttributeMap = std::map<std::string, Attribute>;

}  // namespace onnx_light
