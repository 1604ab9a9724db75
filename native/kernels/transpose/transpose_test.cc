// Transpose against an index-arithmetic reference over many permutations and shapes,
// bit-identical for 1, 2, 4 and 8 participants.
#include <algorithm>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// out[idx] = in[idx permuted back], by explicit multi-index arithmetic.
template <typename T>
std::vector<T> Reference(const std::vector<T>& in, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const size_t rank = dims.size();
  std::vector<int64_t> out_dims(rank), in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * dims[i];
  for (size_t i = 0; i < rank; ++i) out_dims[i] = dims[perm[i]];
  std::vector<T> out(in.size());
  std::vector<int64_t> idx(rank, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += idx[i] * in_strides[perm[i]];
    out[o] = in[src];
    for (size_t i = rank; i-- > 0;) {
      if (++idx[i] < out_dims[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

template <typename T>
void Check(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const Shape shape(dims);
  std::vector<T> in(shape.num_elements());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i * 7 + 3);
  KernelTester t("Transpose", 21);
  t.Input(MakeTensor<T>(shape, in)).Attr("perm", perm).Tuning(param::kMinimumElements, int64_t{1});
  const std::vector<Value> serial = testing::DeterministicOutputs(t);
  ASSERT_FALSE(serial.empty());
  EXPECT_EQ(ToVector<T>(serial.at(0).tensor()), Reference(in, dims, perm)) << shape;
}

TEST(Transpose, EveryPermutationOfRank4) {
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    Check<float>({3, 1, 35, 40}, perm);
    Check<uint8_t>({2, 5, 3, 7}, perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(Transpose, LargeTwoDimensionalAndOddShapes) {
  Check<float>({257, 130}, {1, 0});
  Check<double>({64, 3, 100}, {2, 0, 1});
  Check<uint16_t>({1, 1, 1}, {2, 1, 0});
  Check<int64_t>({7}, {0});
  Check<float>({4, 33, 65, 2}, {0, 2, 3, 1});
  Check<int32_t>({0, 5}, {1, 0});
}

TEST(Transpose, DefaultPermReversesAxes) {
  KernelTester t("Transpose", 13);
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{3, 2}));
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Transpose, StringsAndScalars) {
  KernelTester s("Transpose", 13);
  s.Input(MakeTensor<std::string>({2, 2}, {"a", "b", "c", "d"})).Attr("perm", std::vector<int64_t>{1, 0});
  auto out = s.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (std::vector<std::string>{"a", "c", "b", "d"}));
  KernelTester scalar("Transpose", 13);
  scalar.Input(MakeTensor<float>({}, {5.0f}));
  auto one = scalar.Run(1);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(ToVector<float>(one->at(0).tensor()), (std::vector<float>{5.0f}));
}

TEST(Transpose, BadPermIsInvalidArgument) {
  for (const std::vector<int64_t>& perm : {std::vector<int64_t>{0, 0}, {0}, {0, 2}, {-1, 0}}) {
    KernelTester t("Transpose", 13);
    t.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Attr("perm", perm);
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace onnx_light
