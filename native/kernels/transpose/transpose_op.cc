// ONNX Transpose for every element type. Axes that stay adjacent are merged and unit axes
// dropped; then either whole rows move (the innermost axis stays innermost) or 2-D tiles
// are transposed in cache-sized blocks (the innermost axis moves).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// Square tile edge of the blocked 2-D transpose: a tile of 8-byte elements spans 32 lines.
constexpr int64_t kTile = 32;

// The permutation after merging: output axis i reads input axis perm[i].
struct Layout {
  std::vector<int64_t> in_dims, perm;
};

Layout Simplify(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  // Drop unit axes.
  std::vector<int64_t> keep_dims, old_to_new(dims.size(), -1);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1) {
      old_to_new[i] = static_cast<int64_t>(keep_dims.size());
      keep_dims.push_back(dims[i]);
    }
  }
  std::vector<int64_t> p;
  for (int64_t axis : perm) {
    if (old_to_new[axis] >= 0) p.push_back(old_to_new[axis]);
  }
  // Merge runs of output axes that read consecutive input axes.
  Layout out;
  std::vector<std::vector<int64_t>> groups;  // input axes of each merged output axis
  for (size_t i = 0; i < p.size(); ++i) {
    if (!groups.empty() && groups.back().back() + 1 == p[i]) {
      groups.back().push_back(p[i]);
    } else {
      groups.push_back({p[i]});
    }
  }
  // Merged input axes are numbered by the order of their first input axis.
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  std::vector<int64_t> rank_of(groups.size());
  for (size_t r = 0; r < order.size(); ++r) rank_of[order[r]] = static_cast<int64_t>(r);
  out.in_dims.resize(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    int64_t size = 1;
    for (int64_t axis : groups[g]) size *= keep_dims[axis];
    out.in_dims[rank_of[g]] = size;
    out.perm.push_back(rank_of[g]);
  }
  return out;
}

template <typename T>
class Transposer {
 public:
  Transposer(const Layout& layout, const T* in, T* out) : in_(in), out_(out) {
    const size_t rank = layout.perm.size();
    std::vector<int64_t> in_strides(rank, 1);
    for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * layout.in_dims[i];
    for (size_t i = 0; i < rank; ++i) {
      out_dims_.push_back(layout.in_dims[layout.perm[i]]);
      src_strides_.push_back(in_strides[layout.perm[i]]);
    }
    out_strides_.assign(rank, 1);
    for (size_t i = rank; i-- > 1;) out_strides_[i - 1] = out_strides_[i] * out_dims_[i];
    inner_moves_ = rank >= 2 && layout.perm.back() != static_cast<int64_t>(rank) - 1;
    if (inner_moves_) {
      // Output axis that reads the input's contiguous axis: the tile's other side.
      pivot_ = std::find(layout.perm.begin(), layout.perm.end(), static_cast<int64_t>(rank) - 1) - layout.perm.begin();
    }
  }

  // Independent work items: output rows (inner axis kept) or tile columns (inner axis moves).
  int64_t items() const {
    if (out_dims_.empty()) return 1;
    int64_t n = 1;
    for (size_t i = 0; i + 1 < out_dims_.size(); ++i) {
      n *= (inner_moves_ && static_cast<int64_t>(i) == pivot_) ? (out_dims_[i] + kTile - 1) / kTile : out_dims_[i];
    }
    return n;
  }
  // Elements moved per item, for the parallel threshold.
  int64_t item_elements() const {
    if (out_dims_.empty()) return 1;
    return out_dims_.back() * (inner_moves_ ? kTile : 1);
  }

  void Run(int64_t begin, int64_t end) const {
    const int rank = static_cast<int>(out_dims_.size());
    if (rank == 0) {
      out_[0] = in_[0];
      return;
    }
    const int64_t inner = out_dims_.back();
    // Decompose `begin` over the item axes (all output axes but the last, the pivot in tiles).
    std::vector<int64_t> index(rank, 0);
    int64_t rem = begin;
    for (int i = rank - 2; i >= 0; --i) {
      const int64_t extent = ItemExtent(i);
      index[i] = rem % extent;
      rem /= extent;
    }
    for (int64_t item = begin; item < end; ++item) {
      int64_t src = 0, dst = 0;
      for (int i = 0; i + 1 < rank; ++i) {
        const int64_t pos = (inner_moves_ && i == pivot_) ? index[i] * kTile : index[i];
        src += pos * src_strides_[i];
        dst += pos * out_strides_[i];
      }
      if (!inner_moves_) {
        std::copy(in_ + src, in_ + src + inner, out_ + dst);
      } else {
        // Tile: rows along the pivot (contiguous in the input), columns along the last axis.
        const int64_t rows = std::min(kTile, out_dims_[pivot_] - index[pivot_] * kTile);
        const int64_t row_stride = out_strides_[pivot_], col_src = src_strides_[rank - 1];
        for (int64_t c0 = 0; c0 < inner; c0 += kTile) {
          const int64_t cols = std::min(kTile, inner - c0);
          for (int64_t c = 0; c < cols; ++c) {
            const T* s = in_ + src + (c0 + c) * col_src;
            T* d = out_ + dst + c0 + c;
            for (int64_t r = 0; r < rows; ++r) d[r * row_stride] = s[r];
          }
        }
      }
      for (int i = rank - 2; i >= 0; --i) {
        if (++index[i] < ItemExtent(i)) break;
        index[i] = 0;
      }
    }
  }

