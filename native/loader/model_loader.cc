#include "native/loader/model_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "native/loader/onnx-ml.pb.h"

namespace onnx_light {
namespace {

// Reads a file descriptor for protobuf's CopyingInputStreamAdaptor (the lite runtime has no
// FileInputStream): the model is parsed in 1 MiB chunks, never held whole.
class FdStream : public google::protobuf::io::CopyingInputStream {
 public:
  explicit FdStream(int fd) : fd_(fd) {}
  int Read(void* buffer, int size) override {
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, static_cast<size_t>(size));
      if (n < 0 && errno == EINTR) continue;
      return n < 0 ? -1 : static_cast<int>(n);
    }
  }

 private:
  int fd_;
};

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// A whole file mapped read-only, unmapped with the last tensor that borrows it.
struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base != nullptr && size > 0) ::munmap(base, size);
  }
};

// Gives back the resident pages of [data, data + bytes) inside a private read-only file
// mapping: only the whole pages inside the range (the partial pages at its ends may hold a
// neighbour's bytes, which stay). The pages were never written, so whatever reads them
// again (another tensor over the same bytes) faults them back in from the file: this
// changes the process's resident memory, never what a read returns.
void ReleaseMappedPages(const uint8_t* data, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// What keeps one external tensor's bytes alive: the mapping of its file, and the range it
// borrows. When the last tensor borrowing the range is gone (the session released the
// initializer once its kernels packed it), the range's pages are given back at once rather
// than when the whole file is unmapped: a model's weights are not resident twice (mapped
// and packed) while the session is created.
struct MappedRange {
  std::shared_ptr<Mapping> mapping;
  const uint8_t* data = nullptr;
  size_t bytes = 0;
  ~MappedRange() { ReleaseMappedPages(data, bytes); }
};

// Element types whose raw_data (and external data) is the tensor's native little-endian
// layout, one whole number of bytes per element. Strings, and the sub-byte types (packed
// two or four to a byte, decoded on the Python path), stay in the skeleton.
bool BorrowableType(DataType type) {
  switch (type) {
    case DataType::kFloat:
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kBool:
    case DataType::kFloat16:
    case DataType::kDouble:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
      return true;
    default:
      return false;
  }
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string RealPath(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return "";
  std::string result(resolved);
  std::free(resolved);
  return result;
}

class Loader {
 public:
  Loader(std::string where, std::string base_dir, const LoadOptions& options)
      : where_(std::move(where)), base_dir_(std::move(base_dir)), options_(options) {}

  Status Load(onnx::ModelProto& model, LoadedModel* out) {
    onnx::GraphProto* graph = model.mutable_graph();
    for (int i = 0; i < graph->initializer_size(); ++i) {
      onnx::TensorProto& t = *graph->mutable_initializer(i);
      std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
      const int32_t type_number = t.data_type();
      if (!IsValidDataType(type_number) || type_number == 0) continue;  // Python names the error
      const DataType type = static_cast<DataType>(type_number);
      bool negative = false;
      for (int64_t d : dims) negative = negative || d < 0;
      if (negative) continue;  // Python rejects it with the tensor's name
      const Shape shape(dims);
      StatusOr<size_t> checked = shape.CheckedByteSize(type);
      if (!checked.ok()) {
        return InvalidArgument(where_, ": initializer '", t.name(), "' of shape ", shape.ToString(), " and type ",
                               DataTypeName(type), " has a size that overflows");
      }
      const size_t bytes = *checked;
      const bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
      const bool large = shape.num_elements() > options_.min_elements;
      if (!BorrowableType(type) || (!large && !external)) continue;
      if (!external && !t.has_raw_data()) continue;  // typed fields: the Python path decodes them
      if (!external) {
        if (t.raw_data().size() != bytes) {
          return InvalidArgument(where_, ": initializer '", t.name(), "' (", DataTypeName(type), shape.ToString(),
                                 ") has ", t.raw_data().size(), " bytes of raw_data, expected ", bytes);
        }
        // Each payload is kept alive by the tensors that borrow it alone, so a session that
        // drops one initializer frees its bytes.
        std::shared_ptr<std::string> payload(t.release_raw_data());
        out->initializers.emplace(t.name(), Tensor::Borrow(type, shape, payload->data(), payload));
        continue;
      }
      OL_ASSIGN_OR_RETURN(const uint8_t* data, ExternalData(t, bytes));
      if (!large || reinterpret_cast<uintptr_t>(data) % ElementSize(type) != 0) {
        if (!large) {
          t.set_raw_data(data, bytes);  // small: inlined, for shape inference
        } else {
          auto copy = std::make_shared<std::string>(reinterpret_cast<const char*>(data), bytes);
          out->initializers.emplace(t.name(), Tensor::Borrow(type, shape, copy->data(), copy));
          ReleaseMappedPages(data, bytes);  // read once, for the copy
        }
      } else {
        auto range = std::make_shared<MappedRange>(MappedRange{last_mapping_, data, bytes});
        out->initializers.emplace(t.name(), Tensor::Borrow(type, shape, const_cast<uint8_t*>(data), range));
      }
      t.clear_external_data();
      t.clear_data_location();
    }
    if (!model.SerializeToString(&out->skeleton)) {
      return InvalidArgument(where_, ": the model cannot be serialized again (over 2 GiB without its weights?)");
    }
    return Status::Ok();
  }

 private:
  // The bytes of an external tensor, in a mapping of its file (kept in last_mapping_).
  StatusOr<const uint8_t*> ExternalData(const onnx::TensorProto& t, size_t bytes) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const onnx::StringStringEntryProto& entry : t.external_data()) {
      char* end = nullptr;
      if (entry.key() == "location") {
        location = entry.value();
      } else if (entry.key() == "offset" || entry.key() == "length") {
        errno = 0;
        const long long value = std::strtoll(entry.value().c_str(), &end, 10);
        if (errno != 0 || end == entry.value().c_str() || *end != '\0' || value < 0) {
          return InvalidArgument(where_, ": initializer '", t.name(), "' has external data ", entry.key(), " '",
                                 entry.value(), "', not a non-negative integer");
        }
        (entry.key() == "offset" ? offset : length) = value;
      }
    }
    if (location.empty()) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' is stored externally but names no location");
    }
    if (length >= 0 && static_cast<size_t>(length) != bytes) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' has external data of length ", length,
                             ", expected ", bytes, " for its type and shape");
    }
    OL_ASSIGN_OR_RETURN(std::shared_ptr<Mapping> mapping, Map(location, t.name()));
    if (static_cast<uint64_t>(offset) > mapping->size || bytes > mapping->size - static_cast<size_t>(offset)) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' reads ", bytes, " bytes at offset ", offset,
                             " of '", location, "', which has ", mapping->size, " bytes");
    }
    last_mapping_ = mapping;
    return static_cast<const uint8_t*>(mapping->base) + offset;
  }

  // The mapping of `location`, relative to the model's folder and inside it.
  StatusOr<std::shared_ptr<Mapping>> Map(const std::string& location, const std::string& tensor) {
    if (base_dir_.empty()) {
      return InvalidArgument(where_, ": initializer '", tensor, "' is stored in external file '", location,
                             "', but the model was given as bytes: load it from its path");
    }
    const std::string folder = RealPath(base_dir_);
    const std::string file = location.empty() || location[0] == '/' ? "" : RealPath(base_dir_ + "/" + location);
    if (folder.empty() || file.empty() || file.compare(0, folder.size() + 1, folder + "/") != 0) {
      return InvalidArgument(where_, ": initializer '", tensor, "' is stored in external file '", location,
                             "', which does not exist inside the model's folder '", base_dir_, "'");
    }
    auto found = mappings_.find(file);
    if (found != mappings_.end()) return found->second;
    FileDescriptor fd{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
    struct stat st;
    if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      return InvalidArgument(where_, ": external data file '", location, "' of initializer '", tensor,
                             "' cannot be read: ", std::strerror(errno));
    }
    auto mapping = std::make_shared<Mapping>();
    mapping->size = static_cast<size_t>(st.st_size);
    if (mapping->size > 0) {
      void* base = ::mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
      if (base == MAP_FAILED) {
        return ResourceExhausted(where_, ": cannot map external data file '", location, "' (", mapping->size,
                                 " bytes): ", std::strerror(errno));
      }
      mapping->base = base;
    }
    mappings_.emplace(file, mapping);
    return mapping;
  }

  std::string where_, base_dir_;
  LoadOptions options_;
  std::map<std::string, std::shared_ptr<Mapping>> mappings_;
  std::shared_ptr<Mapping> last_mapping_;
};

}  // namespace

StatusOr<LoadedModel> LoadModelFile(const std::string& path, const LoadOptions& options) {
  const std::string where = "model '" + path + "'";
  FileDescriptor fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st;
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) {
    return InvalidArgument(where, " cannot be opened: ", std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(where, " is not a regular file");
  onnx::ModelProto model;
  {
    FdStream stream(fd.fd);
    google::protobuf::io::CopyingInputStreamAdaptor input(&stream, 1 << 20);
    if (!model.ParseFromZeroCopyStream(&input)) {
      return InvalidArgument(where, " is not an ONNX model (the protobuf does not parse)");
    }
  }
  LoadedModel out;
  OL_RETURN_IF_ERROR(Loader(where, Dirname(path), options).Load(model, &out));
  return out;
}

StatusOr<LoadedModel> LoadModelBytes(std::string_view bytes, const std::string& base_dir, const LoadOptions& options) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return InvalidArgument("the bytes (", bytes.size(), ") exceed protobuf's 2 GiB limit: store weights externally");
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument("the bytes are not a serialized ONNX model (the protobuf does not parse)");
  }
  LoadedModel out;
  OL_RETURN_IF_ERROR(Loader("the model bytes", base_dir, options).Load(model, &out));
  return out;
}

}  // namespace onnx_light
