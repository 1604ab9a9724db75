// Kernel(op) and DispatchType: the defs a registration produces, and the C++ type a
// DataType dispatches to.
#include "native/kernels/common/kernel_registration.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "native/kernels/common/type_dispatch.h"

namespace onnx_light {
namespace {

std::vector<std::pair<int, int>> RangesOf(const std::vector<KernelDef>& defs) {
  std::vector<std::pair<int, int>> ranges;
  for (const KernelDef& d : defs) ranges.push_back({d.since_version, d.end_version});
  return ranges;
}

TEST(KernelRegistration, FamilyComesFromTheBuild) {
  const std::vector<KernelDef> defs = Kernel("Relu").Defs();
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].family, "registration_test_family");  // local_defines of this test
  EXPECT_EQ(defs[0].op, "Relu");
  EXPECT_EQ(defs[0].domain, "");
  EXPECT_EQ(RangesOf(defs), (std::vector<std::pair<int, int>>{{1, kOpenEnded}}));
}

TEST(KernelRegistration, OpsetHistoryEndsEachRangeWhereTheNextStarts) {
  const std::vector<KernelDef> defs =
      Kernel("Abs").Opsets({Since(1, Floats{}), Since(6, Numbers{}), Since(13, NumbersBf{})}).Defs();
  EXPECT_EQ(RangesOf(defs), (std::vector<std::pair<int, int>>{{1, 5}, {6, 12}, {13, kOpenEnded}}));
  EXPECT_EQ(defs[0].element_types, (std::vector<DataType>{DataType::kFloat, DataType::kDouble, DataType::kFloat16}));
  EXPECT_EQ(defs[2].element_types, DataTypesOf(NumbersBf{}));
}

TEST(KernelRegistration, UntilClosesTheLastRangeAndVersionsIsExplicit) {
  EXPECT_EQ(RangesOf(Kernel("Op").SinceVersions({10, 13}).Until(20).Defs()),
            (std::vector<std::pair<int, int>>{{10, 12}, {13, 20}}));
  EXPECT_EQ(RangesOf(Kernel("Op").Versions(1, 6).Versions(7, 8).Defs()),
            (std::vector<std::pair<int, int>>{{1, 6}, {7, 8}}));
}

TEST(KernelRegistration, TypesAtComputesTypesPerRangeAndOwnTypesWin) {
  const std::vector<KernelDef> defs =
      Kernel("Op")
          .SinceVersions({11, 13})
          .TypesAt([](int since) { return since >= 13 ? DataTypesOf(FloatsBf{}) : DataTypesOf(Floats{}); })
          .Defs();
  EXPECT_EQ(defs[0].element_types, DataTypesOf(Floats{}));
  EXPECT_EQ(defs[1].element_types, DataTypesOf(FloatsBf{}));
  const std::vector<KernelDef> own = Kernel("Op").Opsets({Since(1, TypeList<bool>{})}).Types(Floats{}).Defs();
  EXPECT_EQ(own[0].element_types, std::vector<DataType>{DataType::kBool});
}

TEST(KernelRegistration, NamedFieldsReachEveryDef) {
  const std::vector<KernelDef> defs = Kernel("Where")
                                          .Domain("ai.onnx.ml")
                                          .SinceVersions({9, 16})
                                          .DispatchInput(1)
                                          .OutputMayOverwriteInput(1)
                                          .Tuning({ParamSpec::Int64(param::kBlockElements, 64, 1, 1 << 20, "block")})
                                          .Calibratable()
                                          .Defs();
  ASSERT_EQ(defs.size(), 2u);
  for (const KernelDef& d : defs) {
    EXPECT_EQ(d.domain, "ai.onnx.ml");
    EXPECT_EQ(d.dispatch_input, 1);
    EXPECT_EQ(d.output_may_overwrite_input, 1);
    ASSERT_EQ(d.tuning.size(), 1u);
    EXPECT_EQ(d.tuning[0].name, param::kBlockElements);
    EXPECT_TRUE(d.calibratable);
  }
}

TEST(DispatchType, CallsWithTheCppTypeOfTheDataType) {
  std::string seen;
  const Status s = DispatchType(Numbers{}, DataType::kInt16, "Abs node 'n'", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    seen = std::is_same_v<T, int16_t> ? "int16_t" : "other";
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(seen, "int16_t");
}

TEST(DispatchType, ReturnsTheCallsStatus) {
  const Status s = DispatchType(Floats{}, DataType::kFloat, "w", [](auto) -> Status { return InvalidArgument("x"); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(DispatchType, OtherTypesAreNotImplementedNamingWhereAndType) {
  bool called = false;
  const Status s = DispatchType(Floats{}, DataType::kString, "Abs node 'n'", [&](auto) -> Status {
    called = true;
    return Status::Ok();
  });
  EXPECT_FALSE(called);
  EXPECT_EQ(s.code(), StatusCode::kNotImplemented);
  EXPECT_NE(s.message().find("Abs node 'n'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(DataTypeName(DataType::kString)), std::string::npos) << s.message();
}

TEST(DispatchType, HasTypeIsTrueExactlyForTheTypesDispatched) {
  EXPECT_TRUE(HasType(Floats{}, DataType::kFloat16));
  EXPECT_TRUE(HasType(Ints{}, DataType::kUint64));
  EXPECT_FALSE(HasType(Floats{}, DataType::kBFloat16));
  EXPECT_FALSE(HasType(Numbers{}, DataType::kString));
  static_assert(HasType(TypeList<bool>{}, DataType::kBool), "usable in constant expressions");
}

}  // namespace
}  // namespace onnx_light
