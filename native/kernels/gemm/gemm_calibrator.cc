#include "native/kernels/gemm/gemm_calibrator.h"

#include <algorithm>

#include "native/kernels/gemm/gemm.h"
#include "native/registry/kernel_runner.h"

namespace onnx_light {
namespace gemm {
namespace {

// One op on one product at a time: the inputs are rebuilt when the size changes.
class ProductRunner {
 public:
  ProductRunner(const KernelDef& def, int opset, DataType type, int64_t memory_limit)
      : runner_(def.op, opset, def.domain), with_c_(def.op == "Gemm"), type_(type) {
    runner_.MemoryLimit(memory_limit);
  }

  CandidateFn Candidate(int64_t threshold, int participants) {
    return [this, threshold, participants](int64_t units) -> StatusOr<CandidateRun> {
      OL_RETURN_IF_ERROR(Prepare(units));
      runner_.ClearTuning().Tuning(param::kMinimumTasks, threshold);
      OL_ASSIGN_OR_RETURN(KernelRunResult r, runner_.Run(participants));
      return CandidateRun{r.allocator, std::move(r.outputs), r.compute_ns};
    };
  }

 private:
  Status Prepare(int64_t units) {
    if (units == prepared_units_) return Status::Ok();
    const ProductShape s = CalibrationShape(units);
    runner_.ClearInputs();
    for (const Shape& shape : {Shape({s.m, s.k}), Shape({s.k, s.n})}) {
      OL_ASSIGN_OR_RETURN(Tensor t, BenignTensor(type_, shape, &input_allocator_));
      runner_.Input(std::move(t));
    }
    if (with_c_) {  // a full C: valid for every Gemm version (no broadcast rules involved)
      OL_ASSIGN_OR_RETURN(Tensor c, BenignTensor(type_, Shape({s.m, s.n}), &input_allocator_));
      runner_.Input(std::move(c));
    }
    prepared_units_ = units;
    return Status::Ok();
  }

  // Declared before the runner, which holds tensors it allocated: blocks go back to it.
  Allocator input_allocator_;
  KernelRunner runner_;
  bool with_c_;
  DataType type_;
  int64_t prepared_units_ = -1;
};

int64_t IntegerCubeRoot(int64_t v) {
  int64_t r = 1;
  while ((r + 1) * (r + 1) * (r + 1) <= v) ++r;
  return r;
}

}  // namespace

ProductShape CalibrationShape(int64_t units) {
  const int64_t side = 64 * IntegerCubeRoot(std::max<int64_t>(units, 1));
  const int64_t k = (std::max<int64_t>(units, 1) * kMacsPerWorkUnit + side * side - 1) / (side * side);
  return ProductShape{side, side, k};
}

StatusOr<CalibrationReport> DecideMinimumTasks(const KernelTuningSchema& schema, const CandidateFn& serial,
                                               const CandidateFn& parallel, CrossoverOptions search,
                                               BudgetAccount& account) {
  const ParamSpec* spec = schema.Find(param::kMinimumTasks);
  if (spec == nullptr) return InvalidArgument(schema.key.ToString(), " has no ", param::kMinimumTasks, " parameter");
  // The request's sizes count elements for the elementwise search; here a size is a
  // work unit, from the parameter's minimum up to a product of a few milliseconds.
  search.min_size = std::max<int64_t>(1, static_cast<int64_t>(spec->minimum));
  search.max_size = std::min({kCalibrationMaxUnits, search.max_size, static_cast<int64_t>(spec->maximum)});
  search.max_size = std::max(search.max_size, search.min_size);
  // A, B, C, the reference's and a candidate's outputs at once: at most 5 matrices of
  // 64 x 64 elements of 8 bytes (the widest type) per work unit; the smallest product is
  // the densest, so larger ones reserve more than they use.
  search.bytes_per_element = 5 * 64 * 64 * 8;
  account.NoteThreads(account.budget().threads);
  OL_ASSIGN_OR_RETURN(CrossoverResult result, FindParallelCrossover(serial, parallel, search, account));
  const int64_t portable_default = std::get<int64_t>(spec->portable_default);
  const ThresholdDecision decision = DecideThreshold(result, portable_default, search.harness.margin, "work units");

  CalibrationReport report;
  report.choices.push_back(
      {param::kMinimumTasks, spec->portable_default, decision.value, decision.changed, decision.reason});
  for (const ParamSpec& other : schema.params) {
    if (other.name == param::kMinimumTasks) continue;
    report.choices.push_back({other.name, other.portable_default, other.portable_default, false,
                              "not calibrated by the GEMM work-unit search: portable default kept", false});
  }
  report.evidence = std::move(result);
  return report;
}

StatusOr<CalibrationReport> CalibrateGemmTasks(const CalibrationRequest& request, BudgetAccount& account) {
  const KernelTuningSchema& schema = *request.schema;
  const ParamSpec* spec = schema.Find(param::kMinimumTasks);
  if (spec == nullptr) return InvalidArgument(schema.key.ToString(), " has no ", param::kMinimumTasks, " parameter");
  OL_ASSIGN_OR_RETURN(const KernelDef* def, DefForSchema(schema.key, request.opset_version));
  if (def->op != "MatMul" && def->op != "Gemm") {
    return NotImplemented("the GEMM calibrator runs MatMul and Gemm, not ", def->op, " (", schema.key.ToString(), ")");
  }
  OL_ASSIGN_OR_RETURN(DataType type, DataTypeFromName(schema.key.element_type));
  const int opset = request.opset_version > 0 ? request.opset_version : def->since_version;
  ProductRunner problem(*def, opset, type, account.budget().memory_bytes);
  return DecideMinimumTasks(schema, problem.Candidate(static_cast<int64_t>(spec->maximum), 1),
                            problem.Candidate(1, account.budget().threads), request.search, account);
}

OL_REGISTER_CALIBRATOR(gemm_minimum_tasks, (CalibratorSelector{"", "gemm", param::kMinimumTasks}), CalibrateGemmTasks);

}  // namespace gemm
}  // namespace onnx_light
