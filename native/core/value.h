// Value: what flows along a graph edge. ONNX edges carry tensors, sequences, optionals
// and (ai.onnx.ml) maps; most kernels only ever see tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "native/core/tensor.h"

namespace onnx_light {

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence, kMap };

  Value() = default;                                                          // kNone (an empty optional)
  Value(Tensor tensor) : kind_(Kind::kTensor), tensor_(std::move(tensor)) {}  // NOLINT
  static Value Sequence(std::vector<Value> items, DataType element_type = DataType::kUndefined);
  // keys: 1-D tensor of int64 or string; values: 1-D tensor of the same length.
  static Value Map(Tensor keys, Tensor values);
  static Value None(DataType element_type = DataType::kUndefined) {
    Value v;
    v.element_type_ = element_type;
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_map() const { return kind_ == Kind::kMap; }

  const Tensor& tensor() const { return tensor_; }
  Tensor& mutable_tensor() { return tensor_; }
  const std::vector<Value>& items() const { return *items_; }
  const Tensor& map_keys() const { return tensor_; }
  const Tensor& map_values() const { return map_values_; }
  // Element type of a sequence or empty optional, where known.
  DataType element_type() const { return kind_ == Kind::kTensor ? tensor_.dtype() : element_type_; }

  // Marks this value as produced through an optional type (ONNX Optional(...)).
  bool optional() const { return optional_; }
  Value& set_optional(bool optional) {
    optional_ = optional;
    return *this;
  }

  std::string Describe() const;  // "float[2,3]", "sequence<float>[4]", "none", "map"

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;  // the tensor, or a map's keys
  Tensor map_values_;
  std::shared_ptr<const std::vector<Value>> items_;
  DataType element_type_ = DataType::kUndefined;
  bool optional_ = false;
};

}  // namespace onnx_light
