// Det (opsets 11, 22): determinant of each trailing [M, M] matrix by LU decomposition with
// partial pivoting in double. Matrices are split across participants (thresholded_parallel.h, a
// matrix costing M^3 / 3 multiply-adds); each uses its own slice of scratch reserved
// before the launch.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/lrn_det/float_types.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace lrn_det {
namespace {

// Determinant of the m x m row-major matrix `a` (overwritten by its LU factors).
double Determinant(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t col = 0; col < m; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < m; ++r) {
      if (std::fabs(a[r * m + col]) > std::fabs(a[pivot * m + col])) pivot = r;
    }
    if (a[pivot * m + col] == 0.0) return 0.0;
    if (pivot != col) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[pivot * m + k], a[col * m + k]);
      det = -det;
    }
    const double d = a[col * m + col];
    det *= d;
    for (int64_t r = col + 1; r < m; ++r) {
      const double f = a[r * m + col] / d;
      for (int64_t k = col + 1; k < m; ++k) a[r * m + k] -= f * a[col * m + k];
    }
  }
  return det;
}

class DetKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& s = x->shape();
    const int rank = s.rank();
    if (rank < 2 || s[rank - 1] != s[rank - 2]) {
      return InvalidArgument(where_, ": input must be [..., M, M], got ", x->TypeAndShape());
    }
    const int64_t m = s[rank - 1], count = s.SizeTo(rank - 2);
    std::vector<int64_t> batch(s.dims().begin(), s.dims().end() - 2);
    return DispatchType(FloatTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(batch)));
      if (count == 0) return Status::Ok();
      // One m x m working copy per matrix: each participant writes only its own matrices.
      ScratchArena arena(ctx.allocator(), sizeof(double) * static_cast<size_t>(count * m * m) + 64);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(double* work, arena.AllocateArray<double>(count * m * m));
      ctx.RecordScratch(static_cast<int64_t>(arena.used()));
      const T* in = x->data<T>();
      T* out = y->data<T>();
      return policy_.Run(ctx.parallel(), "Det", count, m * m * m / 3 + 1, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          double* a = work + b * m * m;
          for (int64_t k = 0; k < m * m; ++k) a[k] = Load(in[b * m * m + k]);
          out[b] = Store<T>(Determinant(a, m));
        }
      });
    });
  }

 private:
  std::string where_;
  ThresholdedParallel policy_;
};

OL_REGISTER_KERNELS(det) {
  Kernel("Det")
      .SinceVersions({11, 22})
      .TypesAt([](int opset) { return FloatTypesAt(opset, 22); })
      .Tuning(WorkUnitTuning(65536, "matrix"))
      .Calibratable()
      .Factory(MakeKernel<DetKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace lrn_det
}  // namespace onnx_light
