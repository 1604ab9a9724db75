// A family-specific calibrator for one test schema (TestScale on int32): it proposes a
// fixed value, to show that the registry prefers it to the generic elementwise one.
#include "native/kernels/common/calibrators/calibrators.h"

namespace onnx_light {
namespace {

StatusOr<CalibrationReport> FixedProposal(const CalibrationRequest& request, BudgetAccount&) {
  CalibrationReport report;
  const ParamSpec* spec = request.schema->Find(param::kBlockElements);
  report.choices.push_back({spec->name, spec->portable_default, int64_t{4096}, true, "fixed by the test calibrator"});
  return report;
}

}  // namespace

OL_REGISTER_CALIBRATOR(
    test_scale_int32,
    (CalibratorSelector{SchemaKey{"onnx_light", "test.tuning", "TestScale", "int32", "tuning_test_kernels"}.ToString(),
                        "", ""}),
    FixedProposal);

}  // namespace onnx_light
