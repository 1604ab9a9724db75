#include "native/kernels/common/calibrators/calibrators.h"

#include <algorithm>

#include "native/core/narrow_float.h"
#include "native/registry/kernel_runner.h"

namespace onnx_light {
namespace {

bool Matches(const CalibratorSelector& s, const KernelTuningSchema& schema) {
  if (!s.schema_key.empty() && s.schema_key != schema.key.ToString()) return false;
  if (!s.family.empty() && s.family != schema.key.family) return false;
  if (!s.parameter.empty() && schema.Find(s.parameter) == nullptr) return false;
  return true;
}

int Specificity(const CalibratorSelector& s) { return s.schema_key.empty() ? (s.family.empty() ? 0 : 1) : 2; }

}  // namespace

StatusOr<const KernelDef*> DefForSchema(const SchemaKey& key, int opset_version) {
  const KernelDef* best = nullptr;
  for (const auto& def : KernelRegistry::Global().defs()) {
    if (def->domain != key.domain || def->op != key.op || def->family != key.family) continue;
    const bool typed = std::any_of(def->element_types.begin(), def->element_types.end(),
                                   [&](DataType t) { return key.element_type == DataTypeName(t); });
    if (!typed && !(def->element_types.empty() && key.element_type == "*")) continue;
    if (opset_version > 0 && opset_version >= def->since_version && opset_version <= def->end_version) return def.get();
    if (!best || def->since_version > best->since_version) best = def.get();
  }
  if (!best) return NotImplemented("no kernel registration serves tuning schema ", key.ToString());
  return best;
}

namespace {

// Benign values in [0.5, 2] (integers 1 or 2, booleans mixed), scattered by a
// multiplicative hash: no overflow, no division by zero, no NaN, valid for logarithms
// and square roots.
double BenignValue(int64_t i) {
  return 0.5 + 1.5 * static_cast<double>((static_cast<uint64_t>(i) * 2654435761u) % 1024) / 1023.0;
}

template <typename T>
void FillWith(Tensor& t, T (*convert)(double)) {
  T* data = t.data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) data[i] = convert(BenignValue(i));
}

}  // namespace

StatusOr<Tensor> BenignTensor(DataType type, const Shape& shape, Allocator* allocator) {
  OL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type, shape, allocator));
  switch (type) {
    case DataType::kFloat:
      FillWith<float>(t, [](double v) { return static_cast<float>(v); });
      break;
    case DataType::kDouble:
      FillWith<double>(t, [](double v) { return v; });
      break;
    case DataType::kFloat16:
      FillWith<uint16_t>(t, [](double v) { return FloatToHalfBits(static_cast<float>(v)); });
      break;
    case DataType::kBFloat16:
      FillWith<uint16_t>(
          t, [](double v) { return static_cast<uint16_t>(DoubleToNarrowFloat(v, formats::kBFloat16, true)); });
      break;
    case DataType::kInt8:
      FillWith<int8_t>(t, [](double v) { return static_cast<int8_t>(v + 0.5); });
      break;
    case DataType::kUint8:
      FillWith<uint8_t>(t, [](double v) { return static_cast<uint8_t>(v + 0.5); });
      break;
    case DataType::kInt16:
      FillWith<int16_t>(t, [](double v) { return static_cast<int16_t>(v + 0.5); });
      break;
    case DataType::kUint16:
      FillWith<uint16_t>(t, [](double v) { return static_cast<uint16_t>(v + 0.5); });
      break;
    case DataType::kInt32:
      FillWith<int32_t>(t, [](double v) { return static_cast<int32_t>(v + 0.5); });
      break;
    case DataType::kUint32:
      FillWith<uint32_t>(t, [](double v) { return static_cast<uint32_t>(v + 0.5); });
      break;
    case DataType::kInt64:
      FillWith<int64_t>(t, [](double v) { return static_cast<int64_t>(v + 0.5); });
      break;
    case DataType::kUint64:
      FillWith<uint64_t>(t, [](double v) { return static_cast<uint64_t>(v + 0.5); });
      break;
    case DataType::kBool:
      FillWith<bool>(t, [](double v) { return v > 1.25; });
      break;
    default: {
      const NarrowFloatFormat* format = GetDataTypeInfo(type).bits == 8 ? SmallFloatFormat(type) : nullptr;
      if (format == nullptr) {
        return NotImplemented("calibration has no benign inputs for element type ", DataTypeName(type));
      }
      uint8_t* data = t.data<uint8_t>();
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        data[i] = static_cast<uint8_t>(DoubleToNarrowFloat(BenignValue(i), *format, true));
      }
    }
  }
  return t;
}

namespace {

// Runs the op on `num_inputs` same-shaped inputs of `size` elements with the threshold
// forced to `threshold`, with `participants` participants.
class ElementwiseProblem {
 public:
  ElementwiseProblem(const KernelDef& def, int opset, DataType type, int num_inputs,
                     const std::vector<Attribute>& attributes, int64_t memory_limit)
      : runner_(def.op, opset, def.domain), type_(type), num_inputs_(num_inputs) {
    runner_.MemoryLimit(memory_limit);
    for (const Attribute& a : attributes) runner_.Attr(a);
  }

  Status Prepare(int64_t size) {
    if (size == prepared_size_) return Status::Ok();
    runner_.ClearInputs();
    for (int i = 0; i < num_inputs_; ++i) {
      OL_ASSIGN_OR_RETURN(Tensor t, BenignTensor(type_, Shape({size}), &input_allocator_));
      runner_.Input(std::move(t));
    }
    prepared_size_ = size;
    return Status::Ok();
  }

