// Tuning: processor/execution descriptors, the tuning schemas, the profile-backed
// TableTuningSource (a _native.TuningSource the session accepts), the kernel runner and
// the calibrators. Profiles themselves (JSON, locking, precedence tiers) are read and
// written by onnx_light.kernel_tuning, which fills a TableTuningSource.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "native/core/cpu_features.h"
#include "native/registry/kernel_runner.h"
#include "native/kernels/common/calibrators/calibrators.h"
#include "native/tuning/forced_parallel.h"
#include "native/tuning/processor.h"
#include "native/tuning/table_tuning_source.h"
#include "python/native_module/bindings.h"
#include "python/native_module/record.h"

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

// bool before int: a Python bool is an int.
ParamValue FromPython(const std::string& what, nb::handle value) {
  if (nb::isinstance<nb::bool_>(value)) return nb::cast<bool>(value);
  if (nb::isinstance<nb::int_>(value)) {
    try {
      return nb::cast<int64_t>(value);
    } catch (const std::exception&) {
      ThrowStatus(InvalidArgument(what, ": integer ", nb::cast<std::string>(nb::str(value)), " does not fit int64"));
    }
  }
  if (nb::isinstance<nb::float_>(value)) return nb::cast<double>(value);
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  ThrowStatus(InvalidArgument(what, ": a tuning value must be int, float, bool or str, got ",
                              nb::cast<std::string>(nb::str(value.type()))));
}

ValueSource SourceFromName(const std::string& name) {
  for (ValueSource s : {ValueSource::kExplicitProfile, ValueSource::kExactMachine, ValueSource::kSameMicroarchitecture,
                        ValueSource::kSameIsaLevel, ValueSource::kPortableDefault}) {
    if (name == ValueSourceName(s)) return s;
  }
  ThrowStatus(InvalidArgument("unknown value source '", name,
                              "' (explicit_profile, exact_machine, same_microarchitecture, same_isa_level)"));
}

std::shared_ptr<const KernelTuningSchema> SchemaByKey(const std::string& key) {
  for (const auto& s : TuningSchemaRegistry::Global().All()) {
    if (s->key.ToString() == key) return s;
  }
  ThrowStatus(InvalidArgument("no tuning schema '", key, "' is registered in this build"));
}

template <typename T>
T Unwrap(StatusOr<T> s) {
  if (!s.ok()) ThrowStatus(s.status());
  return std::move(s).value();
}

// Inputs and outputs cross as (bytes, shape, ONNX element type): onnx_light.kernel_tuning
// converts from and to numpy (including the narrow float types of ml_dtypes).
Tensor TensorFromTriple(nb::handle triple, int index) {
  const auto t = nb::cast<nb::tuple>(triple);
  const auto data = nb::cast<nb::bytes>(t[0]);
  const auto dims = nb::cast<std::vector<int64_t>>(t[1]);
  const int type = nb::cast<int>(t[2]);
  const std::string where = StrCat("run_kernel: input ", index);
  if (!IsValidDataType(type) || type == 0 || static_cast<DataType>(type) == DataType::kString) {
    ThrowStatus(InvalidArgument(where, ": unsupported element type ", type));
  }
  Shape shape = Unwrap(Shape::Create(dims));
  Tensor tensor = Unwrap(Tensor::Allocate(static_cast<DataType>(type), shape, Allocator::Default()));
  if (tensor.byte_size() != data.size()) {
    ThrowStatus(InvalidArgument(where, ": ", data.size(), " bytes for ", tensor.TypeAndShape()));
  }
  std::memcpy(tensor.raw_data(), data.c_str(), data.size());
  return tensor;
}

