#include "native/core/value.h"

namespace onnx_light {

Value Value::Sequence(std::vector<Value> items, DataType element_type) {
  Value v;
  v.kind_ = Kind::kSequence;
  if (element_type == DataType::kUndefined && !items.empty()) element_type = items.front().element_type();
  v.element_type_ = element_type;
  v.items_ = std::make_shared<const std::vector<Value>>(std::move(items));
  return v;
}

Value Value::Map(Tensor keys, Tensor values) {
  Value v;
  v.kind_ = Kind::kMap;
  v.tensor_ = std::move(keys);
  v.map_values_ = std::move(values);
  return v;
}

std::string Value::Describe() const {
  switch (kind_) {
    case Kind::kNone:
      return "none";
    case Kind::kTensor:
      return tensor_.TypeAndShape();
    case Kind::kSequence:
      return StrCat("sequence<", DataTypeName(element_type_), ">[", items_->size(), "]");
    case Kind::kMap:
      return StrCat("map<", DataTypeName(tensor_.dtype()), ",", DataTypeName(map_values_.dtype()), ">");
  }
  return "?";
}

}  // namespace onnx_light
