// NonZero, Compress, Unique: where each element lands depends on how many selected elements
// precede it (a running count), or on a global sort. They stay serial, in their own family:
// a parallel version needs a two-pass prefix count (NonZero, Compress) or a parallel sort
// (Unique) and is only worth it for payload-scale inputs, which the models seen so far do
// not give these ops.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>

#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

// Calls f(Tag<T>) with the C++ type stored for `type` (sub-byte ints as their byte).
template <typename T>
struct Tag {
  using type = T;
};
template <typename F>
bool VisitStored(DataType type, F&& f) {
  switch (type) {
    case DataType::kFloat:
      f(Tag<float>{});
      return true;
    case DataType::kDouble:
      f(Tag<double>{});
      return true;
    case DataType::kFloat16:
      f(Tag<Float16>{});
      return true;
    case DataType::kBFloat16:
      f(Tag<BFloat16>{});
      return true;
    case DataType::kInt8:
      f(Tag<int8_t>{});
      return true;
    case DataType::kInt16:
      f(Tag<int16_t>{});
      return true;
    case DataType::kInt32:
      f(Tag<int32_t>{});
      return true;
    case DataType::kInt64:
      f(Tag<int64_t>{});
      return true;
    case DataType::kUint8:
      f(Tag<uint8_t>{});
      return true;
    case DataType::kUint16:
      f(Tag<uint16_t>{});
      return true;
    case DataType::kUint32:
      f(Tag<uint32_t>{});
      return true;
    case DataType::kUint64:
      f(Tag<uint64_t>{});
      return true;
    case DataType::kBool:
      f(Tag<bool>{});
      return true;
    case DataType::kString:
      f(Tag<std::string>{});
      return true;
    case DataType::kComplex64:
      f(Tag<std::complex<float>>{});
      return true;
    case DataType::kComplex128:
      f(Tag<std::complex<double>>{});
      return true;
    default:
      return false;
  }
}

// A value's sort key: narrow floats compare as float, complex as (real, imaginary).
template <typename T>
auto Key(const T& v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return v.ToFloat();
  else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return std::make_pair(v.real(), v.imag());
  } else {
    return v;
  }
}
// Strict weak order over keys: NaN sorts after every number and equals other NaNs.
template <typename K>
bool KeyLess(const K& a, const K& b) {
  if constexpr (std::is_floating_point_v<K>) {
    return !std::isnan(a) && (std::isnan(b) || a < b);
  } else {
    return a < b;
  }
}

template <typename T>
bool IsNonZero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    return !v.empty();
  else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return v != T(0);
  } else {
    return Key(v) != decltype(Key(v))(0);
  }
}

// ----------------------------------------------------------------------------- NonZero

class NonZeroKernel : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    std::vector<int64_t> hits;
    const bool known = VisitStored(x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* v = x->data<T>();
      for (int64_t i = 0; i < x->num_elements(); ++i) {
        if (IsNonZero(v[i])) hits.push_back(i);
      }
    });
    if (!known) return InvalidArgument(ctx.Where(), ": unsupported type ", x->TypeAndShape());
    const int rank = x->shape().rank();
    const int64_t count = static_cast<int64_t>(hits.size());
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt64, Shape({rank, count})));
    int64_t* out = y->data<int64_t>();
    for (int64_t j = 0; j < count; ++j) {
      int64_t rest = hits[j];
      for (int d = rank - 1; d >= 0; --d) {
        out[d * count + j] = rest % x->shape().dim(d);
        rest /= x->shape().dim(d);
      }
    }
    ctx.RecordScratch(count * static_cast<int64_t>(sizeof(int64_t)));
    return Status::Ok();
  }
};

// ---------------------------------------------------------------------------- Compress

class CompressKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    has_axis_ = info.HasAttribute("axis");
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 0));
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* condition, ctx.RequiredInput(1));
    if (condition->dtype() != DataType::kBool || condition->shape().rank() != 1) {
      return InvalidArgument(ctx.Where(), ": condition must be a 1-D bool tensor, got ", condition->TypeAndShape());
    }
    // Without an axis the input is read flat.
    Shape shape = has_axis_ ? x->shape() : Shape({x->num_elements()});
    auto axis_or = NormalizeAxis(has_axis_ ? axis_ : 0, shape.rank());
    if (!axis_or.ok())
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for ", x->TypeAndShape());
    const int axis = *axis_or;
    const int64_t dim = shape.dim(axis);
    if (condition->num_elements() > dim) {
      return InvalidArgument(ctx.Where(), ": condition ", condition->TypeAndShape(), " is longer than axis ", axis,
                             " of ", x->TypeAndShape());
    }
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < condition->num_elements(); ++i) {
      if (condition->data<bool>()[i]) kept.push_back(i);
    }
    std::vector<int64_t> out_dims = shape.dims();
    out_dims[axis] = static_cast<int64_t>(kept.size());
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(out_dims)));
    const int64_t outer = shape.SizeTo(axis), inner = shape.SizeFrom(axis + 1);
    const size_t size = ElementSize(x->dtype());
    int64_t at = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k : kept) {
        CopyElements(x->dtype(), size, x->raw_data(), (o * dim + k) * inner, y->raw_data(), at, inner);
        at += inner;
      }
    }
    return Status::Ok();
  }

 private:
  bool has_axis_ = false;
  int64_t axis_ = 0;
};

