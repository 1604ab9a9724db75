// The bounded calibrator of the GEMM family's parallel.minimum_tasks (Gemm and MatMul,
// every element type): it times each op serially and in parallel on square-ish products
// of 1, 2, 4, ... work units (kMacsPerWorkUnit multiply-adds each), validates that the
// parallel output is bitwise the serial one, and moves the threshold only when the
// shared crossover rule (calibration.h) says the new value wins by the margin.
#pragma once

#include <cstdint>

#include "native/kernels/common/calibrators/calibrators.h"

namespace onnx_light {
namespace gemm {

// Largest product the search measures (work units; 1024 ~ 640^3 multiply-adds, a few
// milliseconds serially): far above any useful threshold, so the search stays short.
inline constexpr int64_t kCalibrationMaxUnits = 1024;

// The M x N x K of the search's product of about `units` work units: M = N = 64 * the
// integer cube root of `units`, K the rest (at least `units` work units).
struct ProductShape {
  int64_t m = 0, n = 0, k = 0;
};
ProductShape CalibrationShape(int64_t units);

// The search and decision over given serial and parallel candidates, whose size is in
// work units: the calibrator apart from running kernels (tests give it a cost model).
// Sizes run from 1 to min(kCalibrationMaxUnits, search.max_size, the parameter's maximum).
StatusOr<CalibrationReport> DecideMinimumTasks(const KernelTuningSchema& schema, const CandidateFn& serial,
                                               const CandidateFn& parallel, CrossoverOptions search,
                                               BudgetAccount& account);

// The registered calibrator: runs the schema's op (MatMul, or Gemm with a full C) through
// KernelRunner with the threshold at its maximum (serial) and at 1 (parallel).
StatusOr<CalibrationReport> CalibrateGemmTasks(const CalibrationRequest& request, BudgetAccount& account);

}  // namespace gemm
}  // namespace onnx_light
