#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

Value Seq(std::vector<Tensor> tensors) {
  std::vector<Value> items;
  for (auto& t : tensors) items.push_back(Value(t));
  return Value::Sequence(std::move(items));
}

Value ABC() { return Seq({MakeTensor<float>({1}, {1}), MakeTensor<float>({2}, {2, 3}), MakeTensor<float>({1}, {4})}); }

TEST(SequenceTest, ConstructAtLengthAndNegativePositions) {
  KernelTester construct("SequenceConstruct", 11);
  construct.Input(MakeTensor<int64_t>({2}, {1, 2})).Input(MakeTensor<int64_t>({1}, {3}));
  const std::vector<Value> seq = testing::DeterministicOutputs(construct);
  ASSERT_FALSE(seq.empty());
  ASSERT_TRUE(seq[0].is_sequence());
  EXPECT_EQ(seq[0].items().size(), 2u);
  EXPECT_EQ(seq[0].element_type(), DataType::kInt64);

  KernelTester at("SequenceAt", 11);
  at.InputValue(ABC()).Input(MakeTensor<int64_t>({}, {-2}));
  auto item = at.Run(1);
  ASSERT_TRUE(item.ok()) << item.status().ToString();
  EXPECT_EQ(ToVector<float>((*item)[0].tensor()), std::vector<float>({2, 3}));

  KernelTester length("SequenceLength", 11);
  length.InputValue(ABC());
  auto n = length.Run(1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*(*n)[0].tensor().data<int64_t>(), 3);

  KernelTester out_of_range("SequenceAt", 11);
  out_of_range.InputValue(ABC()).Input(MakeTensor<int32_t>({}, {3}));
  auto bad = out_of_range.Run(1);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("position 3 is out of range [-3, 2]"), std::string::npos)
      << bad.status().message();
}

TEST(SequenceTest, ConstructRejectsMixedTypes) {
  KernelTester t("SequenceConstruct", 11);
  t.Input(MakeTensor<int64_t>({1}, {1})).Input(MakeTensor<float>({1}, {3}));
  EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(SequenceTest, InsertAndErase) {
  KernelTester insert("SequenceInsert", 11);
  insert.InputValue(ABC()).Input(MakeTensor<float>({1}, {9})).Input(MakeTensor<int64_t>({}, {1}));
  auto inserted = insert.Run(1);
  ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
  ASSERT_EQ((*inserted)[0].items().size(), 4u);
  EXPECT_EQ(ToVector<float>((*inserted)[0].items()[1].tensor()), std::vector<float>({9}));

  KernelTester append("SequenceInsert", 11);
  append.InputValue(ABC()).Input(MakeTensor<float>({1}, {9}));
  auto appended = append.Run(1);
  ASSERT_TRUE(appended.ok());
  EXPECT_EQ(ToVector<float>((*appended)[0].items()[3].tensor()), std::vector<float>({9}));

  KernelTester wrong_type("SequenceInsert", 11);
  wrong_type.InputValue(ABC()).Input(MakeTensor<int64_t>({1}, {9}));
  EXPECT_EQ(wrong_type.Run(1).status().code(), StatusCode::kInvalidArgument);

  KernelTester erase("SequenceErase", 11);
  erase.InputValue(ABC()).Input(MakeTensor<int64_t>({}, {0}));
  auto erased = erase.Run(1);
  ASSERT_TRUE(erased.ok());
  ASSERT_EQ((*erased)[0].items().size(), 2u);
  EXPECT_EQ(ToVector<float>((*erased)[0].items()[0].tensor()), std::vector<float>({2, 3}));

  KernelTester empty("SequenceErase", 11);
  empty.InputValue(Value::Sequence({}, DataType::kFloat));
  EXPECT_EQ(empty.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(SequenceTest, EmptyHasTheRequestedType) {
  KernelTester t("SequenceEmpty", 11);
  t.Attr("dtype", int64_t{7});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)[0].items().empty());
  EXPECT_EQ((*out)[0].element_type(), DataType::kInt64);
}

TEST(SplitToSequenceTest, ScalarSplitLeavesAShorterLastChunk) {
  // [2, 5] split along axis 1 in chunks of 2: widths 2, 2, 1.
  KernelTester t("SplitToSequence", 11);
  t.Input(MakeTensor<int32_t>({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})).Input(MakeTensor<int64_t>({}, {2}));
  t.Attr("axis", int64_t{1});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto& items = (*out)[0].items();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].tensor().shape(), Shape({2, 2}));
  EXPECT_EQ(ToVector<int32_t>(items[1].tensor()), std::vector<int32_t>({2, 3, 7, 8}));
  EXPECT_EQ(ToVector<int32_t>(items[2].tensor()), std::vector<int32_t>({4, 9}));
}

