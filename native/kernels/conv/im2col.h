// im2col written straight into the GEMM engine's packed B panels: row k of B is (input
// channel, kernel offset), column j an output position; padding reads as zero.
#pragma once

#include "native/kernels/conv/geometry3d.h"
#include "native/kernels/gemm/gemm.h"

namespace onnx_light {
namespace conv {

class Im2colSource final : public gemm::PackedBSource {
 public:
  // `x` points at the group's first input channel of one image; columns are output
  // positions [first_column, first_column + n) of the GEMM this source feeds.
  Im2colSource(const Geometry3d& g, const float* x, int64_t first_column) : g_(g), x_(x), first_column_(first_column) {}
  void Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const override;

 private:
  const Geometry3d& g_;
  const float* x_;
  int64_t first_column_;
};

}  // namespace conv
}  // namespace onnx_light
