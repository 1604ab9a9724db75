// One recurrent node of the benchmark case (seq 32, batch 4, input 64, hidden 128, constant
// weights) run once through the registered kernel, serial, for callgrind instruction counts
// of the whole kernel (creation, the input projection GEMM and the steps). Not a benchmark:
// it prints a checksum of Y_h, no times.
//   ./bazelw build //native/kernels/rnn:recurrent_profile
//   ONNX_LIGHT_MAX_ISA=avx2 valgrind --tool=callgrind --toggle-collect='*Stepper*Task*' \
//     bazel-bin/native/kernels/rnn/recurrent_profile GRU 0
// Arguments: op (RNN, GRU, LSTM; default GRU), linear_before_reset (GRU; default 0),
// direction (forward, reverse, bidirectional; default forward).
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
  const std::string op = argc > 1 ? argv[1] : "GRU";
  const int64_t lbr = argc > 2 ? std::atoll(argv[2]) : 0;
  const std::string direction = argc > 3 ? argv[3] : "forward";
  const int64_t seq = 32, batch = 4, input = 64, hidden = 128, nd = direction == "bidirectional" ? 2 : 1;
  const int64_t gates = op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
  uint32_t state = 1;
  auto values = [&](int64_t n, float scale) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v)
      x = (static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f) * scale;
    return v;
  };
  KernelTester t(op, 22);
  t.Input(MakeTensor<float>(Shape{seq, batch, input}, values(seq * batch * input, 2.0f)))
      .ConstantInput(MakeTensor<float>(Shape{nd, gates * hidden, input}, values(nd * gates * hidden * input, 0.2f)))
      .ConstantInput(MakeTensor<float>(Shape{nd, gates * hidden, hidden}, values(nd * gates * hidden * hidden, 0.2f)))
      .ConstantInput(MakeTensor<float>(Shape{nd, 2 * gates * hidden}, values(nd * 2 * gates * hidden, 0.2f)))
      .Attr("hidden_size", hidden)
      .Attr("direction", direction)
      .Outputs(2);
  if (op == "GRU" && lbr != 0) t.Attr("linear_before_reset", int64_t{1});
  auto out = t.Run(1);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
    return 1;
  }
  const onnx_light::Tensor& y_h = out->at(1).tensor();
  double sum = 0;
  for (int64_t i = 0; i < y_h.num_elements(); ++i) sum += y_h.data<float>()[i];
  std::printf("checksum %.9g\n", sum);
  return 0;
}
