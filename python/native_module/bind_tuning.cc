// Tuning: processor/execution descriptors, the tuning schemas, the profile-backed
// TableTuningSource (a _native.TuningSource the session accepts), the kernel runner and
// the calibrators. Profiles themselves (JSON, locking, precedence tiers) are read and
// written by onnx_light.kernel_tuning, which fills a TableTuningSource.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>

#include "native/core/cpu_features.h"
#include "native/registry/kernel_runner.h"
#include "native/kernels/common/calibrators/calibrators.h"
#include "native/tuning/forced_parallel.h"
#include "native/tuning/processor.h"
#include "native/tuning/table_tuning_source.h"
#include "python/native_module/bindings.h"

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

nb::object ToPython(const ParamValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return nb::int_(*i);
  if (auto* d = std::get_if<double>(&v)) return nb::float_(*d);
  if (auto* b = std::get_if<bool>(&v)) return nb::bool_(*b);
  return nb::str(std::get<std::string>(v).c_str());
}

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

nb::dict ProcessorToDict(const ProcessorDescriptor& p) {
  nb::dict d;
  d["architecture"] = p.architecture;
  d["vendor"] = p.vendor;
  d["family"] = p.family;
  d["model"] = p.model;
  d["stepping"] = p.stepping;
  d["microarchitecture"] = p.microarchitecture;
  d["model_name"] = p.model_name;
  d["isa_features"] = p.isa_features;
  d["isa_level"] = p.isa_level;
  nb::list caches;
  for (const CacheLevel& c : p.caches) {
    nb::dict cd;
    cd["level"] = c.level;
    cd["type"] = c.type;
    cd["size_bytes"] = c.size_bytes;
    caches.append(cd);
  }
  d["caches"] = caches;
  d["physical_cores"] = p.physical_cores;
  d["logical_cores"] = p.logical_cores;
  return d;
}

