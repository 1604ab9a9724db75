// Native model loading (native/loader/model_loader.h) for InferenceSession: the skeleton
// (the model without its large weights) goes to Python's onnx package for validation,
// shape inference and rewrites; the weights stay native, read from the files into blocks of
// their own (or borrowed from the bytes given), and enter the Graph by name.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "native/core/page_policy.h"
#include "native/graph/graph.h"
#include "native/loader/model_loader.h"
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

// An owner that keeps a Python bytes object alive for tensors borrowing its buffer; its
// last holder may be any thread (a session releasing an initializer), so the reference is
// dropped under the GIL, and not at all once the interpreter is gone.
std::shared_ptr<const void> KeepAlive(nb::bytes data) {
  auto* held = new nb::object(data);
  return std::shared_ptr<const void>(held, [](const void* p) {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    delete static_cast<nb::object*>(const_cast<void*>(p));
  });
}

LoadOptions Options(int64_t min_elements, int64_t hash_files_newer_than_ns) {
  if (min_elements < 0) ThrowStatus(InvalidArgument("min_elements must be >= 0, got ", min_elements));
  LoadOptions options;
  options.min_elements = min_elements;
  options.hash_files_newer_than_ns = hash_files_newer_than_ns;
  return options;
}

}  // namespace

void BindLoader(nb::module_& m) {
  nb::class_<LoadedModel>(m, "LoadedModel",
                          "A model parsed natively: skeleton (serialized ModelProto without its large "
                          "initializers' payloads) and those initializers, held natively.")
      .def_prop_ro("skeleton", [](const LoadedModel& l) { return nb::bytes(l.skeleton.data(), l.skeleton.size()); })
      .def_prop_ro(
          "source_files",
          [](const LoadedModel& l) {
            nb::list files;
            for (const SourceFile& f : l.source_files) {
              files.append(nb::make_tuple(f.path, f.size, f.device, f.inode, f.mtime_ns, f.ctime_ns,
                                          f.hashed ? nb::cast(f.content_hash) : nb::object(nb::none())));
            }
            return files;
          },
          "(path, size, device, inode, mtime_ns, ctime_ns, fingerprint or None) of every file the load read: "
          "the model file, then its external data files (model_loader.h, SourceFile); a fingerprint for "
          "recently written files (equal fingerprints: equal bytes), for pickling's check.")
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
      [](const std::string& path, int64_t min_elements, int64_t hash_files_newer_than_ns) {
        const LoadOptions options = Options(min_elements, hash_files_newer_than_ns);
        StatusOr<LoadedModel> loaded = [&] {
          nb::gil_scoped_release release;
          return LoadModelFile(path, options);
        }();
        ThrowIfError(loaded.status());
        return std::move(*loaded);
      },
      nb::arg("path"), nb::arg("min_elements"),
      nb::arg("hash_files_newer_than_ns") = LoadOptions().hash_files_newer_than_ns,
      "Parses an ONNX model file natively; initializers above min_elements stay native. Files written "
      "less than hash_files_newer_than_ns before the load (-1: all) are fingerprinted (source_files).");
  m.def(
      "load_model_bytes",
      [](nb::bytes data, const std::string& base_dir, int64_t min_elements, bool borrow,
         int64_t hash_files_newer_than_ns) {
        const LoadOptions options = Options(min_elements, hash_files_newer_than_ns);
        std::shared_ptr<const void> owner = borrow ? KeepAlive(data) : nullptr;
        StatusOr<LoadedModel> loaded = [&] {
          nb::gil_scoped_release release;
          return LoadModelBytes(std::string_view(data.c_str(), data.size()), base_dir, options, std::move(owner));
        }();
        ThrowIfError(loaded.status());
        return std::move(*loaded);
      },
      nb::arg("data"), nb::arg("base_dir"), nb::arg("min_elements"), nb::arg("borrow") = false,
      nb::arg("hash_files_newer_than_ns") = LoadOptions().hash_files_newer_than_ns,
      "Parses a serialized ONNX model natively (external data resolved in base_dir). With borrow, the "
      "large initializers are read in place from `data`, which they keep alive (no copy); else copied.");
  m.def(
      "constant_page_policy", [] { return ConstantPagePolicy().ToString(); },
      "How fresh large blocks of packed weights meet transparent huge pages (native/core/page_policy.h): "
      "'huge', 'system' or 'small', optionally with '+prefault'. ONNX_LIGHT_CONSTANT_PAGES sets it when the extension "
      "loads.");
  m.def(
      "set_constant_page_policy",
      [](const std::string& text) {
        StatusOr<PagePolicy> policy = PagePolicy::Parse(text);
        ThrowIfError(policy.status());
        SetConstantPagePolicy(*policy);
      },
      nb::arg("policy"),
      "Sets the page policy of packed weights allocated from now on (constant_page_policy names them); "
      "InvalidArgument for another name.");
}

}  // namespace onnx_light::python
