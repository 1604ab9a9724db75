// Gather, GatherElements, GatherND: parallel over independent destination blocks. Errors
// are deterministic: every index is validated before any worker starts, or (GatherElements'
// typed rows) in the same pass as the gather, an out-of-range index read nowhere and
// flagged, and then the serial check names the first one.
#include <atomic>
#include <cstdint>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

// Reads index i of an int32/int64 tensor.
inline int64_t IndexAt(const Tensor& indices, int64_t i) {
  return indices.dtype() == DataType::kInt32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
}

Status CheckIndexType(const KernelContext& ctx, const Tensor& indices) {
  if (indices.dtype() != DataType::kInt32 && indices.dtype() != DataType::kInt64) {
    return InvalidArgument(ctx.Where(), ": indices must be int32 or int64, got ", indices.TypeAndShape());
  }
  return Status::Ok();
}

// Every index within [-dim, dim) (negative counts from the end), else InvalidArgument
// naming the index, its position and the shape indexed.
template <typename I>
Status CheckIndicesOf(const KernelContext& ctx, const I* idx, int64_t n, int64_t dim, const Tensor& data, int axis) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = idx[i];
    if (v < -dim || v >= dim) {
      return InvalidArgument(ctx.Where(), ": index ", v, " at position ", i, " is out of range for axis ", axis,
                             " of data ", data.TypeAndShape());
    }
  }
  return Status::Ok();
}

Status CheckIndices(const KernelContext& ctx, const Tensor& indices, int64_t dim, const Tensor& data, int axis) {
  return indices.dtype() == DataType::kInt32
             ? CheckIndicesOf(ctx, indices.data<int32_t>(), indices.num_elements(), dim, data, axis)
             : CheckIndicesOf(ctx, indices.data<int64_t>(), indices.num_elements(), dim, data, axis);
}

inline int64_t Wrap(int64_t v, int64_t dim) { return v < 0 ? v + dim : v; }

class GatherBase : public OpKernel {
 protected:
  Status InitGather(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 0));
    return parallel_.Init(info);
  }
  int64_t axis_ = 0;
  ThresholdedParallel parallel_;
};

// ------------------------------------------------------------------------------ Gather

class GatherKernel : public GatherBase {
 public:
  Status Init(const KernelInfo& info) { return InitGather(info); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(1));
    OL_RETURN_IF_ERROR(CheckIndexType(ctx, *indices));
    const Shape& ds = data->shape();
    if (ds.rank() == 0) return InvalidArgument(ctx.Where(), ": data must have rank >= 1, got ", data->TypeAndShape());
    auto axis_or = NormalizeAxis(axis_, ds.rank());
    if (!axis_or.ok())
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for ", data->TypeAndShape());
    const int axis = *axis_or;
    const int64_t dim = ds.dim(axis);
    OL_RETURN_IF_ERROR(CheckIndices(ctx, *indices, dim, *data, axis));

    std::vector<int64_t> out_dims(ds.dims().begin(), ds.dims().begin() + axis);
    out_dims.insert(out_dims.end(), indices->shape().dims().begin(), indices->shape().dims().end());
    out_dims.insert(out_dims.end(), ds.dims().begin() + axis + 1, ds.dims().end());
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, data->dtype(), Shape(std::move(out_dims))));

    const int64_t outer = ds.SizeTo(axis), inner = ds.SizeFrom(axis + 1), n = indices->num_elements();
    const DataType type = data->dtype();
    const size_t size = ElementSize(type);
    // Unit u = (outer row u / n, index u % n): one contiguous slice of `inner` elements.
    return parallel_.Run(
        ctx.parallel(), "gather.slices", outer * n, inner,
        [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) {
            const int64_t o = u / n, j = u % n;
            const int64_t src = (o * dim + Wrap(IndexAt(*indices, j), dim)) * inner;
            CopyElements(type, size, data->raw_data(), src, y->raw_data(), u * inner, inner);
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }
};

// ---------------------------------------------------------------------- GatherElements

// Where output row r (the last axis of indices) reads data: the data offset of its first
// element, from its multi-index over the leading dims (the gather axis contributes 0).
struct ElementsGeometry {
  int rank, axis;
  int64_t axis_dim;
  std::vector<int64_t> data_strides, index_dims;