nb::dict SchemaToDict(const KernelTuningSchema& s) {
  nb::dict d;
  d["key"] = s.key.ToString();
  d["domain"] = s.key.domain.empty() ? std::string("ai.onnx") : s.key.domain;
  d["op"] = s.key.op;
  d["element_type"] = s.key.element_type;
  d["family"] = s.key.family;
  d["tuning_abi"] = s.key.tuning_abi;
  d["calibratable"] = s.calibratable;
  nb::list params;
  for (const ParamSpec& p : s.params) {
    nb::dict pd;
    pd["name"] = p.name;
    pd["type"] = std::string(ParamTypeName(p.type));
    pd["default"] = ToPython(p.portable_default);
    if (p.type == ParamType::kInt64) {
      pd["minimum"] = static_cast<int64_t>(p.minimum);
      pd["maximum"] = static_cast<int64_t>(p.maximum);
    } else if (p.type == ParamType::kDouble) {
      pd["minimum"] = p.minimum;
      pd["maximum"] = p.maximum;
    }
    if (p.type == ParamType::kEnum) pd["values"] = p.enum_values;
    pd["meaning"] = p.meaning;
    params.append(pd);
  }
  d["params"] = params;
  return d;
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

nb::dict RunKernel(const std::string& op, int opset, const std::string& domain, nb::list inputs, nb::dict attributes,
                   nb::dict tuning, int num_threads, int num_outputs, const std::string& node_name,
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
  KernelRunResult r = Unwrap(std::move(run));
  nb::list outputs;
  for (const Value& v : r.outputs) {
    if (!v.is_tensor() || v.tensor().dtype() == DataType::kString) {
      outputs.append(nb::none());  // sequences, maps and strings do not cross this API
      continue;
    }
    const Tensor& t = v.tensor();
    outputs.append(nb::make_tuple(nb::bytes(static_cast<const char*>(t.raw_data()), t.byte_size()),
                                  t.shape().dims(), static_cast<int>(t.dtype())));
  }
  nb::list regions;
  for (const RegionEvent& e : r.regions) {
    nb::dict d;
    d["label"] = std::string(e.label);
    d["total"] = e.total;
    d["grain"] = e.grain;
    d["requested_participants"] = e.requested_participants;
    d["admitted_participants"] = e.admitted_participants;
    d["observed_participants"] = e.observed_participants;
    d["nested"] = e.nested;
    d["wall_ns"] = e.wall_ns;
    d["cpu_ns"] = e.cpu_ns;
    regions.append(d);
  }
  nb::dict result;
  result["outputs"] = outputs;
  result["regions"] = regions;
  result["compute_ns"] = r.compute_ns;
  result["allocations"] = r.allocation.allocations;
  result["bytes_allocated"] = r.allocation.bytes_allocated;
  result["peak_bytes"] = r.allocation.peak_bytes;
  result["peak_scratch"] = r.peak_scratch;
  return result;
}

nb::dict ReportToDict(const CalibrationReport& r) {
  nb::dict d;
  d["schema_key"] = r.schema_key;
  d["calibrator"] = r.calibrator;
  nb::list choices;
  for (const ParameterChoice& c : r.choices) {
    nb::dict cd;
    cd["name"] = c.name;
    cd["default"] = ToPython(c.portable_default);
    cd["selected"] = ToPython(c.selected);
    cd["changed"] = c.changed;
    cd["reason"] = c.reason;
    cd["measured"] = c.measured;
    choices.append(cd);
  }
  d["choices"] = choices;
  const auto measurements = [](const std::vector<SizeMeasurement>& list) {
    nb::list out;
    for (const SizeMeasurement& m : list) {
      nb::dict md;
      md["size"] = m.size;
      nb::dict samples, medians;
      for (size_t i = 0; i < m.names.size(); ++i) {
        samples[m.names[i].c_str()] = m.samples_ns[i];
        medians[m.names[i].c_str()] = m.median_ns[i];
      }
      md["samples_ns"] = samples;
      md["median_ns"] = medians;
      md["rejected"] = m.rejected;
      out.append(md);
    }
    return out;
  };
  nb::dict evidence;
  evidence["sizes"] = measurements(r.evidence.sizes);
  evidence["confirmations"] = measurements(r.evidence.confirmations);
  evidence["crossover"] = r.evidence.crossover ? nb::object(nb::int_(*r.evidence.crossover)) : nb::none();
  evidence["rejected"] = r.evidence.rejected;
  evidence["stop_reason"] = r.evidence.stop_reason;
  d["evidence"] = evidence;
  nb::dict budget;
  budget["spent_ns"] = r.spent_ns;
  budget["budget_ns"] = r.budget_ns;
  budget["runs"] = r.runs;
  budget["peak_memory_bytes"] = r.peak_memory_bytes;
  budget["max_threads_used"] = r.max_threads_used;
  d["budget"] = budget;
  return d;
}

nb::dict CalibrateSchema(const std::string& key, int64_t budget_ns, int64_t memory_bytes, int threads,
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
  return ReportToDict(Unwrap(std::move(report)));
}

}  // namespace

// What a session would resolve for a schema from `source`: {param: (value, source name)}.
template <typename Source>
nb::dict ResolveToPython(const Source& source, const std::string& key) {
  ResolvedTuning r = source.Resolve(SchemaByKey(key));
  nb::dict out;
  for (const auto& [name, value] : r.values()) {
    out[name.c_str()] = nb::make_tuple(ToPython(value), std::string(ValueSourceName(r.SourceOf(name))));
  }
  return out;
}
constexpr const char* kResolveDoc = "What a session would resolve for a schema: {param: (value, source)}.";

void BindTuning(nb::module_& m) {
  m.attr("TUNING_ABI") = kTuningAbi;

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
  m.def("host_processor", [] { return ProcessorToDict(HostProcessor()); },
        "The processor descriptor of this machine (architecture, vendor, model, ISA features, caches, cores).");
  m.def(
      "execution_descriptor",
      [](int num_threads, std::vector<int> affinity) {
        CpuExecutionPolicy policy;
        policy.num_threads = num_threads;
        policy.affinity = std::move(affinity);
        ThrowIfError(policy.Validate());
        const ExecutionDescriptor e = DescribeExecution(policy);
        nb::dict d;
        d["threads"] = e.threads;
        d["affinity"] = e.affinity;
        return d;
      },
      nb::arg("num_threads") = 0, nb::arg("affinity") = std::vector<int>{},
      "The execution descriptor of a CpuExecutionPolicy (effective threads, affinity).");
  m.def("x86_isa_level", &X86IsaLevel);
  m.def("aarch64_isa_level", &Aarch64IsaLevel);

  m.def("tuning_schemas", [] {
    ThrowIfError(KernelRegistry::Global().status());
    nb::list out;
    for (const auto& s : TuningSchemaRegistry::Global().All()) out.append(SchemaToDict(*s));
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