Attribute AttributeFromPython(const std::string& name, nb::handle v) {
  Attribute a;
  a.name = name;
  if (nb::isinstance<nb::bool_>(v) || nb::isinstance<nb::int_>(v)) {
    a.type = Attribute::Type::kInt;
    a.i = nb::cast<int64_t>(v);
  } else if (nb::isinstance<nb::float_>(v)) {
    a.type = Attribute::Type::kFloat;
    a.f = nb::cast<float>(v);
  } else if (nb::isinstance<nb::str>(v)) {
    a.type = Attribute::Type::kString;
    a.s = nb::cast<std::string>(v);
  } else if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    nb::list items(v);
    bool all_int = true, all_str = true;
    for (nb::handle item : items) {
      all_int = all_int && nb::isinstance<nb::int_>(item);
      all_str = all_str && nb::isinstance<nb::str>(item);
    }
    if (all_int) {
      a.type = Attribute::Type::kInts;
      a.ints = nb::cast<std::vector<int64_t>>(items);
    } else if (all_str) {
      a.type = Attribute::Type::kStrings;
      a.strings = nb::cast<std::vector<std::string>>(items);
    } else {
      a.type = Attribute::Type::kFloats;
      a.floats = nb::cast<std::vector<float>>(items);
    }
  } else {
    ThrowStatus(InvalidArgument("run_kernel: attribute '", name, "' has unsupported type ",
                                nb::cast<std::string>(nb::str(v.type()))));
  }
  return a;
}

// Executors of past run_kernel calls, one per participant count, kept for the process so
// that repeated runs (benchmarks, exemption measurements) measure warm workers rather
// than thread start-up. The registry hands the same executor to the runner.
void KeepExecutorAlive(int num_threads) {
  static auto* executors = new std::map<int, std::shared_ptr<CpuExecutor>>();  // never destroyed
  if (num_threads <= 1 || executors->count(num_threads)) return;
  CpuExecutionPolicy policy;
  policy.num_threads = num_threads;
  (*executors)[num_threads] = Unwrap(ExecutorRegistry::Global().Acquire(policy));
}

KernelRunResult RunKernel(const std::string& op, int opset, const std::string& domain, nb::list inputs,
                          nb::dict attributes, nb::dict tuning, int num_threads, int num_outputs, const std::string& node_name,
                   int64_t memory_limit, const TuningSource* source) {
  KernelRunner runner(op, opset, domain);
  runner.Source(source);
  runner.Outputs(num_outputs).NodeName(node_name);
  if (memory_limit > 0) runner.MemoryLimit(memory_limit);
  int index = 0;
  for (nb::handle item : inputs) {
    if (item.is_none()) {
      runner.MissingInput();
    } else {
      runner.Input(TensorFromTriple(item, index));
    }
    ++index;
  }
  for (auto [name, value] : attributes) runner.Attr(AttributeFromPython(nb::cast<std::string>(name), value));
  for (auto [name, value] : tuning) {
    const std::string n = nb::cast<std::string>(name);
    runner.Tuning(n, FromPython("tuning value '" + n + "'", value));
  }
  if (num_threads > CpuExecutionPolicy::kMaxThreads) {
    ThrowStatus(InvalidArgument("run_kernel: num_threads must be <= ", CpuExecutionPolicy::kMaxThreads));
  }
  KeepExecutorAlive(num_threads);
  StatusOr<KernelRunResult> run = [&] {
    nb::gil_scoped_release release;
    return runner.Run(num_threads);
  }();
  return Unwrap(std::move(run));
}

// A run's outputs as (bytes, shape, ONNX element type) triples; None for values that do
// not cross this API (sequences, maps, strings).
using OutputTriple = std::optional<std::tuple<nb::bytes, std::vector<int64_t>, int>>;
std::vector<OutputTriple> OutputTriples(const KernelRunResult& r) {
  std::vector<OutputTriple> outputs;
  for (const Value& v : r.outputs) {
    if (!v.is_tensor() || v.tensor().dtype() == DataType::kString) {
      outputs.emplace_back(std::nullopt);
      continue;
    }
    const Tensor& t = v.tensor();
    outputs.emplace_back(std::make_tuple(nb::bytes(static_cast<const char*>(t.raw_data()), t.byte_size()),
                                         t.shape().dims(), static_cast<int>(t.dtype())));
  }
  return outputs;
}

// The account of a calibration (CalibrationReport's budget fields), one record in Python.
struct CalibrationAccount {
  int64_t spent_ns = 0, budget_ns = 0, runs = 0, peak_memory_bytes = 0;
  int max_threads_used = 0;
};

