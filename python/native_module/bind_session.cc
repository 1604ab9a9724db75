// Session bindings: the Python package walks an onnx ModelProto and builds a native Graph
// through these calls, then runs it. Values cross the boundary in a small encoded form
// (python/onnx_light/_values.py is the other half):
//   tensor   = (element type number, shape tuple, data)  data: 1-D uint8 array of the raw
//              element bytes (sub-byte types one byte each, as ml_dtypes stores them),
//              or a list of bytes for strings
//   sequence = list of values;  empty optional = None;  map = ("map", keys, values)
//   type     = None (unknown) | ("tensor", elem) | ("sequence", type) | ("optional", type)
//              | ("map", key elem, value type)
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "native/session/session.h"
#include "python/native_module/bindings.h"
#include "python/native_module/record.h"

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

// Read-only is fine: the session never writes to a borrowed buffer.
using ByteArray = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// Keeps a Python object alive for as long as a native tensor borrows its memory; the last
// owner may be released on a thread without the GIL (a session run), so take it.
std::shared_ptr<void> KeepAlive(nb::handle object) {
  object.inc_ref();
  return std::shared_ptr<void>(object.ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
}

DataType ElementType(int64_t number) {
  if (!IsValidDataType(static_cast<int32_t>(number)) || number == 0) {
    ThrowStatus(InvalidArgument("unsupported ONNX element type number ", number));
  }
  return static_cast<DataType>(number);
}

Shape ToShape(const std::vector<int64_t>& dims) {
  auto shape = Shape::Create(dims);
  ThrowIfError(shape.status());
  return *shape;
}

// The numpy dtype of the element types numpy has natively (the others travel as bytes and
// are viewed as ml_dtypes types in Python: _values.decode_array).
bool NumpyDtype(DataType type, nb::dlpack::dtype* out) {
  using Code = nb::dlpack::dtype_code;
  auto make = [&](Code code, int bits) {
    *out = nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
    return true;
  };
  switch (type) {
    case DataType::kFloat: return make(Code::Float, 32);
    case DataType::kDouble: return make(Code::Float, 64);
    case DataType::kFloat16: return make(Code::Float, 16);
    case DataType::kInt8: return make(Code::Int, 8);
    case DataType::kInt16: return make(Code::Int, 16);
    case DataType::kInt32: return make(Code::Int, 32);
    case DataType::kInt64: return make(Code::Int, 64);
    case DataType::kUint8: return make(Code::UInt, 8);
    case DataType::kUint16: return make(Code::UInt, 16);
    case DataType::kUint32: return make(Code::UInt, 32);
    case DataType::kUint64: return make(Code::UInt, 64);
    case DataType::kBool: return make(Code::Bool, 8);
    case DataType::kComplex64: return make(Code::Complex, 64);
    case DataType::kComplex128: return make(Code::Complex, 128);
    default: return false;
  }
}

// The element type of a numpy dtype that NumpyDtype gives (false for any other).
bool ElementTypeOfNumpy(const nb::dlpack::dtype& dtype, DataType* out) {
  for (int t = 1; t <= static_cast<int>(DataType::kFloat6E3M2); ++t) {
    nb::dlpack::dtype candidate;
    if (NumpyDtype(static_cast<DataType>(t), &candidate) && candidate == dtype) {
      *out = static_cast<DataType>(t);
      return true;
    }
  }
  return false;
}

using FeedArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// A feed that Python passed as the numpy array itself (a C-contiguous array of a numpy-native
// element type: _values.encode_array): borrowed, no copy, kept alive by the tensor.
Tensor TensorFromNumpy(nb::handle object) {
  FeedArray array;
  if (!nb::try_cast<FeedArray>(object, array, /*convert=*/false)) {
    ThrowStatus(InvalidArgument("a feed array must be a C-contiguous numpy array on the CPU"));
  }
  DataType type;
  if (!ElementTypeOfNumpy(array.dtype(), &type)) ThrowStatus(InvalidArgument("unsupported numpy element type"));
  std::vector<int64_t> dims(array.ndim());
  for (size_t i = 0; i < array.ndim(); ++i) dims[i] = static_cast<int64_t>(array.shape(i));
  Shape shape = ToShape(dims);
  auto expected = shape.CheckedByteSize(type);
  ThrowIfError(expected.status());
  if (static_cast<size_t>(*expected) != array.nbytes()) {
    ThrowStatus(InvalidArgument("tensor ", DataTypeName(type), shape.ToString(), " needs ", *expected, " bytes, got ",
                                array.nbytes()));
  }
  return Tensor::Borrow(type, std::move(shape), const_cast<void*>(array.data()), KeepAlive(object));
}

Tensor TensorFromPython(nb::handle encoded) {
  if (!nb::isinstance<nb::tuple>(encoded)) return TensorFromNumpy(encoded);
  auto parts = nb::cast<nb::tuple>(encoded);
  if (parts.size() != 3) ThrowStatus(InvalidArgument("malformed tensor encoding"));
  const DataType type = ElementType(nb::cast<int64_t>(parts[0]));
  Shape shape = ToShape(nb::cast<std::vector<int64_t>>(parts[1]));
  const int64_t n = shape.num_elements();
  if (type == DataType::kString) {
    auto items = nb::cast<std::vector<nb::bytes>>(parts[2]);
    if (static_cast<int64_t>(items.size()) != n) {
      ThrowStatus(InvalidArgument("string tensor of shape ", shape.ToString(), " has ", items.size(), " elements"));
    }
    auto t = Tensor::Allocate(type, shape, Allocator::Default());
    ThrowIfError(t.status());
    for (int64_t i = 0; i < n; ++i) t->data<std::string>()[i].assign(items[i].c_str(), items[i].size());
    return *t;
  }
  auto bytes = nb::cast<ByteArray>(parts[2]);
  auto expected = shape.CheckedByteSize(type);
  ThrowIfError(expected.status());
  if (bytes.size() != *expected) {
    ThrowStatus(InvalidArgument("tensor ", DataTypeName(type), shape.ToString(), " needs ", *expected,
                                " bytes, got ", bytes.size()));
  }
  return Tensor::Borrow(type, std::move(shape), const_cast<uint8_t*>(bytes.data()), KeepAlive(parts[2]));
}

Value ValueFromPython(nb::handle object) {
  if (object.is_none()) return Value::None();
  if (nb::isinstance<nb::list>(object)) {
    std::vector<Value> items;
    for (nb::handle item : nb::borrow<nb::list>(object)) items.push_back(ValueFromPython(item));
    return Value::Sequence(std::move(items));
  }
  if (!nb::isinstance<nb::tuple>(object)) return Value(TensorFromNumpy(object));
  auto parts = nb::cast<nb::tuple>(object);
  if (parts.size() == 3 && nb::isinstance<nb::str>(parts[0])) {
    return Value::Map(TensorFromPython(parts[1]), TensorFromPython(parts[2]));
  }
  return Value(TensorFromPython(object));
}

// A tensor as Python sees it: a numpy array of its own dtype and shape when numpy has the
// element type (no Python-side decoding on the run's path), else the encoded tuple
// (element type, shape, bytes or list of bytes) that _values.decode_array turns into one.
nb::object TensorToPython(const Tensor& t) {
  nb::dlpack::dtype native_dtype;
  if (NumpyDtype(t.dtype(), &native_dtype)) {
    const auto& dims = t.shape().dims();
    std::vector<size_t> shape(dims.begin(), dims.end());
    const size_t bytes = t.byte_size();
    void* data;
    nb::capsule owner;
    if (t.OwnsBufferExclusively() && bytes > 0) {
      // No copy: nothing else can see the buffer (Session::Run hands out only such
      // tensors), so numpy takes it over; it returns to its allocator when the array dies.
      auto* owned = new Tensor(t);
      owner = nb::capsule(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
      data = owned->raw_data();
    } else {
      // Shared with something that outlives this call (an initializer, a feed, ...): copy.
      auto* copy = new uint8_t[bytes > 0 ? bytes : 1];
      if (bytes > 0) std::memcpy(copy, t.raw_data(), bytes);
      owner = nb::capsule(copy, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
      data = copy;
    }
    return nb::cast(nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr, native_dtype));
  }
  nb::tuple shape = nb::tuple(nb::cast(t.shape().dims()));
  if (t.dtype() == DataType::kString) {
    nb::list items;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const std::string& s = t.data<std::string>()[i];
      items.append(nb::bytes(s.data(), s.size()));
    }
    return nb::make_tuple(static_cast<int>(t.dtype()), shape, items);
  }
  const size_t bytes = t.byte_size();
  size_t dims[1] = {bytes};
  nb::object data;
  if (t.OwnsBufferExclusively() && bytes > 0) {
    // No copy: nothing else can see the buffer (Session::Run hands out only such tensors),
    // so numpy takes it over; it returns to its allocator when the array dies.
    auto* owned = new Tensor(t);
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
    data = nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(owned->raw_data(), 1, dims, owner));
  } else {
    // Shared with something that outlives this call (an initializer, a feed, ...): copy.
    auto* copy = new uint8_t[bytes > 0 ? bytes : 1];
    if (bytes > 0) std::memcpy(copy, t.raw_data(), bytes);
    nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
    data = nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(copy, 1, dims, owner));
  }
  return nb::make_tuple(static_cast<int>(t.dtype()), shape, data);
}

