// Test side of isa_variants.h: run a test once per ISA variant, and say visibly which
// variants did not run on this machine and why.
//
// Contract: a primitive's test is a value-parameterized suite over the primitive's whole
// variant list (INSTANTIATE_TEST_SUITE_P with IsaVariantTestName), so each variant is its
// own test case named after it. A variant the CPU cannot run, or the cap excludes, is
// GTEST_SKIPped with a message naming it and the reason ("[  SKIPPED ]" in the log, never
// a silent pass); every variant that runs is compared against the portable variant.
//
// Example (native/kernels/simd/rows_test.cc):
//   class RowsVariantTest : public ::testing::TestWithParam<IsaVariant<FloatRows>> {};
//   TEST_P(RowsVariantTest, MatchesPortable) {
//     OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
//     ... compare GetParam().impl against PortableVariant(FloatRowsVariants()).impl ...
//   }
//   INSTANTIATE_TEST_SUITE_P(Isa, RowsVariantTest, ::testing::ValuesIn(FloatRowsVariants()),
//                            IsaVariantTestName<FloatRows>);
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {

// Skips the current test, naming the variant and why it cannot run here.
#define OL_SKIP_UNLESS_ISA_ENABLED(variant)                                            \
  do {                                                                                 \
    if (!::onnx_light::IsaEnabled((variant).isa)) {                                    \
      GTEST_SKIP() << "ISA variant '" << (variant).name                                \
                   << "' not run: " << ::onnx_light::IsaDisabledReason((variant).isa); \
    }                                                                                  \
  } while (0)

template <typename Impl>
std::string IsaVariantTestName(const ::testing::TestParamInfo<IsaVariant<Impl>>& info) {
  return info.param.name;
}

// The portable variant of a list: its last entry (the reference of every comparison).
template <typename Impl>
const IsaVariant<Impl>& PortableVariant(const std::vector<IsaVariant<Impl>>& variants) {
  EXPECT_EQ(variants.back().isa, Isa::kPortable) << "a variant list must end with its portable variant";
  return variants.back();
}

}  // namespace onnx_light