// {candidate name: value} of one measured size.
template <typename V>
std::map<std::string, V> ByCandidate(const SizeMeasurement& m, const std::vector<V>& values) {
  std::map<std::string, V> out;
  for (size_t i = 0; i < m.names.size(); ++i) out[m.names[i]] = values[i];
  return out;
}

CalibrationReport CalibrateSchema(const std::string& key, int64_t budget_ns, int64_t memory_bytes, int threads,
                                  int64_t min_size, int64_t max_size, int repetitions, double margin, int num_inputs,
                                  int opset, nb::dict attributes) {
  CalibrationRequest request;
  for (auto [name, value] : attributes) {
    request.attributes.push_back(AttributeFromPython(nb::cast<std::string>(name), value));
  }
  request.schema = SchemaByKey(key);
  request.opset_version = opset;
  request.num_inputs = num_inputs;
  request.search.min_size = min_size;
  request.search.max_size = max_size;
  request.search.harness.repetitions = repetitions;
  request.search.harness.margin = margin;
  if (repetitions < 1) ThrowStatus(InvalidArgument("calibrate: repetitions must be >= 1, got ", repetitions));
  if (!(margin >= 0 && margin < 10)) ThrowStatus(InvalidArgument("calibrate: margin must be in [0, 10), got ", margin));
  CalibrationBudget budget{budget_ns, memory_bytes, threads};
  BudgetAccount account(budget);
  StatusOr<CalibrationReport> report = [&] {
    nb::gil_scoped_release release;
    return Calibrate(request, account);
  }();
  return Unwrap(std::move(report));
}

}  // namespace

// What a session would resolve for a schema from `source`: {param: (value, source name)}.
template <typename Source>
std::map<std::string, std::pair<ParamValue, std::string>> ResolveToPython(const Source& source,
                                                                          const std::string& key) {
  ResolvedTuning r = source.Resolve(SchemaByKey(key));
  std::map<std::string, std::pair<ParamValue, std::string>> out;
  for (const auto& [name, value] : r.values()) out[name] = {value, ValueSourceName(r.SourceOf(name))};
  return out;
}
constexpr const char* kResolveDoc = "What a session would resolve for a schema: {param: (value, source)}.";