  int64_t RowBase(int64_t r) const {
    int64_t rest = r, base = 0;
    for (int d = rank - 2; d >= 0; --d) {
      const int64_t coordinate = rest % index_dims[d];
      rest /= index_dims[d];
      if (d != axis) base += coordinate * data_strides[d];
    }
    return base;
  }
};

// Output rows [begin, end) of `cols` elements each. Along the last axis a row reads inside
// one contiguous data row; along an outer axis element c of a row reads column c of the
// indexed data row (stride data_strides[axis]). Indices are validated here, in the same
// pass: one outside [-dim, dim) reads nothing (its output is left 0) and makes the call
// return false.
template <typename W, typename I>
bool GatherElementsRows(const ElementsGeometry& g, const W* x, const I* idx, W* y, int64_t cols, int64_t begin,
                        int64_t end) {
  const int64_t dim = g.axis_dim;
  const bool last = g.axis == g.rank - 1;
  const int64_t stride = last ? 1 : g.data_strides[g.axis];
  bool ok = true;
  for (int64_t r = begin; r < end; ++r) {
    const I* ir = idx + r * cols;
    W* yr = y + r * cols;
    const W* xr = x + g.RowBase(r);
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t k = ir[c];
      const int64_t wrapped = k < 0 ? k + dim : k;
      if (static_cast<uint64_t>(wrapped) >= static_cast<uint64_t>(dim)) {
        ok = false;
        yr[c] = W{0};
        continue;
      }
      yr[c] = xr[(last ? 0 : c) + wrapped * stride];
    }
  }
  return ok;
}

class GatherElementsKernel : public GatherBase {
 public:
  Status Init(const KernelInfo& info) { return InitGather(info); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(1));
    OL_RETURN_IF_ERROR(CheckIndexType(ctx, *indices));
    const Shape& ds = data->shape();
    const Shape& is = indices->shape();
    if (ds.rank() == 0 || is.rank() != ds.rank()) {
      return InvalidArgument(ctx.Where(), ": data ", data->TypeAndShape(), " and indices ", indices->TypeAndShape(),
                             " must have the same rank >= 1");
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
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, data->dtype(), is));

    const int rank = ds.rank();
    const int64_t cols = is.dim(rank - 1);
    const int64_t rows = cols == 0 ? 0 : is.num_elements() / cols;
    const DataType type = data->dtype();
    const size_t size = ElementSize(type);
    ElementsGeometry g{rank, axis, ds.dim(axis), {}, {}};
    g.data_strides.assign(rank, 1);
    for (int d = rank - 2; d >= 0; --d) g.data_strides[d] = g.data_strides[d + 1] * ds.dim(d + 1);
    g.index_dims.assign(is.dims().begin(), is.dims().end());
    // Fixed-width payloads move as unsigned words of their size, indices read in their own
    // type: one typed loop per row. Strings (and wider elements) take the generic copy.
    // Indices are checked in the gather's own pass (a flag per block); on a bad one the
    // serial check names the first.
    if (type != DataType::kString && (size == 1 || size == 2 || size == 4 || size == 8)) {
      std::atomic<bool> bad{false};
      auto run = [&](auto word, auto index) -> Status {
        using W = decltype(word);
        using I = decltype(index);
        OL_RETURN_IF_ERROR(
            parallel_.Run(ctx.parallel(), "gather_elements.rows", rows, cols, [&](int64_t begin, int64_t end) {
              if (!GatherElementsRows<W, I>(g, static_cast<const W*>(data->raw_data()), indices->data<I>(),
                                            static_cast<W*>(y->raw_data()), cols, begin, end)) {
                bad.store(true, std::memory_order_relaxed);
              }
            }));
        if (bad.load(std::memory_order_relaxed)) return CheckIndices(ctx, *indices, ds.dim(axis), *data, axis);
        return Status::Ok();
      };
      const bool i32 = indices->dtype() == DataType::kInt32;
      switch (size) {
        case 1:
          return i32 ? run(uint8_t{}, int32_t{}) : run(uint8_t{}, int64_t{});
        case 2:
          return i32 ? run(uint16_t{}, int32_t{}) : run(uint16_t{}, int64_t{});
        case 4:
          return i32 ? run(uint32_t{}, int32_t{}) : run(uint32_t{}, int64_t{});
        default:
          return i32 ? run(uint64_t{}, int32_t{}) : run(uint64_t{}, int64_t{});
      }
    }
    OL_RETURN_IF_ERROR(CheckIndices(ctx, *indices, ds.dim(axis), *data, axis));
    // Unit = one row of the last dimension of the output.
    return parallel_.Run(
        ctx.parallel(), "gather_elements.rows", rows, cols,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t base = g.RowBase(r);
            for (int64_t c = 0; c < cols; ++c) {
              const int64_t out = r * cols + c;
              const int64_t k = Wrap(IndexAt(*indices, out), g.axis_dim);
              const int64_t src = g.axis == rank - 1 ? base + k : base + c + k * g.data_strides[g.axis];
              CopyElements(type, size, data->raw_data(), src, y->raw_data(), out, 1);
            }
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }
};

