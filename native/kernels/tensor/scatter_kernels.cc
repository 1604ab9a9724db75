// ScatterElements, ScatterND and TensorScatter. The copy of `data` into the output is
// parallel over contiguous blocks. ScatterElements and ScatterND apply their updates
// serially, in index order: indices may repeat, and with a reduction (or plain overwrite)
// the result depends on the order of conflicting writes, which only a single ordered pass
// keeps deterministic and as ONNX specifies. TensorScatter's prefixes write disjoint rows,
// so its updates run in parallel over prefixes (in order within each).
#include <algorithm>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

StatusOr<Reduction> ParseReduction(const KernelInfo& info) {
  OL_ASSIGN_OR_RETURN(std::string r, info.GetString("reduction", "none"));
  if (r == "none") return Reduction::kNone;
  if (r == "add" && info.opset_version() >= 16) return Reduction::kAdd;
  if (r == "mul" && info.opset_version() >= 16) return Reduction::kMul;
  if (r == "max" && info.opset_version() >= 18) return Reduction::kMax;
  if (r == "min" && info.opset_version() >= 18) return Reduction::kMin;
  return InvalidArgument(info.Where(), ": unsupported reduction '", r, "' at opset ", info.opset_version());
}

template <typename T>
T Combine(T a, T b, Reduction r) {
  switch (r) {
    case Reduction::kAdd:
      return static_cast<T>(a + b);
    case Reduction::kMul:
      return static_cast<T>(a * b);
    case Reduction::kMax:
      return std::max(a, b);
    case Reduction::kMin:
      return std::min(a, b);
    default:
      return b;
  }
}
template <typename H>
H CombineNarrow(H a, H b, Reduction r) {  // float16/bfloat16: in float, rounded once
  return H::FromFloat(Combine(a.ToFloat(), b.ToFloat(), r));
}

// Applies update element `u` to output element `o` (both element offsets).
using ApplyFn = void (*)(void* out, int64_t o, const void* updates, int64_t u, Reduction r);

template <typename T>
void ApplyArithmetic(void* out, int64_t o, const void* updates, int64_t u, Reduction r) {
  T& dst = static_cast<T*>(out)[o];
  const T src = static_cast<const T*>(updates)[u];
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    dst = CombineNarrow(dst, src, r);
  } else {
    dst = Combine(dst, src, r);
  }
}

// The types a reduction (add, mul, max, min) has a meaning for.
using ReducibleTypes = NumbersBf;

int64_t IndexAt(const Tensor& indices, int64_t i) {
  return indices.dtype() == DataType::kInt32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
}

class ScatterBase : public OpKernel {
 protected:
  Status InitScatter(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(reduction_, ParseReduction(info));
    return parallel_.Init(info);
  }

  // Allocates the output as a copy of data (parallel) and checks types.
  StatusOr<Tensor*> CopyData(KernelContext& ctx, const Tensor& data, const Tensor& updates, ApplyFn* apply) const {
    if (updates.dtype() != data.dtype()) {
      return InvalidArgument(ctx.Where(), ": updates ", updates.TypeAndShape(), " must have data's type ",
                             DataTypeName(data.dtype()));
    }
    *apply = nullptr;  // no reduction: plain copies go through CopyElements
    if (reduction_ != Reduction::kNone) {
      const Status found = DispatchType(ReducibleTypes{}, data.dtype(), ctx.Where(), [&](auto tag) -> Status {
        *apply = ApplyArithmetic<typename decltype(tag)::type>;
        return Status::Ok();
      });
      if (!found.ok()) return InvalidArgument(ctx.Where(), ": reduction is not defined for ", data.TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, data.dtype(), data.shape()));
    const DataType type = data.dtype();
    const size_t size = ElementSize(type);
    OL_RETURN_IF_ERROR(parallel_.Run(
        ctx.parallel(), "scatter.copy", data.num_elements(), 1,
        [&](int64_t begin, int64_t end) {
          CopyElements(type, size, data.raw_data(), begin, y->raw_data(), begin, end - begin);
          return Status::Ok();
        },
        SerialPayload(type)));
    ctx.RecordCopy();
    return y;
  }

  void Apply(ApplyFn apply, DataType type, Tensor* y, int64_t o, const Tensor& updates, int64_t u, int64_t n) const {
    if (apply == nullptr) {
      CopyElements(type, ElementSize(type), updates.raw_data(), u, y->raw_data(), o, n);
      return;
    }
    for (int64_t i = 0; i < n; ++i) apply(y->raw_data(), o + i, updates.raw_data(), u + i, reduction_);
  }

