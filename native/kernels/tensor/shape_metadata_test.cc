#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using testing::DeterministicOutputs;
using testing::ErrorOf;
using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// Output 0 of the serial run, after the determinism check (these kernels never open a
// region; the result must not depend on the executor either way).
Value RunBoth(KernelTester& t) {
  const std::vector<Value> serial = DeterministicOutputs(t);
  return serial.empty() ? Value() : serial.at(0);
}

Tensor Iota(Shape shape) {
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return MakeTensor<float>(shape, v);
}

TEST(ShapeTest, StartAndEndClampLikeOnnx) {
  Tensor x = Iota({2, 3, 4, 5});
  struct Case {
    int64_t start, end;
    std::vector<int64_t> expected;
  };
  for (const Case& c : std::vector<Case>{{0, INT64_MAX, {2, 3, 4, 5}},
                                         {1, INT64_MAX, {3, 4, 5}},
                                         {-1, INT64_MAX, {5}},
                                         {0, -1, {2, 3, 4}},
                                         {-10, 10, {2, 3, 4, 5}},
                                         {3, 1, {}}}) {
    KernelTester t("Shape", 15);
    t.Input(x).Attr("start", c.start);
    if (c.end != INT64_MAX) t.Attr("end", c.end);
    EXPECT_EQ(ToVector<int64_t>(RunBoth(t).tensor()), c.expected) << c.start << ":" << c.end;
  }
  KernelTester scalar("Shape", 1);
  scalar.Input(MakeTensor<float>({}, {1.0f}));
  EXPECT_EQ(RunBoth(scalar).tensor().shape(), Shape({0}));
}

TEST(SizeTest, CountsElements) {
  KernelTester t("Size", 21);
  t.Input(Iota({2, 0, 3}));
  Tensor y = RunBoth(t).tensor();
  EXPECT_EQ(y.shape(), Shape());
  EXPECT_EQ(ToVector<int64_t>(y), std::vector<int64_t>{0});
}

TEST(ReshapeTest, ZeroCopiesMinusOneInfersAndOutputAliases) {
  Tensor x = Iota({2, 3, 4});
  KernelTester t("Reshape", 14);
  t.Input(x).Input(MakeTensor<int64_t>({3}, {0, -1, 2}));
  Tensor y = RunBoth(t).tensor();
  EXPECT_EQ(y.shape(), Shape({2, 6, 2}));
  EXPECT_EQ(y.raw_data(), x.raw_data());

  KernelTester allow_zero("Reshape", 14);
  allow_zero.Input(Iota({0, 3})).Input(MakeTensor<int64_t>({3}, {3, 0, 5})).Attr("allowzero", int64_t{1});
  EXPECT_EQ(RunBoth(allow_zero).tensor().shape(), Shape({3, 0, 5}));

  KernelTester v1("Reshape", 1);
  v1.Input(x).Attr("shape", std::vector<int64_t>{4, -1});
  EXPECT_EQ(RunBoth(v1).tensor().shape(), Shape({4, 6}));
}

TEST(ReshapeTest, RejectsBadTargets) {
  Tensor x = Iota({2, 3, 4});
  auto error = [&](std::vector<int64_t> shape, int64_t allow_zero = 0) {
    KernelTester t("Reshape", 14);
    t.NodeName("r")
        .Input(x)
        .Input(MakeTensor<int64_t>(Shape({static_cast<int64_t>(shape.size())}), shape))
        .Attr("allowzero", allow_zero);
    return ErrorOf(t);
  };
  EXPECT_NE(error({-1, -1}).find("more than one -1"), std::string::npos);
  EXPECT_NE(error({5, -1}).find("cannot reshape"), std::string::npos);
  EXPECT_NE(error({7, 7}).find("[7,7]"), std::string::npos);
  EXPECT_NE(error({-2, 12}).find("negative"), std::string::npos);
  EXPECT_NE(error({int64_t{1} << 62, 8}).find("overflows"), std::string::npos);
  EXPECT_NE(error({0, -1}, 1).find("both 0 and -1"), std::string::npos);
  EXPECT_NE(error({2, 3, 4, 0}).find("rank 3"), std::string::npos);
}

TEST(FlattenTest, AxesIncludingNegativeAndRankEdges) {
  Tensor x = Iota({2, 3, 4});
  for (auto [axis, d0, d1] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{0, 1, 24}, {1, 2, 12}, {3, 24, 1}, {-1, 6, 4}}) {
    KernelTester t("Flatten", 13);
    t.Input(x).Attr("axis", axis);
    EXPECT_EQ(RunBoth(t).tensor().shape(), Shape({d0, d1})) << axis;
  }
  KernelTester bad("Flatten", 13);
  bad.NodeName("flat").Input(x).Attr("axis", int64_t{4});
  EXPECT_NE(ErrorOf(bad).find("flat"), std::string::npos);
  KernelTester old("Flatten", 9);  // negative axes arrived in opset 11
  old.Input(x).Attr("axis", int64_t{-1});
  EXPECT_FALSE(old.Run(1).ok());
}

