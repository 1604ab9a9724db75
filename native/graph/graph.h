// Graph: a model's computation as the session receives it (built once by Python or C++,
// then immutable and shared). Mirrors ONNX's GraphProto without protobuf: nodes refer to
// values by name, an empty name is an absent optional input or output.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/core/value.h"
#include "native/graph/attribute.h"

namespace onnx_light {

// Declared type of a graph input/output or intermediate value.
struct ValueInfo {
  std::string name;
  TypeDescription type;
  // Tensor shape when declared: one entry per axis, -1 for a symbolic or unknown dim.
  bool has_shape = false;
  std::vector<int64_t> dims;

  // "tensor(float)[2,?]", "sequence(tensor(int64))", "?"
  std::string Describe() const;
};

struct Node {
  std::string op;
  std::string domain;  // "" = ai.onnx
  std::string name;
  std::vector<std::string> inputs;   // "" = absent optional input
  std::vector<std::string> outputs;  // "" = unused optional output
  AttributeMap attributes;

  // "Add node 'n3'" (or "Add node #7" when unnamed): prefix for messages.
  std::string Where(size_t index) const;
};

class Graph {
 public:
  std::string name;
  std::vector<Node> nodes;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> initializers;
  // Types known for intermediate values (from onnx.shape_inference).
  std::map<std::string, ValueInfo> value_types;
  // Domain ("" = ai.onnx) -> opset version. Subgraphs carry their model's imports.
  std::map<std::string, int> opset_imports;

  // Normalises "ai.onnx" to "".
  static std::string CanonicalDomain(const std::string& domain);
  // The opset the graph imports for `domain`, or InvalidArgument when it imports none.
  StatusOr<int> OpsetFor(const std::string& domain) const;
  // Declared or inferred type of a value, null when unknown.
  const ValueInfo* FindValueInfo(const std::string& name) const;
  // The declared element type of `name` when it is a tensor of known type.
  DataType ElementTypeOf(const std::string& name) const;
};

// "tensor(float)", "sequence(tensor(int64))", "optional(tensor(float))", "?"
std::string DescribeType(const TypeDescription& type);

}  // namespace onnx_light
