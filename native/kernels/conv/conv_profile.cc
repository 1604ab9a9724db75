// The CNN stems of benchmarks/conv_vs_ort.py as one FusedConv node (constant W and B, the
// model's activation fused, as the session runs them), run `runs` times serially through
// the registered kernel, for callgrind instruction counts of the convolution alone. Not a
// benchmark: it prints a checksum of Y, no times.
//   ./bazelw build //native/kernels/conv:conv_profile
//   ONNX_LIGHT_MAX_ISA=avx2 valgrind --tool=callgrind --toggle-collect='onnx_light::conv::ConvForward*' \
//     bazel-bin/native/kernels/conv/conv_profile mnv3 10
// Cases: mnv3 (3 -> 16, 3x3 stride 2, HardSwish), effnet (3 -> 32, 3x3 stride 2, Swish),
// resnet (3 -> 64, 7x7 stride 2, Relu), all on 1x3x224x224; default mnv3, 10 runs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "native/registry/kernel_test_util.h"

int main(int argc, char** argv) {
  using onnx_light::Shape;
  using onnx_light::testing::KernelTester;
  using onnx_light::testing::MakeTensor;
  const std::string name = argc > 1 ? argv[1] : "mnv3";
  const int runs = argc > 2 ? std::atoi(argv[2]) : 10;
  struct Case {
    const char* name;
    int64_t out_channels, kernel;
    const char* activation;
  };
  const Case cases[] = {{"mnv3", 16, 3, "HardSwish"}, {"effnet", 32, 3, "Swish"}, {"resnet", 64, 7, "Relu"}};
  const Case* c = nullptr;
  for (const Case& candidate : cases) {
    if (name == candidate.name) c = &candidate;
  }
  if (c == nullptr) {
    std::fprintf(stderr, "unknown case %s (mnv3, effnet, resnet)\n", name.c_str());
    return 2;
  }
  uint32_t state = 1;
  auto values = [&](int64_t n, float scale) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v)
      x = (static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f) * scale;
    return v;
  };
  const int64_t m = c->out_channels, k = c->kernel, pad = k / 2;
  KernelTester t("FusedConv", 1, "com.microsoft");
  t.Input(MakeTensor<float>(Shape{1, 3, 224, 224}, values(3 * 224 * 224, 2.0f)))
      .ConstantInput(MakeTensor<float>(Shape{m, 3, k, k}, values(m * 3 * k * k, 0.5f)))
      .ConstantInput(MakeTensor<float>(Shape{m}, values(m, 0.2f)))
      .Attr("strides", std::vector<int64_t>{2, 2})
      .Attr("pads", std::vector<int64_t>{pad, pad, pad, pad})
      .Attr("activation", std::string(c->activation));
  double sum = 0;
  for (int r = 0; r < runs; ++r) {
    auto out = t.Run(1);
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
      return 1;
    }
    const onnx_light::Tensor& y = out->at(0).tensor();
    for (int64_t i = 0; i < y.num_elements(); ++i) sum += y.data<float>()[i];
  }
  std::printf("checksum %.9g\n", sum);
  return 0;
}