// ---------------------------------------------------------------------------- GatherND

class GatherNdKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(batch_dims_, info.GetInt("batch_dims", 0));
    return parallel_.Init(info);
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(1));
    if (indices->dtype() != DataType::kInt64) {
      return InvalidArgument(ctx.Where(), ": indices must be int64, got ", indices->TypeAndShape());
    }
    const Shape& ds = data->shape();
    const Shape& is = indices->shape();
    const int64_t b = batch_dims_;
    if (ds.rank() < 1 || is.rank() < 1 || b < 0 || b >= std::min(ds.rank(), is.rank())) {
      return InvalidArgument(ctx.Where(), ": batch_dims ", b, " does not fit data ", ds.ToString(), " and indices ",
                             is.ToString());
    }
    for (int d = 0; d < b; ++d) {
      if (ds.dim(d) != is.dim(d)) {
        return InvalidArgument(ctx.Where(), ": batch dim ", d, " differs: data ", ds.ToString(), ", indices ",
                               is.ToString());
      }
    }
    const int64_t k = is.dim(is.rank() - 1);
    if (k < 1 || b + k > ds.rank()) {
      return InvalidArgument(ctx.Where(), ": indices ", is.ToString(), " index more dims than data ", ds.ToString(),
                             " has after ", b, " batch dims");
    }
    std::vector<int64_t> out_dims(is.dims().begin(), is.dims().end() - 1);
    out_dims.insert(out_dims.end(), ds.dims().begin() + b + k, ds.dims().end());
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, data->dtype(), Shape(std::move(out_dims))));

    const int64_t slice = ds.SizeFrom(static_cast<int>(b + k));
    const int64_t tuples = is.SizeTo(is.rank() - 1);
    const int64_t batches = is.SizeTo(static_cast<int>(b));
    const int64_t tuples_per_batch = batches == 0 ? 0 : tuples / batches;
    const int64_t batch_stride = ds.SizeFrom(static_cast<int>(b));
    const int64_t* idx = indices->data<int64_t>();
    // Validate every coordinate up front.
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        const int64_t v = idx[t * k + j], dim = ds.dim(static_cast<int>(b + j));
        if (v < -dim || v >= dim) {
          return InvalidArgument(ctx.Where(), ": index ", v, " (tuple ", t, ", coordinate ", j,
                                 ") is out of range for data ", data->TypeAndShape());
        }
      }
    }
    std::vector<int64_t> strides(k);  // data stride of each indexed dim
    for (int64_t j = 0; j < k; ++j) strides[j] = ds.SizeFrom(static_cast<int>(b + j + 1));
    const DataType type = data->dtype();
    const size_t size = ElementSize(type);
    return parallel_.Run(
        ctx.parallel(), "gather_nd.slices", tuples, slice,
        [&](int64_t begin, int64_t end) {
          for (int64_t t = begin; t < end; ++t) {
            int64_t src = (t / tuples_per_batch) * batch_stride;
            for (int64_t j = 0; j < k; ++j) src += Wrap(idx[t * k + j], ds.dim(static_cast<int>(b + j))) * strides[j];
            CopyElements(type, size, data->raw_data(), src, y->raw_data(), t * slice, slice);
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }

 private:
  int64_t batch_dims_ = 0;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(tensor_gather) {
  auto all = [](int v) { return TensorTypesAt(v); };
  Kernel("Gather")
      .SinceVersions({1, 11, 13})
      .TypesAt(all)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<GatherKernel>())
      .AddTo(registry);
  Kernel("GatherElements")
      .SinceVersions({11, 13})
      .TypesAt(all)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<GatherElementsKernel>())
      .AddTo(registry);
  Kernel("GatherND")
      .SinceVersions({11, 12, 13})
      .TypesAt(all)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<GatherNdKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
