// Interleaved A/B, in one process, of the blocked-channel depthwise and squeeze-and-
// excitation kernels against today's NCHW ones, through the registered kernels (the
// session's path, kernel creation excluded: KernelRunResult::compute_ns):
//   A = com.microsoft FusedConv with group = C (the NCHW depthwise planes / channel blocks
//       with the activation fused) or ai.onnx_light SqueezeExcitation, on X [1, C, H, W];
//   B = ai.onnx_light NchwcDepthwiseConv / NchwcSqueezeExcitation on X's blocked copy
//       [1, Cb, H, W, 16] (the copy is not timed: in a blocked graph it does not exist).
// EfficientNet-B0's and MobileNetV3-small's shapes, batch 1. Not a benchmark of record and
// not a test.
//
//   ./bazelw build //native/kernels/nchwc:nchwc_depthwise_ab
//   bazel-bin/native/kernels/nchwc/nchwc_depthwise_ab [threads=1] [rounds=5] [runs=50] [only=0] [case=-1] [plain=0]
//
// Per round (A then B in even rounds, B then A in odd ones, `runs` runs each): the median
// microseconds of each (wall time of Compute; each side allocates from its own allocator
// across runs, as a session does), B/A and the 1-minute load average. only = 1
// or 2 runs A or B alone (for callgrind, ONNX_LIGHT_MAX_ISA=avx2: two runs with different
// `runs` give instructions per run by difference); case = i runs only case i; plain = 1
// drops the depthwise cases' activation (the convolution alone, as ORT's NCHWc Conv node
// runs it when the activation is a separate node).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/registry/kernel_runner.h"
#include "native/registry/kernel_test_checks.h"

using namespace onnx_light;
using onnx_light::testing::MakeTensor;

