// One TopK node (issue 17's case: 512 lanes of 1000, k = 5, largest, sorted) run once through
// the registered kernel, serial, for callgrind instruction counts per element type and lane
// layout. Not a benchmark: it prints a checksum of the indices, no times.
//   ./bazelw build //native/kernels/topk_cumsum:topk_profile
//   ONNX_LIGHT_MAX_ISA=avx2 valgrind --tool=callgrind --toggle-collect='*TopKKernel::Compute*' \
//     bazel-bin/native/kernels/topk_cumsum/topk_profile float 1
// Arguments: type (float, double, int8, uint8, int32, int64; default float), inner (1: the
// lanes contiguous, shape [512, 1000]; n > 1: shape [512 / n, 1000, n], axis 1, strided
// lanes; default 1), k (default 5).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "native/registry/kernel_test_util.h"

namespace {

template <typename T>
int Run(int64_t inner, int64_t k) {
  using onnx_light::testing::KernelTester;
  using onnx_light::testing::MakeTensor;
  const int64_t lanes = 512, length = 1000;
  std::vector<T> x(static_cast<size_t>(lanes * length));
  uint32_t state = 1;
  for (T& v : x) {
    state = state * 1664525u + 1013904223u;
    if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(static_cast<double>(state >> 8) * 0x1p-24);
    } else {
      v = static_cast<T>(state >> 13);  // wraps into the narrow types
    }
  }
  KernelTester t("TopK", 11);
  t.Input(MakeTensor<T>({lanes / inner, length, inner}, x)).Input(MakeTensor<int64_t>({1}, {k})).Outputs(2);
  t.Attr("axis", int64_t{1});
  auto out = t.Run(1);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
    return 1;
  }
  const onnx_light::Tensor& indices = out->at(1).tensor();
  int64_t sum = 0;
  for (int64_t i = 0; i < indices.num_elements(); ++i) sum += indices.data<int64_t>()[i] * (i % 7 + 1);
  std::printf("checksum %lld\n", static_cast<long long>(sum));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string type = argc > 1 ? argv[1] : "float";
  const int64_t inner = argc > 2 ? std::atoll(argv[2]) : 1, k = argc > 3 ? std::atoll(argv[3]) : 5;
  if (inner < 1 || 512 % inner != 0) {
    std::fprintf(stderr, "inner must divide 512\n");
    return 2;
  }
  if (type == "float") return Run<float>(inner, k);
  if (type == "double") return Run<double>(inner, k);
  if (type == "int8") return Run<int8_t>(inner, k);
  if (type == "uint8") return Run<uint8_t>(inner, k);
  if (type == "int32") return Run<int32_t>(inner, k);
  if (type == "int64") return Run<int64_t>(inner, k);
  std::fprintf(stderr, "unknown type %s\n", type.c_str());
  return 2;
}