  Reduction reduction_ = Reduction::kNone;
  ThresholdedParallel parallel_;
};

class ScatterElementsKernel : public ScatterBase {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 0));
    return InitScatter(info);
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* updates, ctx.RequiredInput(2));
    const Shape& ds = data->shape();
    const Shape& is = indices->shape();
    if (indices->dtype() != DataType::kInt32 && indices->dtype() != DataType::kInt64) {
      return InvalidArgument(ctx.Where(), ": indices must be int32 or int64, got ", indices->TypeAndShape());
    }
    if (ds.rank() == 0 || is.rank() != ds.rank() || updates->shape() != is) {
      return InvalidArgument(ctx.Where(), ": data ", data->TypeAndShape(), ", indices ", indices->TypeAndShape(),
                             " and updates ", updates->TypeAndShape(),
                             " must share a rank >= 1, indices and updates a shape");
    }
    auto axis_or = NormalizeAxis(axis_, ds.rank());
    if (!axis_or.ok())
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for ", data->TypeAndShape());
    const int axis = *axis_or;
    for (int d = 0; d < ds.rank(); ++d) {
      if (d != axis && is.dim(d) > ds.dim(d)) {
        return InvalidArgument(ctx.Where(), ": indices ", is.ToString(), " exceed data ", ds.ToString(), " on axis ",
                               d);
      }
    }
    const int64_t dim = ds.dim(axis);
    for (int64_t i = 0; i < indices->num_elements(); ++i) {
      const int64_t v = IndexAt(*indices, i);
      if (v < -dim || v >= dim) {
        return InvalidArgument(ctx.Where(), ": index ", v, " at position ", i, " is out of range for axis ", axis,
                               " of data ", data->TypeAndShape());
      }
    }
    ApplyFn apply = nullptr;
    OL_ASSIGN_OR_RETURN(Tensor * y, CopyData(ctx, *data, *updates, &apply));
    const std::vector<int64_t> strides = DenseStrides(ds);
    const int rank = ds.rank();
    std::vector<int64_t> coordinate(rank, 0);
    for (int64_t i = 0; i < indices->num_elements(); ++i) {  // ordered: see the file comment
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) {
        int64_t c = coordinate[d];
        if (d == axis) {
          c = IndexAt(*indices, i);
          if (c < 0) c += dim;
        }
        offset += c * strides[d];
      }
      Apply(apply, data->dtype(), y, offset, *updates, i, 1);
      for (int d = rank - 1; d >= 0 && ++coordinate[d] == is.dim(d); --d) coordinate[d] = 0;
    }
    return Status::Ok();
  }

 private:
  int64_t axis_ = 0;
};

class ScatterNdKernel : public ScatterBase {
 public:
  Status Init(const KernelInfo& info) { return InitScatter(info); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* updates, ctx.RequiredInput(2));
    const Shape& ds = data->shape();
    const Shape& is = indices->shape();
    if (indices->dtype() != DataType::kInt64 || is.rank() < 1) {
      return InvalidArgument(ctx.Where(), ": indices must be int64 of rank >= 1, got ", indices->TypeAndShape());
    }
    const int64_t k = is.dim(is.rank() - 1);
    if (k < 1 || k > ds.rank()) {
      return InvalidArgument(ctx.Where(), ": indices ", is.ToString(), " index more dims than data ", ds.ToString(),
                             " has");
    }
    std::vector<int64_t> expected(is.dims().begin(), is.dims().end() - 1);
    expected.insert(expected.end(), ds.dims().begin() + k, ds.dims().end());
    if (updates->shape() != Shape(expected)) {
      return InvalidArgument(ctx.Where(), ": updates ", updates->TypeAndShape(), " must have shape ",
                             Shape(expected).ToString());
    }
    const int64_t tuples = is.SizeTo(is.rank() - 1), slice = ds.SizeFrom(static_cast<int>(k));
    const int64_t* idx = indices->data<int64_t>();
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        const int64_t v = idx[t * k + j], dim = ds.dim(static_cast<int>(j));
        if (v < -dim || v >= dim) {
          return InvalidArgument(ctx.Where(), ": index ", v, " (tuple ", t, ", coordinate ", j,
                                 ") is out of range for data ", data->TypeAndShape());
        }
      }
    }
    ApplyFn apply = nullptr;
    OL_ASSIGN_OR_RETURN(Tensor * y, CopyData(ctx, *data, *updates, &apply));
    const std::vector<int64_t> strides = DenseStrides(ds);
    for (int64_t t = 0; t < tuples; ++t) {  // ordered: see the file comment
      int64_t offset = 0;
      for (int64_t j = 0; j < k; ++j) {
        int64_t c = idx[t * k + j];
        if (c < 0) c += ds.dim(static_cast<int>(j));
        offset += c * strides[j];
      }
      Apply(apply, data->dtype(), y, offset, *updates, t * slice, slice);
    }
    return Status::Ok();
  }
};

