// Direct (loop) convolutions in any arithmetic type: the simple correct path for double,
// parallel over output planes (each plane's sums in one fixed order).
#pragma once

#include <algorithm>

#include "native/kernels/conv/geometry3d.h"
#include "native/kernels/gemm/gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace conv {

// Conv (kTranspose = false) or ConvTranspose (true) of one output plane (image n, output
// channel m), bias included. For ConvTranspose, Geometry3d's `in`/`out` are X's/Y's shapes
// and w is (C, M / group, kernel...).
template <typename T, bool kTranspose>
void DirectPlane(const ConvGeometry& cg, const Geometry3d& g, const T* x, const T* w, const T* bias, int64_t n,
                 int64_t m, T* y) {
  const int64_t mg = cg.out_per_group(), ci = cg.in_per_group(), grp = m / mg;
  std::fill(y, y + g.out_size, bias != nullptr ? bias[m] : T{});
  for (int64_t c = 0; c < ci; ++c) {
    const int64_t in_channel = grp * ci + c;
    const T* xc = x + (n * cg.in_channels + in_channel) * g.in_size;
    const T* wk = kTranspose ? w + (in_channel * mg + m % mg) * g.kernel_size : w + (m * ci + c) * g.kernel_size;
    // Conv: y[o] += w[k] x[o * s - p + k * d]; ConvTranspose: y[i * s - p + k * d] += w[k] x[i].
    const int64_t* positions = kTranspose ? g.in : g.out;
    for (int64_t a = 0; a < positions[0]; ++a) {
      for (int64_t b = 0; b < positions[1]; ++b) {
        for (int64_t e = 0; e < positions[2]; ++e) {
          for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
            const int64_t u = a * g.stride[0] - g.pad[0] + kd * g.dilation[0];
            if (u < 0 || u >= (kTranspose ? g.out[0] : g.in[0])) continue;
            for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
              const int64_t v = b * g.stride[1] - g.pad[1] + kh * g.dilation[1];
              if (v < 0 || v >= (kTranspose ? g.out[1] : g.in[1])) continue;
              for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                const int64_t z = e * g.stride[2] - g.pad[2] + kw * g.dilation[2];
                if (z < 0 || z >= (kTranspose ? g.out[2] : g.in[2])) continue;
                const T wv = wk[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
                if (kTranspose) {
                  y[(u * g.out[1] + v) * g.out[2] + z] += wv * xc[(a * g.in[1] + b) * g.in[2] + e];
                } else {
                  y[(a * g.out[1] + b) * g.out[2] + e] += wv * xc[(u * g.in[1] + v) * g.in[2] + z];
                }
              }
            }
          }
        }
      }
    }
  }
}

template <typename T, bool kTranspose>
Status DirectConv(KernelContext& ctx, const ConvGeometry& cg, const T* x, const T* w, const T* bias, T* y,
                  const gemm::GemmTuning& tuning) {
  const Geometry3d g(cg);
  const int64_t planes = cg.batch * cg.out_channels;
  const int64_t plane_macs =
      std::max<int64_t>(1, (kTranspose ? g.in_size : g.out_size) * g.kernel_size * cg.in_per_group());
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      DirectPlane<T, kTranspose>(cg, g, x, w, bias, p / cg.out_channels, p % cg.out_channels, y + p * g.out_size);
    }
    return Status::Ok();
  };
  if (gemm::GemmWorkUnits(planes, plane_macs, 1) < tuning.parallel_minimum_tasks) return run(0, planes);
  const int64_t grain = std::max<int64_t>(1, gemm::kMacsPerWorkUnit / plane_macs);
  return ParallelFor(ctx.parallel(), planes, ParallelPlan{"conv.direct_planes", grain}, run);
}

}  // namespace conv
}  // namespace onnx_light
