// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim features of every
// (batch, position, head) row by the angle its position selects in cos_cache/sin_cache,
// as two halves or interleaved pairs; the remaining features are copied. Rows are
// independent: parallel over (batch, position, head) rows.
#include <algorithm>
#include <limits>

#include "native/executor/parallel_for.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace attention {
namespace {

// One rotation problem, validated.
struct Rotation {
  int64_t batch = 0, seq = 0, heads = 0, head_size = 0, rotary_dim = 0;
  bool layout_3d = false;  // (B, S, H*D) rather than (B, H, S, D)
  bool interleaved = false;
  const int64_t* position_ids = nullptr;  // (B, S), or null: caches are (B, S, rotary_dim / 2)
  int64_t Offset(int64_t b, int64_t s, int64_t h) const {
    return layout_3d ? ((b * seq + s) * heads + h) * head_size : ((b * heads + h) * seq + s) * head_size;
  }
  int64_t CacheRow(int64_t b, int64_t s) const {
    return position_ids != nullptr ? position_ids[b * seq + s] : b * seq + s;
  }
};

// Rows [begin, end) of (b, s, h) order, element type T computed in float.
template <typename T>
void RotateRows(const Rotation& r, const T* x, const T* cos_cache, const T* sin_cache, T* y, int64_t begin,
                int64_t end) {
  const int64_t half = r.rotary_dim / 2;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t h = row % r.heads, s = row / r.heads % r.seq, b = row / r.heads / r.seq;
    const int64_t offset = r.Offset(b, s, h);
    const T* in = x + offset;
    T* out = y + offset;
    const T* cos_row = cos_cache + r.CacheRow(b, s) * half;
    const T* sin_row = sin_cache + r.CacheRow(b, s) * half;
    for (int64_t i = 0; i < half; ++i) {
      // Pair i: (i, i + half) for halves, (2i, 2i + 1) interleaved.
      const int64_t first = r.interleaved ? 2 * i : i;
      const int64_t second = r.interleaved ? 2 * i + 1 : i + half;
      const float x1 = ToCompute<float>(in[first]), x2 = ToCompute<float>(in[second]);
      const float c = ToCompute<float>(cos_row[i]), sn = ToCompute<float>(sin_row[i]);
      out[first] = FromFloat<T>(c * x1 - sn * x2);
      out[second] = FromFloat<T>(sn * x1 + c * x2);
    }
    std::copy(in + r.rotary_dim, in + r.head_size, out + r.rotary_dim);
  }
}

class RotaryEmbeddingKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(num_heads_, info.GetInt("num_heads", 0));
    OL_ASSIGN_OR_RETURN(rotary_dim_, info.GetInt("rotary_embedding_dim", 0));
    OL_ASSIGN_OR_RETURN(int64_t interleaved, info.GetInt("interleaved", 0));
    interleaved_ = interleaved != 0;
    if (num_heads_ < 0 || rotary_dim_ < 0) {
      return InvalidArgument(info.Where(), ": num_heads and rotary_embedding_dim must be >= 0");
    }
    OL_ASSIGN_OR_RETURN(minimum_elements_, info.tuning().Int64(param::kMinimumElements));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* cos_cache, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* sin_cache, ctx.RequiredInput(2));
    const Tensor* position_ids = ctx.input(3);
    Rotation r;
    OL_RETURN_IF_ERROR(Describe(ctx, *x, *cos_cache, *sin_cache, position_ids, &r));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    const int64_t rows = r.batch * r.seq * r.heads;
    auto rotate = [&](int64_t begin, int64_t end) {
      switch (x->dtype()) {
        case DataType::kFloat16:
          RotateRows(r, x->data<Float16>(), cos_cache->data<Float16>(), sin_cache->data<Float16>(), y->data<Float16>(),
                     begin, end);
          break;
        case DataType::kBFloat16:
          RotateRows(r, x->data<BFloat16>(), cos_cache->data<BFloat16>(), sin_cache->data<BFloat16>(),
                     y->data<BFloat16>(), begin, end);
          break;
        default:
          RotateRows(r, x->data<float>(), cos_cache->data<float>(), sin_cache->data<float>(), y->data<float>(), begin,
                     end);
      }
      return Status::Ok();
    };
    if (x->num_elements() < minimum_elements_) return rotate(0, rows);
    // Blocks of whole rows worth at least a few thousand elements each.
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(r.head_size, 1));
    return ParallelFor(ctx.parallel(), rows, ParallelPlan{"rotary_embedding.rows", grain}, rotate);
  }

 private:
  Status Describe(KernelContext& ctx, const Tensor& x, const Tensor& cos_cache, const Tensor& sin_cache,
                  const Tensor* position_ids, Rotation* r) const {
    const DataType t = x.dtype();
    if ((t != DataType::kFloat && t != DataType::kFloat16 && t != DataType::kBFloat16) || cos_cache.dtype() != t ||
        sin_cache.dtype() != t) {
      return InvalidArgument(ctx.Where(), ": X, cos_cache and sin_cache must share float, float16 or bfloat16, got ",
                             x.TypeAndShape(), ", ", cos_cache.TypeAndShape(), ", ", sin_cache.TypeAndShape());
    }
    const Shape& xs = x.shape();
    if (xs.rank() == 4) {
      *r = Rotation{xs[0], xs[2], xs[1], xs[3]};
    } else if (xs.rank() == 3 && num_heads_ > 0 && xs[2] % num_heads_ == 0) {
      *r = Rotation{xs[0], xs[1], num_heads_, xs[2] / num_heads_};
      r->layout_3d = true;
    } else {
      return InvalidArgument(ctx.Where(), ": X must be 4-D, or 3-D with num_heads dividing its last axis; got ", xs,
                             " with num_heads ", num_heads_);
    }
    r->interleaved = interleaved_;
    r->rotary_dim = rotary_dim_ == 0 ? r->head_size : rotary_dim_;
    if (r->rotary_dim % 2 != 0 || r->rotary_dim > r->head_size) {
      return InvalidArgument(ctx.Where(), ": rotary_embedding_dim ", r->rotary_dim, " must be even and <= head size ",
                             r->head_size);
    }
    const int64_t half = r->rotary_dim / 2;
    const Shape& cs = cos_cache.shape();
    if (cs != sin_cache.shape() || cs.rank() < 2 || cs[cs.rank() - 1] != half) {
      return InvalidArgument(ctx.Where(), ": cos_cache ", cs, " and sin_cache ", sin_cache.shape(),
                             " must match and end in rotary_embedding_dim / 2 = ", half);
    }
    if (position_ids != nullptr) {
      const Shape& ps = position_ids->shape();
      if (position_ids->dtype() != DataType::kInt64 || ps != Shape{r->batch, r->seq} || cs.rank() != 2) {
        return InvalidArgument(ctx.Where(), ": position_ids must be int64 (", r->batch, ", ", r->seq,
                               ") with 2-D caches, got ", position_ids->TypeAndShape(), " and cache ", cs);
      }
      r->position_ids = position_ids->data<int64_t>();
      for (int64_t i = 0; i < position_ids->num_elements(); ++i) {
        if (r->position_ids[i] < 0 || r->position_ids[i] >= cs[0]) {
          return InvalidArgument(ctx.Where(), ": position id ", r->position_ids[i], " outside the cache's ", cs[0],
                                 " positions");
        }
      }
    } else if (cs != Shape{r->batch, r->seq, half}) {
      return InvalidArgument(ctx.Where(), ": without position_ids the caches must be (", r->batch, ", ", r->seq, ", ",
                             half, "), got ", cs);
    }
    return Status::Ok();
  }

  int64_t num_heads_ = 0, rotary_dim_ = 0;
  bool interleaved_ = false;
  int64_t minimum_elements_ = 0;
};

}  // namespace

OL_REGISTER_KERNELS(rotary_embedding) {
  Kernel("RotaryEmbedding")
      .Opsets({Since(23, TypeList<float, Float16, BFloat16>{})})
      // A row pass of a few flops per element: ~32k elements (PyTorch's
      // GRAIN_SIZE) amortise a region start.
      .Tuning({MinimumElementsParam(32768, "elements of X below which rows rotate serially")})
      .Factory(MakeKernel<RotaryEmbeddingKernel>())
      .AddTo(registry);
}

}  // namespace attention
}  // namespace onnx_light