TEST(SqueezeTest, AttributeAndInputForms) {
  Tensor x = Iota({1, 3, 1, 2});
  KernelTester all("Squeeze", 13);
  all.Input(x);
  EXPECT_EQ(RunBoth(all).tensor().shape(), Shape({3, 2}));
  KernelTester some("Squeeze", 13);
  some.Input(x).Input(MakeTensor<int64_t>({1}, {-2}));
  EXPECT_EQ(RunBoth(some).tensor().shape(), Shape({1, 3, 2}));
  KernelTester attr("Squeeze", 11);
  attr.Input(x).Attr("axes", std::vector<int64_t>{0});
  EXPECT_EQ(RunBoth(attr).tensor().shape(), Shape({3, 1, 2}));
  KernelTester not_one("Squeeze", 13);
  not_one.NodeName("sq").Input(x).Input(MakeTensor<int64_t>({1}, {1}));
  EXPECT_NE(ErrorOf(not_one).find("size 3"), std::string::npos);
  KernelTester out_of_range("Squeeze", 13);
  out_of_range.Input(x).Input(MakeTensor<int64_t>({1}, {4}));
  EXPECT_NE(ErrorOf(out_of_range).find("out of range"), std::string::npos);
}

TEST(UnsqueezeTest, InsertsAxesOfTheOutputRank) {
  Tensor x = Iota({3, 4});
  KernelTester t("Unsqueeze", 13);
  t.Input(x).Input(MakeTensor<int64_t>({3}, {0, -1, 2}));
  Tensor y = RunBoth(t).tensor();
  EXPECT_EQ(y.shape(), Shape({1, 3, 1, 4, 1}));
  EXPECT_EQ(y.raw_data(), x.raw_data());
  KernelTester attr("Unsqueeze", 11);
  attr.Input(MakeTensor<float>({}, {2.0f})).Attr("axes", std::vector<int64_t>{0});
  EXPECT_EQ(RunBoth(attr).tensor().shape(), Shape({1}));
  KernelTester repeated("Unsqueeze", 13);
  repeated.Input(x).Input(MakeTensor<int64_t>({2}, {1, -3}));
  EXPECT_NE(ErrorOf(repeated).find("repeated"), std::string::npos);
  KernelTester missing("Unsqueeze", 13);
  missing.Input(x);
  EXPECT_NE(ErrorOf(missing).find("axes"), std::string::npos);
}

TEST(IdentityTest, PassesTensorsSequencesAndOptionals) {
  Tensor x = Iota({2});
  KernelTester t("Identity", 16);
  t.Input(x);
  EXPECT_EQ(RunBoth(t).tensor().raw_data(), x.raw_data());
  KernelTester seq("Identity", 16);
  seq.InputValue(Value::Sequence({Value(x), Value(Iota({3}))}, DataType::kFloat));
  Value s = RunBoth(seq);
  ASSERT_TRUE(s.is_sequence());
  EXPECT_EQ(s.items().size(), 2u);
  KernelTester none("Identity", 16);
  none.InputValue(Value::None(DataType::kFloat).set_optional(true));
  EXPECT_TRUE(RunBoth(none).is_none());
}

TEST(ConstantTest, EveryValueAttribute) {
  KernelTester tensor("Constant", 13);
  Tensor v = Iota({2, 2});
  tensor.Attr("value", v);
  EXPECT_EQ(ToVector<float>(RunBoth(tensor).tensor()), (std::vector<float>{0, 1, 2, 3}));
  KernelTester f("Constant", 13);
  f.Attr("value_float", 2.5f);
  EXPECT_EQ(RunBoth(f).tensor().shape(), Shape());
  KernelTester fs("Constant", 13);
  fs.Attr("value_floats", std::vector<float>{1, 2});
  EXPECT_EQ(ToVector<float>(RunBoth(fs).tensor()), (std::vector<float>{1, 2}));
  KernelTester i("Constant", 13);
  i.Attr("value_int", int64_t{7});
  EXPECT_EQ(ToVector<int64_t>(RunBoth(i).tensor()), std::vector<int64_t>{7});
  KernelTester is("Constant", 13);
  is.Attr("value_ints", std::vector<int64_t>{});
  EXPECT_EQ(RunBoth(is).tensor().shape(), Shape({0}));
  KernelTester s("Constant", 13);
  s.Attr("value_string", std::string("hi"));
  EXPECT_EQ(ToVector<std::string>(RunBoth(s).tensor()), std::vector<std::string>{"hi"});
  KernelTester ss("Constant", 13);
  ss.Attr("value_strings", std::vector<std::string>{"a", "b"});
  EXPECT_EQ(ToVector<std::string>(RunBoth(ss).tensor()), (std::vector<std::string>{"a", "b"}));
  KernelTester two("Constant", 13);
  two.NodeName("c").Attr("value_int", int64_t{1}).Attr("value_float", 1.0f);
  EXPECT_NE(ErrorOf(two).find("exactly one"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