namespace {

double LoadAverage() {
  double load = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

struct Case {
  const char* name;
  bool se;  // squeeze-and-excitation (reduced = `kernel`) or depthwise
  int64_t c, hw, kernel, stride;
  const char* activation;
};

const Case kCases[] = {
    {"dw3x3_s1_c32_112_swish", false, 32, 112, 3, 1, "Swish"},
    {"dw3x3_s2_c96_112_swish", false, 96, 112, 3, 2, "Swish"},
    {"dw5x5_s2_c144_56_swish", false, 144, 56, 5, 2, "Swish"},
    {"dw3x3_s1_c240_28_swish", false, 240, 28, 3, 1, "Swish"},
    {"dw5x5_s1_c672_14_swish", false, 672, 14, 5, 1, "Swish"},
    {"dw5x5_s2_c576_14_hardswish", false, 576, 14, 5, 2, "HardSwish"},
    {"se_c240_28", true, 240, 28, 10, 0, "Swish"},
    {"se_c672_14", true, 672, 14, 28, 0, "Swish"},
};

std::vector<float> Blocked(const std::vector<float>& x, int64_t c, int64_t plane) {
  const int64_t blocks = (c + 15) / 16;
  std::vector<float> b(blocks * plane * 16, 0.0f);
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t p = 0; p < plane; ++p) b[((ch / 16) * plane + p) * 16 + ch % 16] = x[ch * plane + p];
  return b;
}

void Setup(KernelRunner& t, const Case& k, bool blocked, const std::vector<float>& x, const std::vector<float>& w,
           const std::vector<float>& b, const std::vector<float>& w2, const std::vector<float>& b2, bool plain) {
  const int64_t blocks = (k.c + 15) / 16, plane = k.hw * k.hw;
  if (blocked) {
    t.Input(MakeTensor<float>({1, blocks, k.hw, k.hw, 16}, Blocked(x, k.c, plane)));
  } else {
    t.Input(MakeTensor<float>({1, k.c, k.hw, k.hw}, x));
  }
  if (k.se) {
    t.Input(MakeTensor<float>({k.kernel, k.c, 1, 1}, w)).Input(MakeTensor<float>({k.kernel}, b2));
    t.Input(MakeTensor<float>({k.c, k.kernel, 1, 1}, w2)).Input(MakeTensor<float>({k.c}, b));
    t.Attr("activation", std::string(k.activation)).Attr("activation_params", std::vector<float>{1.0f});
    t.Attr("gate_activation", std::string("Sigmoid"));
    return;
  }
  t.ConstantInput(MakeTensor<float>({k.c, 1, k.kernel, k.kernel}, w)).Input(MakeTensor<float>({k.c}, b));
  t.Attr("group", k.c).Attr("kernel_shape", std::vector<int64_t>{k.kernel, k.kernel});
  const int64_t p = k.kernel / 2;
  t.Attr("pads", std::vector<int64_t>{p, p, p, p}).Attr("strides", std::vector<int64_t>{k.stride, k.stride});
  if (!plain) t.Attr("activation", std::string(k.activation));
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1, rounds = argc > 2 ? std::atoi(argv[2]) : 5,
            runs = argc > 3 ? std::atoi(argv[3]) : 50, only = argc > 4 ? std::atoi(argv[4]) : 0,
            which = argc > 5 ? std::atoi(argv[5]) : -1;
  const bool plain = argc > 6 && std::atoi(argv[6]) != 0;
  if (threads < 1 || rounds < 0 || runs < 1) {
    std::fprintf(stderr, "usage: %s [threads] [rounds] [runs] [only] [case]\n", argv[0]);
    return 2;
  }
  for (int ci = 0; ci < static_cast<int>(sizeof(kCases) / sizeof(kCases[0])); ++ci) {
    if (which >= 0 && ci != which) continue;
    const Case& k = kCases[ci];
    const int64_t plane = k.hw * k.hw;
    const std::vector<float> x = onnx_light::testing::RandomFloats(k.c * plane, 1, -2, 2);
    const std::vector<float> w =
        onnx_light::testing::RandomFloats(k.se ? k.kernel * k.c : k.c * k.kernel * k.kernel, 2);
    const std::vector<float> b = onnx_light::testing::RandomFloats(k.c, 3),
                             w2 = onnx_light::testing::RandomFloats(k.c * k.kernel, 4),
                             b2 = onnx_light::testing::RandomFloats(k.kernel, 5);
    KernelRunner a(k.se ? "SqueezeExcitation" : "FusedConv", 1, k.se ? "ai.onnx_light" : "com.microsoft");
    KernelRunner nb(k.se ? "NchwcSqueezeExcitation" : "NchwcDepthwiseConv", 1, "ai.onnx_light");
    Setup(a, k, false, x, w, b, w2, b2, plain);
    Setup(nb, k, true, x, w, b, w2, b2, plain);
    // Each runtime's own allocator across its runs, as a session's nodes have: outputs
    // land in blocks already mapped (a fresh allocator per run would time page faults).
    a.SharedAllocator(std::make_shared<Allocator>());
    nb.SharedAllocator(std::make_shared<Allocator>());
    std::vector<float> ya, yb;
    const auto median_us = [&](KernelRunner& t, std::vector<float>* y) {
      std::vector<double> samples;
      for (int r = 0; r < runs; ++r) {
        auto run = t.Run(threads);
        if (!run.ok()) {
          std::fprintf(stderr, "%s: %s\n", k.name, run.status().ToString().c_str());
          std::exit(1);
        }
        samples.push_back(1e-3 * static_cast<double>(run->compute_ns));
        if (r == 0 && y != nullptr) *y = onnx_light::testing::ToVector<float>(run->outputs.at(0).tensor());
      }
      std::sort(samples.begin(), samples.end());
      return samples[samples.size() / 2];
    };
    if (only == 1 || only == 2) {
      median_us(only == 1 ? a : nb, nullptr);
      continue;
    }
    median_us(a, &ya);  // warm-up, and the outputs
    median_us(nb, &yb);
    const std::vector<float> ya_blocked = Blocked(ya, k.c, static_cast<int64_t>(ya.size()) / k.c);
    double diff = 0;
    for (size_t i = 0; i < yb.size() && i < ya_blocked.size(); ++i)
      diff = std::max(diff, static_cast<double>(std::fabs(yb[i] - ya_blocked[i])));
    std::printf("%s%s threads %d: max |A - B| %.3g\n", k.name, plain && !k.se ? " (no activation)" : "", threads, diff);
    for (int r = 0; r < rounds; ++r) {
      double ta, tb;
      if (r % 2 == 0) {
        ta = median_us(a, nullptr);
        tb = median_us(nb, nullptr);
      } else {
        tb = median_us(nb, nullptr);
        ta = median_us(a, nullptr);
      }
      std::printf("  round %d load %.2f A_nchw_us %.1f B_nchwc_us %.1f B/A %.3f\n", r, LoadAverage(), ta, tb, tb / ta);
    }
    std::fflush(stdout);
  }
  return 0;
}
