// Calibrators: the bounded procedures that pick a schema's values on this machine. A
// registry keyed by schema key, family or parameter lets each kernel family bring its own
// (Gemm's parallel.minimum_tasks); the generic one serves calibratable defs whose inputs
// are same-shaped tensors of the element type (unary/binary elementwise) and calibrates
// parallel.minimum_elements with the shared crossover search.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "native/core/tensor.h"
#include "native/graph/attribute.h"
#include "native/registry/kernel.h"
#include "native/tuning/calibration.h"
#include "native/tuning/schema.h"

namespace onnx_light {

struct CalibrationRequest {
  std::shared_ptr<const KernelTuningSchema> schema;
  int opset_version = 0;  // 0: the newest registration of the schema's op
  int num_inputs = 0;     // same-shaped inputs of the elementwise calibrator; 0: probe 1..3
  // Attributes the op requires (e.g. BitShift's direction), chosen benign by the caller.
  std::vector<Attribute> attributes;
  CrossoverOptions search;
};

struct ParameterChoice {
  std::string name;
  ParamValue portable_default;
  ParamValue selected;
  bool changed = false;
  std::string reason;
  bool measured = true;  // false: the calibrator does not tune this parameter
};

struct CalibrationReport {
  std::string schema_key;
  std::string calibrator;
  std::vector<ParameterChoice> choices;
  CrossoverResult evidence;
  // The account after the run: what the harness spent.
  int64_t spent_ns = 0, budget_ns = 0, runs = 0, peak_memory_bytes = 0;
  int max_threads_used = 0;
};

using Calibrator = std::function<StatusOr<CalibrationReport>(const CalibrationRequest&, BudgetAccount&)>;

// Which schemas a calibrator serves: an exact schema key, else a family, else any schema
// with the parameter. Empty fields match anything.
struct CalibratorSelector {
  std::string schema_key;
  std::string family;
  std::string parameter;
};

class CalibratorRegistry {
 public:
  // Holds the generic elementwise calibrator from the start.
  static CalibratorRegistry& Global();
  void Register(CalibratorSelector selector, std::string name, Calibrator calibrator);
  // The most specific calibrator for `schema` (key > family > parameter); NotImplemented
  // when none serves it.
  struct Found {
    std::string name;
    Calibrator calibrator;
  };
  StatusOr<Found> Find(const KernelTuningSchema& schema) const;

 private:
  struct Entry {
    CalibratorSelector selector;
    std::string name;
    Calibrator calibrator;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

// Runs the calibrator that serves request.schema within `account`'s budget and fills in
// the accounting. InvalidArgument for a schema that is not calibratable.
StatusOr<CalibrationReport> Calibrate(const CalibrationRequest& request, BudgetAccount& account);

// Registers a family's calibrator at start-up (in an alwayslink kernel_family source):
//   OL_REGISTER_CALIBRATOR(gemm_tasks, (CalibratorSelector{"", "gemm", param::kMinimumTasks}),
//                          CalibrateGemmTasks);
#define OL_REGISTER_CALIBRATOR(unique_name, selector, calibrator)             \
  [[maybe_unused]] static const bool ol_calibrator_registered_##unique_name = \
      (::onnx_light::CalibratorRegistry::Global().Register(selector, #unique_name, calibrator), true)

// The def serving a schema's path: the one covering `opset_version` (0: the newest).
StatusOr<const KernelDef*> DefForSchema(const SchemaKey& key, int opset_version);

// A tensor of benign values for calibration inputs: in [0.5, 2] (integers 1 or 2,
// booleans mixed), deterministic; no overflow, division by zero or NaN in any op.
StatusOr<Tensor> BenignTensor(DataType type, const Shape& shape, Allocator* allocator);

// The generic calibrator (registered for parallel.minimum_elements).
StatusOr<CalibrationReport> CalibrateElementwise(const CalibrationRequest& request, BudgetAccount& account);

}  // namespace onnx_light