// TensorScatter (opset 24): a KV-cache update. present = past_cache, then for every prefix
// index (batch, D1, ...) before `axis`, update row i along `axis` is written to row
// write_indices[batch] + i (modulo max_sequence_length in "circular" mode).
class TensorScatterKernel : public ScatterBase {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode", "linear"));
    if (mode != "linear" && mode != "circular") {
      return InvalidArgument(info.Where(), ": mode must be 'linear' or 'circular', got '", mode, "'");
    }
    circular_ = mode == "circular";
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", -2));
    return InitScatter(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* past, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequiredInput(1));
    const Tensor* write_indices = ctx.input(2);
    const Shape& ps = past->shape();
    const int rank = ps.rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 1 || axis >= rank) {  // dimension 0 is the batch
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " must name a dimension after the batch of past_cache ",
                             past->TypeAndShape());
    }
    const int a = static_cast<int>(axis);
    bool shapes_match = update->shape().rank() == rank && update->shape().dim(a) <= ps.dim(a);
    for (int d = 0; shapes_match && d < rank; ++d) shapes_match = d == a || update->shape().dim(d) == ps.dim(d);
    if (!shapes_match) {
      return InvalidArgument(ctx.Where(), ": update ", update->TypeAndShape(), " must match past_cache ",
                             past->TypeAndShape(), " except for at most as many rows along axis ", axis);
    }
    const int64_t batch = ps.dim(0), max_rows = ps.dim(a), rows = update->shape().dim(a);
    std::vector<int64_t> starts(batch, 0);
    if (write_indices != nullptr) {
      if (write_indices->shape() != Shape({batch}) ||
          (write_indices->dtype() != DataType::kInt64 && write_indices->dtype() != DataType::kInt32)) {
        return InvalidArgument(ctx.Where(), ": write_indices must be int32 or int64 of shape [", batch, "], got ",
                               write_indices->TypeAndShape());
      }
      for (int64_t b = 0; b < batch; ++b) {
        starts[b] = write_indices->dtype() == DataType::kInt64 ? write_indices->data<int64_t>()[b]
                                                               : write_indices->data<int32_t>()[b];
        if (starts[b] < 0 || (!circular_ && starts[b] + rows > max_rows)) {
          return InvalidArgument(ctx.Where(), ": write index ", starts[b], " of batch ", b, " puts ", rows,
                                 " rows outside the ", max_rows, " rows of past_cache ", past->TypeAndShape());
        }
      }
    }
    ApplyFn apply = nullptr;
    OL_ASSIGN_OR_RETURN(Tensor * y, CopyData(ctx, *past, *update, &apply));
    const int64_t prefixes = ps.SizeTo(a), per_batch = batch == 0 ? 1 : prefixes / batch;
    const int64_t inner = ps.SizeFrom(a + 1);
    const DataType type = past->dtype();
    return parallel_.Run(
        ctx.parallel(), "tensor_scatter.rows", prefixes, rows * inner,
        [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const int64_t start = starts[p / per_batch];
            for (int64_t i = 0; i < rows; ++i) {
              const int64_t row = circular_ ? (start + i) % max_rows : start + i;
              Apply(apply, type, y, (p * max_rows + row) * inner, *update, (p * rows + i) * inner, inner);
            }
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }

 private:
  bool circular_ = false;
  int64_t axis_ = -2;
};

OL_REGISTER_KERNELS(tensor_scatter) {
  auto types = [](int v) { return TensorTypesAt(v < 13 ? 11 : 13); };  // unchanged 9..18
  Kernel("ScatterElements")
      .SinceVersions({11, 13, 16, 18})
      .TypesAt(types)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<ScatterElementsKernel>())
      .AddTo(registry);
  // The opset 9 name of ScatterElements (deprecated from opset 11).
  Kernel("Scatter")
      .SinceVersions({9, 11})
      .TypesAt(types)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<ScatterElementsKernel>())
      .AddTo(registry);
  Kernel("ScatterND")
      .SinceVersions({11, 13, 16, 18})
      .TypesAt(types)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<ScatterNdKernel>())
      .AddTo(registry);
  Kernel("TensorScatter")
      .Versions(24, kOpenEnded)
      .Types(TensorTypesAt(24))
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<TensorScatterKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