nb::object ValueToPython(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNone: return nb::none();
    case Value::Kind::kTensor: return TensorToPython(value.tensor());
    case Value::Kind::kSequence: {
      nb::list items;
      for (const Value& item : value.items()) items.append(ValueToPython(item));
      return items;
    }
    case Value::Kind::kMap:
      return nb::make_tuple("map", TensorToPython(value.map_keys()), TensorToPython(value.map_values()));
  }
  return nb::none();
}

TypeDescription TypeFromPython(nb::handle object) {
  TypeDescription type;
  if (object.is_none()) return type;
  auto parts = nb::cast<nb::tuple>(object);
  const std::string kind = nb::cast<std::string>(parts[0]);
  if (kind == "tensor") {
    type.kind = TypeDescription::Kind::kTensor;
    const int64_t elem = nb::cast<int64_t>(parts[1]);
    type.element_type = elem == 0 ? DataType::kUndefined : ElementType(elem);
  } else if (kind == "sequence" || kind == "optional") {
    type.kind = kind == "sequence" ? TypeDescription::Kind::kSequence : TypeDescription::Kind::kOptional;
    type.inner = std::make_shared<TypeDescription>(TypeFromPython(parts[1]));
    type.element_type = type.inner->element_type;
  } else if (kind == "map") {
    type.kind = TypeDescription::Kind::kMap;
    type.element_type = ElementType(nb::cast<int64_t>(parts[1]));
    type.inner = std::make_shared<TypeDescription>(TypeFromPython(parts[2]));
  }
  return type;
}