 private:
  int64_t ItemExtent(int axis) const {
    return (inner_moves_ && axis == pivot_) ? (out_dims_[axis] + kTile - 1) / kTile : out_dims_[axis];
  }

  const T* in_;
  T* out_;
  std::vector<int64_t> out_dims_, out_strides_, src_strides_;
  bool inner_moves_ = false;
  int64_t pivot_ = -1;
};

// Elements moved by their byte size only.
struct Bytes16 {
  uint64_t lo, hi;
};

class TransposeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(minimum_elements_, info.tuning().Int64(param::kMinimumElements));
    if (info.HasAttribute("perm")) {
      OL_ASSIGN_OR_RETURN(perm_, info.GetInts("perm"));
      has_perm_ = true;
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const int rank = x->shape().rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(rank);
      for (int i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
    }
    OL_RETURN_IF_ERROR(CheckPerm(ctx, *x, perm));
    std::vector<int64_t> out_dims(rank);
    for (int i = 0; i < rank; ++i) out_dims[i] = x->shape()[perm[i]];
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(out_dims)));
    if (y->num_elements() == 0) return Status::Ok();
    const Layout layout = Simplify(x->shape().dims(), perm);
    switch (x->dtype() == DataType::kString ? 0 : ElementSize(x->dtype())) {
      case 0:
        return Run<std::string>(ctx, layout, *x, y);
      case 1:
        return Run<uint8_t>(ctx, layout, *x, y);
      case 2:
        return Run<uint16_t>(ctx, layout, *x, y);
      case 4:
        return Run<uint32_t>(ctx, layout, *x, y);
      case 8:
        return Run<uint64_t>(ctx, layout, *x, y);
      case 16:
        return Run<Bytes16>(ctx, layout, *x, y);
      default:
        return NotImplemented(ctx.Where(), ": element type ", DataTypeName(x->dtype()), " is not supported");
    }
  }

 private:
  static Status CheckPerm(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& perm) {
    const int rank = x.shape().rank();
    std::vector<bool> seen(rank, false);
    bool ok = static_cast<int>(perm.size()) == rank;
    for (int64_t axis : perm) {
      ok = ok && axis >= 0 && axis < rank && !seen[axis];
      if (ok) seen[axis] = true;
    }
    if (ok) return Status::Ok();
    std::string text;
    for (int64_t axis : perm) text += (text.empty() ? "" : ",") + std::to_string(axis);
    return InvalidArgument(ctx.Where(), ": perm [", text, "] is not a permutation of the axes of ", x.TypeAndShape());
  }

  template <typename T>
  Status Run(KernelContext& ctx, const Layout& layout, const Tensor& x, Tensor* y) {
    const Transposer<T> t(layout, x.data<T>(), y->data<T>());
    ctx.RecordCopy();
    const int64_t items = t.items();
    if (x.num_elements() < minimum_elements_ || items == 1) {
      t.Run(0, items);
      return Status::Ok();
    }
    // Blocks of at least ~16K elements keep per-block overhead small.
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / t.item_elements());
    return ParallelFor(ctx.parallel(), items, ParallelPlan{"transpose.items", grain}, [&](int64_t begin, int64_t end) {
      t.Run(begin, end);
      return Status::Ok();
    });
  }

  int64_t minimum_elements_ = 0;
  std::vector<int64_t> perm_;
  bool has_perm_ = false;
};

OL_REGISTER_KERNELS(transpose_op) {
  using T = DataType;
  std::vector<T> types = {T::kBool,    T::kComplex128, T::kComplex64, T::kDouble, T::kFloat,
                          T::kFloat16, T::kInt16,      T::kInt32,     T::kInt64,  T::kInt8,
                          T::kString,  T::kUint16,     T::kUint32,    T::kUint64, T::kUint8};
  const auto tuning = std::vector<ParamSpec>{
      MinimumElementsParam(int64_t{1} << 16, "elements moved below which Transpose runs serially")};
  const auto add = [&](int since, int end) {
    Kernel("Transpose")
        .Versions(since, end)
        .Types(types)
        .Tuning(tuning)
        .Factory(MakeKernel<TransposeKernel>())
        .AddTo(registry);
  };
  add(1, 12);
  types.push_back(T::kBFloat16);
  add(13, 20);
  for (T t : {T::kFloat8E4M3FN, T::kFloat8E4M3FNUZ, T::kFloat8E5M2, T::kFloat8E5M2FNUZ, T::kInt4, T::kUint4}) {
    types.push_back(t);
  }
  add(21, 22);
  types.push_back(T::kFloat4E2M1);
  add(23, 23);
  types.push_back(T::kFloat8E8M0);
  add(24, 24);
  types.push_back(T::kInt2);
  types.push_back(T::kUint2);
  add(25, kOpenEnded);
}

}  // namespace
}  // namespace onnx_light
