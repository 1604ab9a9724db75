// ExpectIdentical, on which every family's serial-vs-parallel checks (and the forced-parallel
// mode) rest: it passes on identical values and fails, naming the difference, on any other.
#include "native/registry/kernel_test_util.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace onnx_light {
namespace testing {
namespace {

Value Floats(std::vector<float> v, Shape shape) { return Value(MakeTensor<float>(std::move(shape), v)); }

TEST(ExpectIdentical, PassesOnIdenticalTensorsSequencesAndMaps) {
  ExpectIdentical(Floats({1, 2, 3}, Shape{3}), Floats({1, 2, 3}, Shape{3}));
  ExpectIdentical(Value::Sequence({Floats({1}, Shape{1}), Floats({2, 3}, Shape{2})}),
                  Value::Sequence({Floats({1}, Shape{1}), Floats({2, 3}, Shape{2})}));
  ExpectIdentical(Value::Map(MakeTensor<int64_t>(Shape{2}, {4, 5}), MakeTensor<float>(Shape{2}, {0.5f, 1.5f})),
                  Value::Map(MakeTensor<int64_t>(Shape{2}, {4, 5}), MakeTensor<float>(Shape{2}, {0.5f, 1.5f})));
  ExpectIdentical(Value::None(), Value::None());
}

TEST(ExpectIdentical, FailsOnBytesShapesTypesAndKinds) {
  EXPECT_NONFATAL_FAILURE(ExpectIdentical(Floats({1, 2, 3}, Shape{3}), Floats({1, 2, 4}, Shape{3}), "case"),
                          "differ bitwise");
  // -0.0 and 0.0 compare equal as floats but not as bytes.
  EXPECT_NONFATAL_FAILURE(ExpectIdentical(Floats({0.0f}, Shape{1}), Floats({-0.0f}, Shape{1})), "bitwise");
  EXPECT_NONFATAL_FAILURE(ExpectIdentical(Floats({1, 2}, Shape{2}), Floats({1, 2}, Shape{1, 2})), "shapes");
  EXPECT_NONFATAL_FAILURE(ExpectIdentical(Floats({1}, Shape{1}), Value(MakeTensor<int32_t>(Shape{1}, {1}))),
                          "element types");
  EXPECT_NONFATAL_FAILURE(ExpectIdentical(Floats({1}, Shape{1}), Value::None()), "kinds");
}

TEST(ExpectIdentical, FailsOnSequenceItemsAndMapValues) {
  EXPECT_NONFATAL_FAILURE(ExpectIdentical(Value::Sequence({Floats({1}, Shape{1})}),
                                          Value::Sequence({Floats({1}, Shape{1}), Floats({1}, Shape{1})})),
                          "sequence lengths");
  EXPECT_NONFATAL_FAILURE(ExpectIdentical(Value::Sequence({Floats({1}, Shape{1}), Floats({2}, Shape{1})}),
                                          Value::Sequence({Floats({1}, Shape{1}), Floats({3}, Shape{1})})),
                          "item 1");
  EXPECT_NONFATAL_FAILURE(
      ExpectIdentical(Value::Map(MakeTensor<int64_t>(Shape{1}, {4}), MakeTensor<float>(Shape{1}, {0.5f})),
                      Value::Map(MakeTensor<int64_t>(Shape{1}, {4}), MakeTensor<float>(Shape{1}, {0.25f}))),
      "map values");
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