// ------------------------------------------------------------------------------ Unique

class UniqueKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    has_axis_ = info.HasAttribute("axis");
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 0));
    OL_ASSIGN_OR_RETURN(int64_t sorted, info.GetInt("sorted", 1));
    sorted_ = sorted != 0;
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    Shape shape = has_axis_ ? x->shape() : Shape({x->num_elements()});
    auto axis_or = NormalizeAxis(has_axis_ ? axis_ : 0, shape.rank());
    if (!axis_or.ok())
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for ", x->TypeAndShape());
    const int axis = *axis_or;
    const int64_t outer = shape.SizeTo(axis), n = shape.dim(axis), inner = shape.SizeFrom(axis + 1);
    // Item i is the slice at position i along the axis: elements (o, i, j) for all o, j.
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::vector<int64_t> group_of(n);  // group (unique item) of each item, in sorted order
    const bool known = VisitStored(x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* v = x->data<T>();
      auto compare = [&](int64_t a, int64_t b) {  // -1, 0, 1 over the slices' elements
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < inner; ++j) {
            const auto ka = Key(v[(o * n + a) * inner + j]), kb = Key(v[(o * n + b) * inner + j]);
            if (KeyLess(ka, kb)) return -1;
            if (KeyLess(kb, ka)) return 1;
          }
        }
        return 0;
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
      int64_t group = -1;
      for (int64_t p = 0; p < n; ++p) {
        if (p == 0 || compare(order[p - 1], order[p]) != 0) ++group;
        group_of[order[p]] = group;
      }
    });
    if (!known) return InvalidArgument(ctx.Where(), ": unsupported type ", x->TypeAndShape());
    const int64_t groups = n == 0 ? 0 : *std::max_element(group_of.begin(), group_of.end()) + 1;
    // First occurrence and size of each group; then the output order of groups.
    std::vector<int64_t> first(groups, -1), counts(groups, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (first[group_of[i]] < 0) first[group_of[i]] = i;
      ++counts[group_of[i]];
    }
    std::vector<int64_t> rank_of(groups);  // output position of each group
    std::iota(rank_of.begin(), rank_of.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(groups);
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
      for (int64_t p = 0; p < groups; ++p) rank_of[by_first[p]] = p;
    }
    std::vector<int64_t> out_dims = shape.dims();
    out_dims[axis] = groups;
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(out_dims)));
    const size_t size = ElementSize(x->dtype());
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(x->dtype(), size, x->raw_data(), (o * n + first[g]) * inner, y->raw_data(),
                     (o * groups + rank_of[g]) * inner, inner);
      }
    }
    if (ctx.num_outputs() > 1) {
      OL_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(1, DataType::kInt64, Shape({groups})));
      for (int64_t g = 0; g < groups; ++g) indices->data<int64_t>()[rank_of[g]] = first[g];
    }
    if (ctx.num_outputs() > 2) {
      OL_ASSIGN_OR_RETURN(Tensor * inverse, ctx.AllocateOutput(2, DataType::kInt64, Shape({n})));
      for (int64_t i = 0; i < n; ++i) inverse->data<int64_t>()[i] = rank_of[group_of[i]];
    }
    if (ctx.num_outputs() > 3) {
      OL_ASSIGN_OR_RETURN(Tensor * count_out, ctx.AllocateOutput(3, DataType::kInt64, Shape({groups})));
      for (int64_t g = 0; g < groups; ++g) count_out->data<int64_t>()[rank_of[g]] = counts[g];
    }
    ctx.RecordScratch((4 * n + 4 * groups) * static_cast<int64_t>(sizeof(int64_t)));
    return Status::Ok();
  }

 private:
  bool has_axis_ = false;
  int64_t axis_ = 0;
  bool sorted_ = true;
};

OL_REGISTER_KERNELS(tensor_ordered_selection) {
  KernelDef def;
  def.family = OL_KERNEL_FAMILY;
  auto types = [](int v) { return TensorTypesAt(v < 13 ? 11 : 13); };
  def.op = "NonZero";
  def.factory = MakeKernel<NonZeroKernel>();
  AddForOpsets(registry, def, {9, 13}, types);
  def.op = "Compress";
  def.factory = MakeKernel<CompressKernel>();
  AddForOpsets(registry, def, {9, 11, 28}, types);
  def.op = "Unique";
  def.factory = MakeKernel<UniqueKernel>();
  AddForOpsets(registry, def, {11, 28}, types);
}

}  // namespace
}  // namespace onnx_light