  CandidateFn Candidate(int64_t threshold, int participants) {
    return [this, threshold, participants](int64_t size) -> StatusOr<CandidateRun> {
      OL_RETURN_IF_ERROR(Prepare(size));
      runner_.ClearTuning().Tuning(param::kMinimumElements, threshold);
      OL_ASSIGN_OR_RETURN(KernelRunResult r, runner_.Run(participants));
      return CandidateRun{r.allocator, std::move(r.outputs), r.compute_ns};
    };
  }

 private:
  // Declared before the runner, which holds tensors it allocated: blocks go back to it.
  Allocator input_allocator_;
  KernelRunner runner_;
  DataType type_;
  int num_inputs_;
  int64_t prepared_size_ = -1;
};

// Same-shaped input counts to try when the request does not say: the first that runs.
StatusOr<int> ProbeInputCount(const KernelDef& def, int opset, DataType type,
                              const std::vector<Attribute>& attributes) {
  Status last;
  for (int n = 1; n <= 3; ++n) {
    ElementwiseProblem probe(def, opset, type, n, attributes, Allocator::kNoLimit);
    StatusOr<CandidateRun> run = probe.Candidate(int64_t{1} << 50, 1)(16);
    if (run.ok()) return n;
    last = run.status();
  }
  return InvalidArgument("the elementwise calibrator cannot run ", def.op,
                         " on 1-3 same-shaped inputs: ", last.message());
}

}  // namespace

CalibratorRegistry& CalibratorRegistry::Global() {
  static CalibratorRegistry* registry = [] {
    auto* r = new CalibratorRegistry();
    r->Register({"", "", param::kMinimumElements}, "elementwise_crossover", CalibrateElementwise);
    return r;
  }();
  return *registry;
}

void CalibratorRegistry::Register(CalibratorSelector selector, std::string name, Calibrator calibrator) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back({std::move(selector), std::move(name), std::move(calibrator)});
}

StatusOr<CalibratorRegistry::Found> CalibratorRegistry::Find(const KernelTuningSchema& schema) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry* best = nullptr;
  for (const Entry& e : entries_) {
    if (Matches(e.selector, schema) && (!best || Specificity(e.selector) > Specificity(best->selector))) best = &e;
  }
  if (!best) return NotImplemented("no calibrator serves tuning schema ", schema.key.ToString());
  return Found{best->name, best->calibrator};
}

StatusOr<CalibrationReport> Calibrate(const CalibrationRequest& request, BudgetAccount& account) {
  if (!request.schema) return InvalidArgument("calibration request without a schema");
  if (!request.schema->calibratable) {
    return InvalidArgument("tuning schema ", request.schema->key.ToString(), " is not flagged calibratable");
  }
  OL_RETURN_IF_ERROR(account.budget().Validate());
  OL_ASSIGN_OR_RETURN(CalibratorRegistry::Found found, CalibratorRegistry::Global().Find(*request.schema));
  OL_ASSIGN_OR_RETURN(CalibrationReport report, found.calibrator(request, account));
  report.schema_key = request.schema->key.ToString();
  report.calibrator = found.name;
  report.spent_ns = account.spent_ns();
  report.budget_ns = account.budget().time_ns;
  report.runs = account.runs();
  report.peak_memory_bytes = account.peak_memory_bytes();
  report.max_threads_used = account.max_threads_used();
  return report;
}

StatusOr<CalibrationReport> CalibrateElementwise(const CalibrationRequest& request, BudgetAccount& account) {
  const KernelTuningSchema& schema = *request.schema;
  const ParamSpec* spec = schema.Find(param::kMinimumElements);
  if (spec == nullptr) return InvalidArgument(schema.key.ToString(), " has no ", param::kMinimumElements, " parameter");
  OL_ASSIGN_OR_RETURN(const KernelDef* def, DefForSchema(schema.key, request.opset_version));
  OL_ASSIGN_OR_RETURN(DataType type, DataTypeFromName(schema.key.element_type));
  const int opset = request.opset_version > 0 ? request.opset_version : def->since_version;
  int num_inputs = request.num_inputs;
  if (num_inputs <= 0) {
    OL_ASSIGN_OR_RETURN(num_inputs, ProbeInputCount(*def, opset, type, request.attributes));
  }

  const int participants = account.budget().threads;
  account.NoteThreads(participants);
  CrossoverOptions search = request.search;
  // Inputs, plus the reference's and one candidate's outputs alive at once.
  search.bytes_per_element = static_cast<int64_t>(ElementSize(type)) * (num_inputs + 2);
  search.max_size = std::min<int64_t>(search.max_size, static_cast<int64_t>(spec->maximum));
  search.min_size = std::max<int64_t>(search.min_size, static_cast<int64_t>(spec->minimum));

  ElementwiseProblem problem(*def, opset, type, num_inputs, request.attributes, account.budget().memory_bytes);
  const int64_t serial_threshold = static_cast<int64_t>(spec->maximum);
  OL_ASSIGN_OR_RETURN(CrossoverResult result,
                      FindParallelCrossover(problem.Candidate(serial_threshold, 1), problem.Candidate(1, participants),
                                            search, account));
  const int64_t portable_default = std::get<int64_t>(spec->portable_default);
  ThresholdDecision decision = DecideThreshold(result, portable_default, search.harness.margin);

  CalibrationReport report;
  report.choices.push_back(
      {param::kMinimumElements, spec->portable_default, decision.value, decision.changed, decision.reason});
  for (const ParamSpec& other : schema.params) {
    if (other.name == param::kMinimumElements) continue;
    report.choices.push_back({other.name, other.portable_default, other.portable_default, false,
                              "not calibrated by the elementwise crossover search: portable default kept", false});
  }
  report.evidence = std::move(result);
  return report;
}

}  // namespace onnx_light