static void BindTuningRecords(nb::module_& m) {
  Record<CacheLevel>(m, "CacheLevel", "One cache of cpu0 (sysfs).")
      .Field("level", &CacheLevel::level)
      .Field("type", &CacheLevel::type)
      .Field("size_bytes", &CacheLevel::size_bytes);

  Record<ProcessorDescriptor>(m, "ProcessorDescriptor", "The processor, as tuning profiles name it.")
      .Field("architecture", &ProcessorDescriptor::architecture)
      .Field("vendor", &ProcessorDescriptor::vendor)
      .Field("family", &ProcessorDescriptor::family)
      .Field("model", &ProcessorDescriptor::model)
      .Field("stepping", &ProcessorDescriptor::stepping)
      .Field("microarchitecture", &ProcessorDescriptor::microarchitecture)
      .Field("model_name", &ProcessorDescriptor::model_name)
      .Field("isa_features", &ProcessorDescriptor::isa_features)
      .Field("isa_level", &ProcessorDescriptor::isa_level)
      .Field("caches", &ProcessorDescriptor::caches)
      .Field("physical_cores", &ProcessorDescriptor::physical_cores)
      .Field("logical_cores", &ProcessorDescriptor::logical_cores);

  Record<ExecutionDescriptor>(m, "ExecutionDescriptor", "A CpuExecutionPolicy as profiles name it.")
      .Field("threads", &ExecutionDescriptor::threads)
      .Field("affinity", &ExecutionDescriptor::affinity);

  Record<KernelTuningSchema>(m, "TuningSchema", "A kernel's tuning schema: its key, the key's parts, parameters.")
      .Field("key", [](const KernelTuningSchema& s) { return s.key.ToString(); })
      .Field("domain",
             [](const KernelTuningSchema& s) { return s.key.domain.empty() ? std::string("ai.onnx") : s.key.domain; })
      .Field("op", [](const KernelTuningSchema& s) { return s.key.op; })
      .Field("element_type", [](const KernelTuningSchema& s) { return s.key.element_type; })
      .Field("family", [](const KernelTuningSchema& s) { return s.key.family; })
      .Field("tuning_abi", [](const KernelTuningSchema& s) { return s.key.tuning_abi; })
      .Field("calibratable", &KernelTuningSchema::calibratable)
      .Field("params", &KernelTuningSchema::params);

  Record<KernelRunResult>(m, "KernelRunResult", "One run_kernel call: outputs, region events, time, allocations.")
      .Field("outputs", &OutputTriples)
      .Field("regions", &KernelRunResult::regions)
      .Field("compute_ns", &KernelRunResult::compute_ns)
      .Field("allocations", [](const KernelRunResult& r) { return r.allocation.allocations; })
      .Field("bytes_allocated", [](const KernelRunResult& r) { return r.allocation.bytes_allocated; })
      .Field("peak_bytes", [](const KernelRunResult& r) { return r.allocation.peak_bytes; })
      .Field("peak_scratch", &KernelRunResult::peak_scratch);

  Record<ParameterChoice>(m, "ParameterChoice", "A calibrator's choice for one parameter, and why.")
      .Field("name", &ParameterChoice::name)
      .Field("default", &ParameterChoice::portable_default)
      .Field("selected", &ParameterChoice::selected)
      .Field("changed", &ParameterChoice::changed)
      .Field("reason", &ParameterChoice::reason)
      .Field("measured", &ParameterChoice::measured);

  Record<SizeMeasurement>(m, "SizeMeasurement", "The candidates timed at one size (raw samples and medians).")
      .Field("size", &SizeMeasurement::size)
      .Field("samples_ns", [](const SizeMeasurement& s) { return ByCandidate(s, s.samples_ns); })
      .Field("median_ns", [](const SizeMeasurement& s) { return ByCandidate(s, s.median_ns); })
      .Field("rejected", &SizeMeasurement::rejected);

  Record<CrossoverResult>(m, "CalibrationEvidence", "What a calibrator measured and where its search stopped.")
      .Field("sizes", &CrossoverResult::sizes)
      .Field("confirmations", &CrossoverResult::confirmations)
      .Field("crossover", &CrossoverResult::crossover)
      .Field("rejected", &CrossoverResult::rejected)
      .Field("stop_reason", &CrossoverResult::stop_reason);

  Record<CalibrationAccount>(m, "CalibrationAccount", "What a calibration spent of its budget.")
      .Field("spent_ns", &CalibrationAccount::spent_ns)
      .Field("budget_ns", &CalibrationAccount::budget_ns)
      .Field("runs", &CalibrationAccount::runs)
      .Field("peak_memory_bytes", &CalibrationAccount::peak_memory_bytes)
      .Field("max_threads_used", &CalibrationAccount::max_threads_used);

  Record<CalibrationReport>(m, "CalibrationReport", "One schema's calibration: choices, evidence, accounting.")
      .Field("schema_key", &CalibrationReport::schema_key)
      .Field("calibrator", &CalibrationReport::calibrator)
      .Field("choices", &CalibrationReport::choices)
      .Field("evidence", &CalibrationReport::evidence)
      .Field("budget", [](const CalibrationReport& r) {
        return CalibrationAccount{r.spent_ns, r.budget_ns, r.runs, r.peak_memory_bytes, r.max_threads_used};
      });
}

