#include "native/kernels/elementwise/broadcast.h"

#include <vector>

#include <gtest/gtest.h>

namespace onnx_light {
namespace elementwise {
namespace {

// Input element index of every output element, by walking the runs.
std::vector<std::vector<int64_t>> Walk(const BroadcastPlan& plan, int64_t begin, int64_t end) {
  std::vector<std::vector<int64_t>> index(plan.num_inputs);
  ForEachRun(plan, begin, end, [&](int64_t, const int64_t* offset, const int64_t* stride, int64_t n) {
    for (int i = 0; i < plan.num_inputs; ++i) {
      for (int64_t k = 0; k < n; ++k) index[i].push_back(offset[i] + k * stride[i]);
    }
  });
  return index;
}

TEST(Broadcast, SameShapesMergeIntoOneRun) {
  auto plan = PlanBroadcast({Shape{2, 3, 4}, Shape{2, 3, 4}}, "t");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->rank, 1);
  EXPECT_EQ(plan->dims[0], 24);
  EXPECT_EQ(plan->output_shape, (Shape{2, 3, 4}));
}

TEST(Broadcast, SameShapePlanWalksLikeThePlanner) {
  for (const Shape& shape : {Shape{2, 3, 4}, Shape{}, Shape{1, 1}, Shape{5}}) {
    auto planned = PlanBroadcast({shape, shape}, "t");
    ASSERT_TRUE(planned.ok());
    const BroadcastPlan direct = SameShapePlan(shape, 2);
    EXPECT_EQ(direct.output_shape, planned->output_shape);
    EXPECT_EQ(direct.output_size, planned->output_size);
    const int64_t n = direct.output_size;
    EXPECT_EQ(Walk(direct, 0, n), Walk(*planned, 0, n)) << shape.ToString();
    if (n > 2) EXPECT_EQ(Walk(direct, 1, n - 1), Walk(*planned, 1, n - 1)) << shape.ToString();
  }
}

TEST(Broadcast, ChannelBiasKeepsThreeAxes) {
  auto plan = PlanBroadcast({Shape{2, 3, 4, 5}, Shape{3, 1, 1}}, "t");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->rank, 3);
  EXPECT_EQ(plan->dims[0], 2);
  EXPECT_EQ(plan->dims[1], 3);
  EXPECT_EQ(plan->dims[2], 20);
  // Output element (n, c, hw) reads bias element c.
  const auto index = Walk(*plan, 0, 120);
  for (int64_t o = 0; o < 120; ++o) {
    EXPECT_EQ(index[0][o], o);
    EXPECT_EQ(index[1][o], (o / 20) % 3);
  }
}

TEST(Broadcast, OuterProductAndPartialRanges) {
  auto plan = PlanBroadcast({Shape{3, 1}, Shape{4}}, "t");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->output_shape, (Shape{3, 4}));
  // Any sub-range walks the same indices as the full walk.
  const auto full = Walk(*plan, 0, 12);
  for (int64_t begin = 0; begin < 12; ++begin) {
    for (int64_t end = begin; end <= 12; ++end) {
      const auto part = Walk(*plan, begin, end);
      for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(part[i].size(), static_cast<size_t>(end - begin));
        for (int64_t o = begin; o < end; ++o) EXPECT_EQ(part[i][o - begin], full[i][o]);
      }
    }
  }
  for (int64_t o = 0; o < 12; ++o) {
    EXPECT_EQ(full[0][o], o / 4);
    EXPECT_EQ(full[1][o], o % 4);
  }
}

TEST(Broadcast, ScalarsEmptyAndRankMismatch) {
  auto scalars = PlanBroadcast({Shape{}, Shape{}}, "t");
  ASSERT_TRUE(scalars.ok());
  EXPECT_EQ(scalars->output_size, 1);
  EXPECT_EQ(scalars->output_shape, Shape{});

  auto empty = PlanBroadcast({Shape{0, 3}, Shape{1, 3}}, "t");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->output_shape, (Shape{0, 3}));
  EXPECT_EQ(empty->output_size, 0);

  auto ranks = PlanBroadcast({Shape{5}, Shape{2, 1, 1}, Shape{1, 3, 1}}, "t");
  ASSERT_TRUE(ranks.ok());
  EXPECT_EQ(ranks->output_shape, (Shape{2, 3, 5}));
}

TEST(Broadcast, IncompatibleShapesNameBoth) {
  auto plan = PlanBroadcast({Shape{2, 3}, Shape{4}}, "Add node 'n'");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("[2,3]"), std::string::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find("[4]"), std::string::npos);
  EXPECT_NE(plan.status().message().find("Add node 'n'"), std::string::npos);
  // Zero does not broadcast against a size other than 1.
  EXPECT_FALSE(PlanBroadcast({Shape{0}, Shape{2}}, "t").ok());
}

TEST(Broadcast, ToAGivenShape) {
  const Shape out{2, 3};
  EXPECT_TRUE(PlanBroadcast({Shape{3}}, "t", &out).ok());
  EXPECT_FALSE(PlanBroadcast({Shape{2, 3, 1}}, "t", &out).ok());
  EXPECT_FALSE(PlanBroadcast({Shape{4}}, "t", &out).ok());
}

TEST(Broadcast, LegacyAxis) {
  const int64_t axis = 1;
  auto b = LegacyBroadcastShape(Shape{2, 3, 4, 5}, Shape{3, 4}, true, &axis, "t");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (Shape{1, 3, 4, 1}));
  auto suffix = LegacyBroadcastShape(Shape{2, 3, 4, 5}, Shape{5}, true, nullptr, "t");
  ASSERT_TRUE(suffix.ok());
  EXPECT_EQ(*suffix, (Shape{1, 1, 1, 5}));
  EXPECT_FALSE(LegacyBroadcastShape(Shape{2, 3}, Shape{3}, false, nullptr, "t").ok());
  EXPECT_FALSE(LegacyBroadcastShape(Shape{2, 3}, Shape{2}, true, nullptr, "t").ok());
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
