// Native model loading (native/loader/model_loader.h) for InferenceSession: the skeleton
// (the model without its large weights) goes to Python's onnx package for validation,
// shape inference and rewrites; the weights stay native, borrowed where parsing or mmap put
// them, and enter the Graph by name.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "native/loader/model_loader.h"
#include "native/graph/graph.h"
#include "python/native_module/bindings.h"

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

const Tensor& Find(const LoadedModel& loaded, const std::string& name) {
  auto it = loaded.initializers.find(name);
  if (it == loaded.initializers.end()) {
    ThrowStatus(InvalidArgument("the loaded model holds no initializer '", name, "'"));
  }
  return it->second;
}

LoadOptions Options(int64_t min_elements) {
  if (min_elements < 0) ThrowStatus(InvalidArgument("min_elements must be >= 0, got ", min_elements));
  LoadOptions options;
  options.min_elements = min_elements;
  return options;
}

}  // namespace

void BindLoader(nb::module_& m) {
  nb::class_<LoadedModel>(m, "LoadedModel",
                          "A model parsed natively: skeleton (serialized ModelProto without its large "
                          "initializers' payloads) and those initializers, held natively.")
      .def_prop_ro("skeleton", [](const LoadedModel& l) { return nb::bytes(l.skeleton.data(), l.skeleton.size()); })
      .def("names",
           [](const LoadedModel& l) {
             std::vector<std::string> names;
             for (const auto& [name, tensor] : l.initializers) names.push_back(name);
             return names;
           })
      .def("__contains__", [](const LoadedModel& l, const std::string& name) { return l.initializers.count(name) > 0; })
      .def("__len__", [](const LoadedModel& l) { return l.initializers.size(); })
      .def(
          "describe",
          [](const LoadedModel& l, const std::string& name) {
            const Tensor& t = Find(l, name);
            return std::make_tuple(static_cast<int>(t.dtype()), t.shape().dims());
          },
          "(ONNX element type number, dims) of a held initializer.")
      .def(
          "bytes_view",
          [](const LoadedModel& l, const std::string& name) {
            const Tensor& t = Find(l, name);
            if (t.raw_data() == nullptr && t.byte_size() > 0) {
              ThrowStatus(InvalidArgument("the payload of initializer '", name,
                                          "' was released (release_payloads): load the model again"));
            }
            auto* owner = new Tensor(t);  // shares the buffer's keep-alive
            nb::capsule keep(owner, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
            const size_t shape[1] = {t.byte_size()};
            return nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>>(static_cast<const uint8_t*>(t.raw_data()), 1,
                                                                      shape, keep);
          },
          "The initializer's bytes as a read-only uint8 array (no copy).")
      .def(
          "add_to_graph",
          [](const LoadedModel& l, Graph& g, const std::string& name) {
            if (g.initializers.count(name)) {
              ThrowStatus(InvalidArgument("graph '", g.name, "': initializer '", name, "' is defined twice"));
            }
            g.initializers[name] = Find(l, name);
          },
          "Adds the held initializer `name` to graph g, borrowed (no copy).")
      .def(
          "release_payloads",
          [](LoadedModel& l) {
            for (auto& [name, tensor] : l.initializers) {
              tensor = Tensor::Borrow(tensor.dtype(), tensor.shape(), nullptr);
            }
          },
          "Drops this object's hold on every payload (names, types and shapes stay): once a session "
          "has the weights, they live as long as it needs them, not as long as this object.");
  m.def(
      "load_model_file",
      [](const std::string& path, int64_t min_elements) {
        const LoadOptions options = Options(min_elements);
        StatusOr<LoadedModel> loaded = [&] {
          nb::gil_scoped_release release;
          return LoadModelFile(path, options);
        }();
        ThrowIfError(loaded.status());
        return std::move(*loaded);
      },
      nb::arg("path"), nb::arg("min_elements"),
      "Parses an ONNX model file natively; initializers above min_elements stay native.");
  m.def(
      "load_model_bytes",
      [](nb::bytes data, const std::string& base_dir, int64_t min_elements) {
        const LoadOptions options = Options(min_elements);
        StatusOr<LoadedModel> loaded = [&] {
          nb::gil_scoped_release release;
          return LoadModelBytes(std::string_view(data.c_str(), data.size()), base_dir, options);
        }();
        ThrowIfError(loaded.status());
        return std::move(*loaded);
      },
      nb::arg("data"), nb::arg("base_dir"), nb::arg("min_elements"),
      "Parses a serialized ONNX model natively (external data resolved in base_dir).");
}

}  // namespace onnx_light::python