ValueInfo ValueInfoFromPython(const std::string& name, nb::handle type, nb::handle dims) {
  ValueInfo info;
  info.name = name;
  info.type = TypeFromPython(type);
  if (!dims.is_none()) {
    info.has_shape = true;
    info.dims = nb::cast<std::vector<int64_t>>(dims);
  }
  return info;
}

Attribute AttributeFromPython(const std::string& name, int type_number, nb::handle value) {
  using T = Attribute::Type;
  Attribute a;
  a.name = name;
  a.type = static_cast<T>(type_number);
  switch (a.type) {
    case T::kFloat: a.f = nb::cast<float>(value); break;
    case T::kInt: a.i = nb::cast<int64_t>(value); break;
    case T::kString: a.s = nb::cast<std::string>(nb::str(value)); break;
    case T::kTensor:
    case T::kSparseTensor: a.t = TensorFromPython(value); break;  // sparse arrives densified
    case T::kGraph: a.g = nb::cast<std::shared_ptr<Graph>>(value); break;
    case T::kFloats: a.floats = nb::cast<std::vector<float>>(value); break;
    case T::kInts: a.ints = nb::cast<std::vector<int64_t>>(value); break;
    case T::kStrings: a.strings = nb::cast<std::vector<std::string>>(value); break;
    case T::kTensors:
    case T::kSparseTensors:
      for (nb::handle item : nb::borrow<nb::list>(value)) a.tensors.push_back(TensorFromPython(item));
      break;
    case T::kGraphs:
      for (nb::handle item : nb::borrow<nb::list>(value)) a.graphs.push_back(nb::cast<std::shared_ptr<Graph>>(item));
      break;
    case T::kTypeProto: a.tp = TypeFromPython(value); break;
    default: ThrowStatus(InvalidArgument("attribute '", name, "' has unsupported type ", type_number));
  }
  return a;
}