TEST(SplitToSequenceTest, NoSplitWithoutKeepdimsDropsTheAxis) {
  KernelTester t("SplitToSequence", 11);
  t.Input(MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  t.Attr("keepdims", int64_t{0});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].items().size(), 3u);
  EXPECT_EQ((*out)[0].items()[2].tensor().shape(), Shape({2}));
  EXPECT_EQ(ToVector<float>((*out)[0].items()[2].tensor()), std::vector<float>({5, 6}));
}

TEST(SplitToSequenceTest, LengthsMustCoverTheAxis) {
  KernelTester t("SplitToSequence", 11);
  t.Input(MakeTensor<float>({3}, {1, 2, 3})).Input(MakeTensor<int64_t>({2}, {1, 1}));
  auto out = t.Run(1);
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("sum to 2 but the axis has 3"), std::string::npos) << out.status().message();
}

TEST(ConcatFromSequenceTest, ConcatenatesOrStacks) {
  Value seq = Seq({MakeTensor<std::string>({1, 2}, {"a", "b"}), MakeTensor<std::string>({1, 2}, {"c", "d"})});
  KernelTester concat("ConcatFromSequence", 11);
  concat.InputValue(seq).Attr("axis", int64_t{1});
  auto joined = concat.Run(1);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ((*joined)[0].tensor().shape(), Shape({1, 4}));
  EXPECT_EQ(ToVector<std::string>((*joined)[0].tensor()), std::vector<std::string>({"a", "b", "c", "d"}));

  KernelTester stack("ConcatFromSequence", 11);
  stack.InputValue(seq).Attr("axis", int64_t{-1}).Attr("new_axis", int64_t{1});
  auto stacked = stack.Run(1);
  ASSERT_TRUE(stacked.ok()) << stacked.status().ToString();
  EXPECT_EQ((*stacked)[0].tensor().shape(), Shape({1, 2, 2}));
  EXPECT_EQ(ToVector<std::string>((*stacked)[0].tensor()), std::vector<std::string>({"a", "c", "b", "d"}));

  KernelTester mismatch("ConcatFromSequence", 11);
  mismatch.InputValue(Seq({MakeTensor<float>({1, 2}, {1, 2}), MakeTensor<float>({2, 1}, {1, 2})}))
      .Attr("axis", int64_t{0});
  EXPECT_EQ(mismatch.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(OptionalTest, WrapTestAndUnwrap) {
  KernelTester wrap("Optional", 15);
  wrap.Input(MakeTensor<float>({1}, {5}));
  auto wrapped = wrap.Run(1);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_TRUE((*wrapped)[0].optional());

  KernelTester empty("Optional", 15);
  auto none = empty.Run(1);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)[0].is_none());

  for (bool present : {true, false}) {
    KernelTester has("OptionalHasElement", 18);
    has.InputValue(present ? (*wrapped)[0] : (*none)[0]);
    auto out = has.Run(1);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(*(*out)[0].tensor().data<bool>(), present);
  }
  KernelTester absent("OptionalHasElement", 18);
  absent.MissingInput();
  auto out = absent.Run(1);
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(*(*out)[0].tensor().data<bool>());

  KernelTester get("OptionalGetElement", 18);
  get.InputValue((*wrapped)[0]);
  auto value = get.Run(1);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(ToVector<float>((*value)[0].tensor()), std::vector<float>({5}));

  KernelTester get_empty("OptionalGetElement", 18);
  get_empty.InputValue((*none)[0]);
  EXPECT_EQ(get_empty.Run(1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnx_light
