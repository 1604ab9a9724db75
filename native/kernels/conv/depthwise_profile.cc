// Depthwise planes of one convolution run through the kernel this CPU (and
// ONNX_LIGHT_MAX_ISA) selects (the channel blocks where they take the convolution, as
// conv_float.cc's Depthwise decides, else the plane kernel), serially, for callgrind instruction counts and perf sample
// shares; with a repeat count > 1 it also prints the median time of one convolution (for
// interleaved A/B runs of two builds, not a test). The cases are the depthwise layers of
// EfficientNet-B0 and MobileNetV3-small (benchmarks/conv_vs_ort.py's names).
//   ./bazelw build //native/kernels/conv:depthwise_profile
//   ONNX_LIGHT_MAX_ISA=avx2 valgrind --tool=callgrind --toggle-collect='*DepthwisePlane*'
//       bazel-bin/native/kernels/conv/depthwise_profile dw5x5s2_144_56 1
// Arguments: case name (default dw5x5s2_144_56; "list" prints them), repeats (default 1).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/conv/depthwise.h"
#include "native/kernels/conv/geometry3d.h"

namespace {

using onnx_light::conv::PlaneActivation;
using onnx_light::conv::PlaneActivationKind;

struct Case {
  const char* name;
  int64_t channels, hw, kernel, stride;
  PlaneActivationKind act;
};

constexpr Case kCases[] = {
    {"dw3x3s1_32_112_swish", 32, 112, 3, 1, PlaneActivationKind::kSwish},
    {"dw3x3s2_96_112_swish", 96, 112, 3, 2, PlaneActivationKind::kSwish},
    {"dw3x3s2_144_56", 144, 56, 3, 2, PlaneActivationKind::kNone},
    {"dw3x3s2_240_28_swish", 240, 28, 3, 2, PlaneActivationKind::kSwish},
    {"dw3x3s2_16_112_relu", 16, 112, 3, 2, PlaneActivationKind::kRelu},
    {"dw3x3s2_72_56_relu", 72, 56, 3, 2, PlaneActivationKind::kRelu},
    {"dw5x5s1_240_14", 240, 14, 5, 1, PlaneActivationKind::kNone},
    {"dw5x5s1_240_14_hardswish", 240, 14, 5, 1, PlaneActivationKind::kHardSwish},
    {"dw5x5s1_240_28_swish", 240, 28, 5, 1, PlaneActivationKind::kSwish},
    {"dw5x5s1_672_14_swish", 672, 14, 5, 1, PlaneActivationKind::kSwish},
    {"dw5x5s2_144_56", 144, 56, 5, 2, PlaneActivationKind::kNone},
    {"dw5x5s2_144_56_swish", 144, 56, 5, 2, PlaneActivationKind::kSwish},
    {"dw5x5s2_96_28_hardswish", 96, 28, 5, 2, PlaneActivationKind::kHardSwish},
    {"dw5x5s2_288_14_hardswish", 288, 14, 5, 2, PlaneActivationKind::kHardSwish},
    {"dw5x5s2_576_14_hardswish", 576, 14, 5, 2, PlaneActivationKind::kHardSwish},
    {"dw5x5s2_672_14_swish", 672, 14, 5, 2, PlaneActivationKind::kSwish},
    {"dw5x5s1_576_7_hardswish", 576, 7, 5, 1, PlaneActivationKind::kHardSwish},
    {"dw5x5s1_1152_7_swish", 1152, 7, 5, 1, PlaneActivationKind::kSwish},
    {"dw3x3s1_576_14", 576, 14, 3, 1, PlaneActivationKind::kNone},
    {"dw3x3s1_960_7_relu", 960, 7, 3, 1, PlaneActivationKind::kRelu},
    {"dw3x3s1_192_28", 192, 28, 3, 1, PlaneActivationKind::kNone},
};

int Run(const Case& c, int repeats) {
  onnx_light::conv::ConvGeometry cg;
  cg.rank = 2;
  const int64_t pad = c.kernel / 2, out = (c.hw + 2 * pad - c.kernel) / c.stride + 1;
  cg.in_spatial = {c.hw, c.hw};
  cg.kernel = {c.kernel, c.kernel};
  cg.strides = {c.stride, c.stride};
  cg.dilations = {1, 1};
  cg.pads_begin = {pad, pad};
  cg.pads_end = {pad, pad};
  cg.out_spatial = {out, out};
  const onnx_light::conv::Geometry3d g(cg);
  std::vector<float> x(c.channels * g.in_size), w(c.channels * g.kernel_size), y(c.channels * g.out_size);
  uint32_t state = 1;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<double>(state >> 8) * 0x1p-23 - 1.0);
  }
  for (float& v : w) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>((static_cast<double>(state >> 8) * 0x1p-23 - 1.0) * 0.2);
  }
  PlaneActivation act;
  act.kind = c.act;
  act.alpha = 1.0f;
  const onnx_light::conv::DepthwisePlaneFn plane = onnx_light::conv::SelectDepthwisePlane(g);
  const onnx_light::conv::DepthwiseChannels blocks = onnx_light::conv::SelectDepthwiseChannels(g, c.channels);
  std::vector<float> scratch(blocks.fn != nullptr ? onnx_light::conv::DepthwiseChannelsScratch(g, blocks.lanes) : 0);
  const std::vector<float> bias(c.channels, 0.125f);
  std::vector<const float*> planes(c.channels);
  for (int64_t m = 0; m < c.channels; ++m) planes[m] = x.data() + m * g.in_size;
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t m = 0; m < c.channels && blocks.fn != nullptr; m += blocks.lanes) {
      const int channels = static_cast<int>(std::min<int64_t>(blocks.lanes, c.channels - m));
      blocks.fn(g, planes.data() + m, w.data() + m * g.kernel_size, bias.data() + m, channels, act,
                y.data() + m * g.out_size, scratch.data());
    }
    for (int64_t m = 0; m < c.channels && blocks.fn == nullptr; ++m) {
      plane(g, x.data() + m * g.in_size, w.data() + m * g.kernel_size, 0.125f, act, y.data() + m * g.out_size);
    }
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  double sum = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) sum += y[i] * static_cast<double>(i % 7 + 1);
  std::printf("%s checksum %.6e", c.name, sum);
  if (repeats > 1) {
    std::sort(times.begin(), times.end());
    std::printf(" median_us %.2f min_us %.2f", times[times.size() / 2], times.front());
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "dw5x5s2_144_56";
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
  for (const Case& c : kCases) {
    if (std::strcmp(name, "list") == 0) std::printf("%s\n", c.name);
    if (std::strcmp(name, c.name) == 0 || std::strcmp(name, "all") == 0) Run(c, repeats);
  }
  return 0;
}