void BindTuning(nb::module_& m) {
  m.attr("TUNING_ABI") = kTuningAbi;
  BindTuningRecords(m);

  m.def("host_isa", [] { return std::string(IsaName(HostIsa())); },
        "The best ISA level with kernel code this CPU supports: portable, avx2, avx512 or neon.");
  m.def("max_isa", [] { return std::string(IsaName(MaxIsa())); },
        "The ISA level kernels may use in this process (ONNX_LIGHT_MAX_ISA or set_max_isa; fixed at first use).");
  m.def(
      "set_max_isa",
      [](const std::string& name) {
        Isa isa = Isa::kPortable;
        if (!ParseIsa(name, &isa)) {
          ThrowStatus(InvalidArgument("set_max_isa: '", name, "' is not one of portable, avx2, avx512, neon"));
        }
        return SetMaxIsa(isa);
      },
      "Caps the kernels' ISA for this process; false once kernels have chosen under another cap.");
  m.def("host_processor", [] { return HostProcessor(); },
        "The processor descriptor of this machine (architecture, vendor, model, ISA features, caches, cores).");
  m.def(
      "execution_descriptor",
      [](int num_threads, std::vector<int> affinity) {
        CpuExecutionPolicy policy;
        policy.num_threads = num_threads;
        policy.affinity = std::move(affinity);
        ThrowIfError(policy.Validate());
        return DescribeExecution(policy);
      },
      nb::arg("num_threads") = 0, nb::arg("affinity") = std::vector<int>{},
      "The execution descriptor of a CpuExecutionPolicy (effective threads, affinity).");
  m.def("x86_isa_level", &X86IsaLevel);
  m.def("aarch64_isa_level", &Aarch64IsaLevel);

  m.def("tuning_schemas", [] {
    ThrowIfError(KernelRegistry::Global().status());
    std::vector<KernelTuningSchema> out;
    for (const auto& s : TuningSchemaRegistry::Global().All()) out.push_back(*s);
    return out;
  }, "Every registered tuning schema: key, its parts, parameters, calibratable.");

  nb::class_<TableTuningSource, TuningSource>(m, "TableTuningSource",
                                              "Profile values per schema key with their precedence tier.")
      .def(nb::init<>())
      .def(
          "add",
          [](TableTuningSource& self, const std::string& key, const std::string& param, nb::handle value,
             const std::string& source) {
            ThrowIfError(self.Add(key, param, FromPython(key + " " + param, value), SourceFromName(source)));
          },
          nb::arg("schema_key"), nb::arg("param"), nb::arg("value"), nb::arg("source"),
          "Records a value; raises ValueError for an unknown key or parameter, a wrong type or bounds.")
      .def("resolve", &ResolveToPython<TableTuningSource>, kResolveDoc)
      .def("rejected", &TableTuningSource::rejected);

  nb::class_<ForcedParallelTuning, TuningSource>(
      m, "ForcedParallelTuning",
      "The forced-parallel policy: every parallel.* threshold of every schema at its minimum "
      "(native/tuning/forced_parallel.h).")
      .def(nb::init<>())
      .def("resolve", &ResolveToPython<ForcedParallelTuning>, kResolveDoc);

  m.def("run_kernel", &RunKernel, nb::arg("op"), nb::arg("opset"), nb::arg("domain") = "",
        nb::arg("inputs") = nb::list(), nb::arg("attributes") = nb::dict(), nb::arg("tuning") = nb::dict(),
        nb::arg("num_threads") = 1, nb::arg("num_outputs") = 1, nb::arg("node_name") = "run_kernel",
        nb::arg("memory_limit") = 0, nb::arg("tuning_source").none() = nb::none(),
        "Runs one registered kernel; inputs are (bytes, shape, onnx_type) triples or None; tuning values come "
        "from tuning_source (else the portable defaults) then the tuning overrides. Returns outputs "
        "(triples), region events, compute_ns and allocation stats. Use onnx_light.kernel_tuning.run_kernel "
        "for numpy arrays.");

  m.def("calibrate", &CalibrateSchema, nb::arg("schema_key"), nb::arg("budget_ns"), nb::arg("memory_bytes"),
        nb::arg("threads"), nb::arg("min_size") = 1 << 10, nb::arg("max_size") = 1 << 24,
        nb::arg("repetitions") = 5, nb::arg("margin") = 0.10, nb::arg("num_inputs") = 0, nb::arg("opset") = 0,
        nb::arg("attributes") = nb::dict(),
        "Runs the calibrator of one schema within the budget; returns choices, evidence and accounting.");
}

}  // namespace onnx_light::python