// RunOptions: terminate (settable from another thread) and a timeout.
struct PyRunOptions {
  std::shared_ptr<CancellationToken> token = std::make_shared<CancellationToken>();
  bool terminate = false;
  double timeout_seconds = 0;
};

std::vector<nb::object> RunSession(const Session& session, nb::list feeds, const std::vector<std::string>& outputs,
                                   PyRunOptions* py_options, EventCollector* events) {
  // Workers parked since the last run start waking now, while the feeds are converted
  // (Session::Run asks again; by then it costs one load).
  session.PrepareWorkers();
  std::vector<std::pair<std::string, Value>> native_feeds;
  native_feeds.reserve(feeds.size());
  for (nb::handle item : feeds) {
    auto pair = nb::cast<nb::tuple>(item);
    native_feeds.emplace_back(nb::cast<std::string>(pair[0]), ValueFromPython(pair[1]));
  }
  RunOptions options;
  options.events = events;
  // A fresh token per run unless the caller gave options: terminate and the deadline are
  // read by the run; terminate may also be set while it runs.
  CancellationToken local;
  if (py_options != nullptr) {
    CancellationToken* token = py_options->token.get();
    token->Reset();
    if (py_options->terminate) token->Cancel();
    if (py_options->timeout_seconds > 0) token->SetTimeout(py_options->timeout_seconds);
    options.cancellation = token;
  }
  StatusOr<std::vector<Value>> result = Status::Ok();
  {
    nb::gil_scoped_release release;
    result = session.Run(native_feeds, outputs, options);
    native_feeds.clear();  // borrowed feed tensors are released here, without the GIL
  }
  ThrowIfError(result.status());
  std::vector<nb::object> out;
  out.reserve(result->size());
  for (const Value& v : *result) out.push_back(ValueToPython(v));
  return out;
}

}  // namespace

void BindSession(nb::module_& m) {
  nb::class_<CpuExecutionPolicy>(m, "CpuExecutionPolicy",
                                 "How a session may use the CPU: num_threads (0 = one per physical core, "
                                 "1 = serial), spin_microseconds, affinity (CPU ids, empty = no pinning), "
                                 "join_wait_microseconds (a region's caller waits this long for its workers "
                                 "to join: 0 for serving; the forced-parallel test policy sets it).")
      .def(
          "__init__",
          [](CpuExecutionPolicy* p, int num_threads, int64_t spin_microseconds, nb::object affinity,
             int64_t join_wait_microseconds) {
            new (p) CpuExecutionPolicy();
            p->num_threads = num_threads;
            p->spin_microseconds = spin_microseconds;
            if (!affinity.is_none()) p->affinity = nb::cast<std::vector<int>>(affinity);
            p->join_wait_microseconds = join_wait_microseconds;
            ThrowIfError(p->Validate());
          },
          nb::arg("num_threads") = 0, nb::arg("spin_microseconds") = CpuExecutionPolicy().spin_microseconds,
          nb::arg("affinity") = nb::none(), nb::arg("join_wait_microseconds") = 0)
      .def_ro("num_threads", &CpuExecutionPolicy::num_threads)
      .def_ro("join_wait_microseconds", &CpuExecutionPolicy::join_wait_microseconds)
      .def_ro("spin_microseconds", &CpuExecutionPolicy::spin_microseconds)
      .def_ro("affinity", &CpuExecutionPolicy::affinity)
      .def("effective_threads", &CpuExecutionPolicy::EffectiveThreads)
      .def("__repr__", [](const CpuExecutionPolicy& p) { return "CpuExecutionPolicy(" + p.Key() + ")"; });

  nb::class_<PyRunOptions>(m, "RunOptions",
                           "Per-run options: terminate (set True, even from another thread, to cancel a "
                           "running run) and timeout_seconds (0 = none).")
      .def(nb::init<>())
      .def_prop_rw(
          "terminate", [](const PyRunOptions& o) { return o.terminate; },
          [](PyRunOptions& o, bool value) {
            o.terminate = value;
            if (value) o.token->Cancel();
          })
      .def_prop_rw(
          "timeout_seconds", [](const PyRunOptions& o) { return o.timeout_seconds; },
          [](PyRunOptions& o, double value) {
            if (!(value >= 0) || !std::isfinite(value)) {
              ThrowStatus(InvalidArgument("timeout_seconds must be a finite number >= 0, got ", value));
            }
            o.timeout_seconds = value;
          });

  nb::class_<Graph>(m, "Graph", "A model graph under construction (see onnx_light/_model.py).")
      .def(nb::init<>())
      .def_rw("name", &Graph::name)
      .def("set_opset", [](Graph& g, const std::string& domain, int version) {
        g.opset_imports[Graph::CanonicalDomain(domain)] = version;
      })
      .def("add_input", [](Graph& g, const std::string& name, nb::handle type, nb::handle dims) {
        g.inputs.push_back(ValueInfoFromPython(name, type, dims));
      }, nb::arg("name"), nb::arg("type").none(), nb::arg("dims").none())
      .def("add_output", [](Graph& g, const std::string& name, nb::handle type, nb::handle dims) {
        g.outputs.push_back(ValueInfoFromPython(name, type, dims));
      }, nb::arg("name"), nb::arg("type").none(), nb::arg("dims").none())
      .def("add_value_info", [](Graph& g, const std::string& name, nb::handle type, nb::handle dims) {
        g.value_types[name] = ValueInfoFromPython(name, type, dims);
      }, nb::arg("name"), nb::arg("type").none(), nb::arg("dims").none())
      .def("add_initializer", [](Graph& g, const std::string& name, nb::handle tensor) {
        // A second initializer of the same name would silently replace the first.
        if (g.initializers.count(name)) {
          ThrowStatus(InvalidArgument("graph '", g.name, "': initializer '", name, "' is defined twice"));
        }
        g.initializers[name] = TensorFromPython(tensor);
      })
      .def("add_node", [](Graph& g, const std::string& op, const std::string& domain, const std::string& name,
                          std::vector<std::string> inputs, std::vector<std::string> outputs, nb::list attributes) {
        Node node;
        node.op = op;
        node.domain = Graph::CanonicalDomain(domain);
        node.name = name;
        node.inputs = std::move(inputs);
        node.outputs = std::move(outputs);
        for (nb::handle item : attributes) {
          auto a = nb::cast<nb::tuple>(item);
          const std::string attr_name = nb::cast<std::string>(a[0]);
          node.attributes[attr_name] = AttributeFromPython(attr_name, nb::cast<int>(a[1]), a[2]);
        }
        g.nodes.push_back(std::move(node));
      });

  Record<NodeEvent>(m, "NodeEvent", "One node of a run: its time and what it allocated.")
      .Field("op", &NodeEvent::op)
      .Field("node", &NodeEvent::node)
      .Field("duration_ns", &NodeEvent::duration_ns)
      .Field("allocations", &NodeEvent::allocations)
      .Field("bytes_allocated", &NodeEvent::bytes_allocated)
      .Field("copies", &NodeEvent::copies)
      .Field("peak_scratch_bytes", &NodeEvent::peak_scratch_bytes);

  Record<ConstantMemory>(m, "ConstantMemory",
                         "A session's constant memory: initializers retained and released (every consumer "
                         "absorbed them), those consumed while packed, and what the absorbing kernels hold in their place.")
      .Field("retained_bytes", &ConstantMemory::retained_bytes)
      .Field("released_bytes", &ConstantMemory::released_bytes)
      .Field("released_initializers", &ConstantMemory::released_initializers)
      .Field("absorbed_held_bytes", &ConstantMemory::absorbed_held_bytes)
      .Field("consumed_initializers", &ConstantMemory::consumed_initializers);

  Record<TuningValueReport>(m, "TuningValueReport", "One resolved tuning value of one node's kernel, and its source.")
      .Field("node", &TuningValueReport::node)
      .Field("schema", &TuningValueReport::schema)
      .Field("parameter", &TuningValueReport::parameter)
      .Field("value", &TuningValueReport::value)
      .Field("source", [](const TuningValueReport& r) { return std::string(ValueSourceName(r.source)); });

  nb::class_<Session>(m, "Session")
      .def_static(
          "create",
          [](Graph& graph, const CpuExecutionPolicy& policy, std::shared_ptr<TuningSource> tuning_source,
             int64_t memory_limit_bytes) {
            SessionOptions options;
            options.memory_limit_bytes = memory_limit_bytes;
            StatusOr<std::unique_ptr<Session>> session = Status::Ok();
            {
              nb::gil_scoped_release release;
              // Given over: the initializers the kernels absorb are freed while the session
              // is created (session.h), not held on by this Graph object.
              session = Session::Create(std::move(graph), policy, std::move(tuning_source), options);
              graph = Graph();
            }
            ThrowIfError(session.status());
            return std::move(session).value();
          },
          nb::arg("graph"), nb::arg("policy"), nb::arg("tuning_source").none(), nb::arg("memory_limit_bytes") = 0,
          "Creates a session from `graph`, which it takes over (the Graph object is left empty).")
      .def(
          "run",
          [](const Session& s, nb::list feeds, const std::vector<std::string>& outputs, PyRunOptions* options) {
            return RunSession(s, feeds, outputs, options, nullptr);
          },
          nb::arg("feeds"), nb::arg("output_names"), nb::arg("run_options").none())
      .def(
          "run_with_events",
          [](const Session& s, nb::list feeds, const std::vector<std::string>& outputs, PyRunOptions* options) {
            EventCollector events;
            std::vector<nb::object> values = RunSession(s, feeds, outputs, options, &events);
            return std::make_tuple(std::move(values), events.nodes(), events.regions());
          },
          nb::arg("feeds"), nb::arg("output_names"), nb::arg("run_options").none(),
          "As run, also returning (node events, region events).")
      .def("tuning_report", &Session::TuningReport,
           "For every kernel instance: node, schema, parameter, value and where the value came from.")
      .def("memory", &Session::memory, "The session allocator's counters.")
      .def("constant_memory", &Session::constant_memory,
           "Initializer bytes retained and released, and what absorbing kernels hold in their place.")
      .def_prop_ro("policy", &Session::policy)
      .def_prop_ro("memory_limit_bytes", &Session::memory_limit_bytes);
}

}  // namespace onnx_light::python
