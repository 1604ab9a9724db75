#include "native/loader/model_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "native/core/allocator.h"
#include "native/loader/content_hash.h"
#include "native/loader/onnx-ml.pb.h"

namespace onnx_light {

namespace {

// Reads a file descriptor for protobuf's CopyingInputStreamAdaptor (the lite runtime has no
// FileInputStream): the model is parsed in 1 MiB chunks, never held whole.
// Fingerprints what it reads (`hasher`, unless null).
class FdStream : public google::protobuf::io::CopyingInputStream {
 public:
  FdStream(int fd, ContentHasher* hasher) : fd_(fd), hasher_(hasher) {}
  int Read(void* buffer, int size) override {
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, static_cast<size_t>(size));
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        if (hasher_ != nullptr) hasher_->Update(buffer, static_cast<size_t>(n));
        bytes_read_ += static_cast<size_t>(n);
      }
      return n < 0 ? -1 : static_cast<int>(n);
    }
  }
  size_t bytes_read() const { return bytes_read_; }

 private:
  int fd_;
  ContentHasher* hasher_;
  size_t bytes_read_ = 0;
};

int64_t NowNanoseconds() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// What `st` says of the file at `path`; `hashed` is whether its bytes need a fingerprint
// (LoadOptions::hash_files_newer_than_ns), which the caller then sets.
SourceFile Describe(const std::string& path, const struct stat& st, const LoadOptions& options, int64_t started_ns) {
  SourceFile f;
  f.path = path;
  f.size = static_cast<uint64_t>(st.st_size);
  f.device = static_cast<uint64_t>(st.st_dev);
  f.inode = static_cast<uint64_t>(st.st_ino);
  f.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  f.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
  const int64_t recent = started_ns - options.hash_files_newer_than_ns;
  f.hashed = options.hash_files_newer_than_ns < 0 || f.mtime_ns >= recent || f.ctime_ns >= recent;
  return f;
}

// The fingerprint of the file open at `fd`, read with pread in 1 MiB chunks rather than
// through its mapping: touching every mapped page would make the whole file resident in
// this process at once (the weights' ranges give their pages back one by one as they are
// packed) and add page-table work to each release. Nothing if a read fails.
std::optional<uint64_t> HashFile(int fd, size_t size) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[kChunk]);
  ContentHasher hasher;
  for (size_t at = 0; at < size;) {
    const ssize_t n = ::pread(fd, buffer.get(), std::min(kChunk, size - at), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    hasher.Update(buffer.get(), static_cast<size_t>(n));
    at += static_cast<size_t>(n);
  }
  return hasher.Finish();
}

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// `size` bytes of fresh private anonymous memory, 2 MiB aligned and advised to take
// transparent huge pages (MADV_HUGEPAGE; the system may still refuse them): the copy of a
// model file is written once, whole, so its first touch costs a fault per 2 MiB rather than
// per 4 KiB page, which on this kind of VM is most of the copy's cost (48 MiB: about 75 ms
// with 4 KiB pages, 17-24 ms with huge pages, 15-18 ms to fault a file mapping in; h105's
// microbenchmark, load 7). Unmapped with munmap(base, size).
// With `huge` false, 4 KiB pages (MADV_NOHUGEPAGE): for a copy with holes left untouched,
// which a huge page would fill with zeroes.
StatusOr<void*> HugePageMemory(size_t size, bool huge, const std::string& what) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t reserved = size + kHuge;
  void* raw = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    return ResourceExhausted(what, ": cannot allocate ", size, " bytes to read it: ", std::strerror(errno));
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHuge - 1) / kHuge * kHuge;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t end = (aligned + size + page - 1) / page * page;  // munmap(base, size) unmaps to here
  if (aligned > begin) ::munmap(raw, aligned - begin);
  if (begin + reserved > end) ::munmap(reinterpret_cast<void*>(end), begin + reserved - end);
  ::madvise(reinterpret_cast<void*>(aligned), size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

// Reads `bytes` bytes of the file open at `fd` from `offset` into `dst` (pread, EINTR
// retried). A file that ends sooner was truncated while it was read: InvalidArgument naming
// `what`.
Status ReadExactly(int fd, uint8_t* dst, size_t bytes, uint64_t offset, const std::string& what) {
  for (size_t at = 0; at < bytes;) {
    const ssize_t n = ::pread(fd, dst + at, bytes - at, static_cast<off_t>(offset + at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidArgument(what, " cannot be read: ", std::strerror(errno));
    if (n == 0) {
      return InvalidArgument(what, " was truncated while it was read (", offset + at, " bytes left of ", offset + bytes,
                             " expected)");
    }
    at += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Whether the file open at `fd` still has the size and times `before` says: a file written
// while it was read is refused rather than loaded half old, half new (a write within the
// same tick of the file system's clock as the one before it is not seen: git's racy case,
// LoadOptions::hash_files_newer_than_ns).
Status CheckUnchanged(int fd, const struct stat& before, const std::string& what) {
  struct stat after;
  if (::fstat(fd, &after) != 0 || after.st_size != before.st_size || after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
      after.st_mtim.tv_nsec != before.st_mtim.tv_nsec || after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
      after.st_ctim.tv_nsec != before.st_ctim.tv_nsec) {
    return InvalidArgument(what, " changed while it was read (", static_cast<int64_t>(before.st_size),
                           " bytes before, ", static_cast<int64_t>(after.st_size),
                           " after): write the file before loading it");
  }
  return Status::Ok();
}

// A byte range of a file.
struct FileRange {
  uint64_t offset = 0, length = 0;
};

// Reads the file open at `fd` (`before.st_size` bytes) into fresh private anonymous memory
// (HugePageMemory: huge pages unless ranges are skipped; left writable), 1 MiB at a time
// with pread, except the `skipped` ranges (sorted, disjoint), whose whole pages stay
// untouched (no memory); fingerprints what it reads
// when `hasher` is given (then nothing may be skipped). Unmapped with munmap(base, size).
StatusOr<void*> ReadFile(int fd, const struct stat& before, const std::vector<FileRange>& skipped,
                         ContentHasher* hasher, const std::string& what) {
  const size_t size = static_cast<size_t>(before.st_size);
  OL_ASSIGN_OR_RETURN(void* base, HugePageMemory(size, /*huge=*/skipped.empty(), what));
  constexpr size_t kChunk = size_t{1} << 20;
  auto* bytes = static_cast<uint8_t*>(base);
  size_t next_skip = 0;
  for (size_t at = 0; at < size;) {
    if (next_skip < skipped.size() && at >= skipped[next_skip].offset) {
      at = std::max<size_t>(at, skipped[next_skip].offset + skipped[next_skip].length);
      ++next_skip;
      continue;
    }
    size_t until = size;
    if (next_skip < skipped.size()) until = std::min<size_t>(until, skipped[next_skip].offset);
    const size_t n = std::min(kChunk, until - at);
    if (Status read = ReadExactly(fd, bytes + at, n, at, what); !read.ok()) {
      ::munmap(base, size);
      return read;
    }
    if (hasher != nullptr) hasher->Update(bytes + at, n);
    at += n;
  }
  return base;
}

// A copy of a payload whose address does not suit its element type, from
// Allocator::Default(): once a session packed it and let it go, its block returns to that
// allocator's cache, where the next packed weights of its size class (every layer of a
// transformer has the same) find it, so the model's memory is made fresh once, not twice
// (copied, then packed); its fresh blocks follow the constant page policy (page_policy.h).
StatusOr<Tensor> CopyOf(DataType type, const Shape& shape, const uint8_t* data, size_t bytes) {
  OL_ASSIGN_OR_RETURN(Tensor copy, Tensor::Allocate(type, shape, Allocator::Default()));
  std::memcpy(copy.raw_data(), data, bytes);
  return copy;
}

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

// ---------------------------------------------------------------- inline weights in place
// Protobuf copies every bytes field it parses into a std::string of its own: a 340 MB model
// would be read into a buffer, copied into fresh strings (a page fault and a zeroed page
// per 4 KiB) and only then packed. Instead, the raw_data of the main graph's large
// initializers is cut out of the serialized model before protobuf sees it, and borrowed
// where it lies (the file's mapping, or the caller's bytes): protobuf parses only the
// skeleton. The walk reads the wire format (tag, length) down to ModelProto.graph
// (field 7), GraphProto.initializer (5) and TensorProto's dims (1), data_type (2), raw_data
// (9) and data_location (14); everything else is copied verbatim. A payload is cut exactly
// when the Loader below would borrow it (BorrowableType, more than min_elements elements,
// not external); the Loader still checks its size. Any wire format it cannot walk
// (a group, a length past the end) makes the caller parse the whole model as before, so
// protobuf's own verdict on malformed input stands.

// The wire format's reader: one field at a time.
struct WireField {
  uint32_t number = 0;
  int wire_type = 0;
  uint64_t varint = 0;             // wire type 0
  const uint8_t* data = nullptr;   // wire type 2: the payload
  size_t length = 0;               // its length
  const uint8_t* begin = nullptr;  // the field's first byte (its tag)
  const uint8_t* end = nullptr;    // one past its last byte
};

bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const uint8_t byte = *p++;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

bool NextField(const uint8_t*& p, const uint8_t* end, WireField* f) {
  f->begin = p;
  uint64_t tag = 0;
  if (!ReadVarint(p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire_type = static_cast<int>(tag & 7);
  switch (f->wire_type) {
    case 0:
      if (!ReadVarint(p, end, &f->varint)) return false;
      break;
    case 1:
      if (end - p < 8) return false;
      p += 8;
      break;
    case 5:
      if (end - p < 4) return false;
      p += 4;
      break;
    case 2: {
      uint64_t length = 0;
      if (!ReadVarint(p, end, &length) || length > static_cast<uint64_t>(end - p)) return false;
      f->data = p;
      f->length = static_cast<size_t>(length);
      p += length;
      break;
    }
    default:  // groups (3, 4): ONNX never writes them; protobuf decides
      return false;
  }
  f->end = p;
  return true;
}

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendMessageField(std::string* out, uint32_t number, const std::string& message) {
  AppendVarint(out, (static_cast<uint64_t>(number) << 3) | 2);
  AppendVarint(out, message.size());
  out->append(message);
}

void AppendVerbatim(std::string* out, const WireField& f) {
  out->append(reinterpret_cast<const char*>(f.begin), static_cast<size_t>(f.end - f.begin));
}

// Reads the wire-format headers of a file through a 64 KiB window (pread), never the
// bodies it skips: for LargeRawDataRanges.
class HeaderReader {
 public:
  HeaderReader(int fd, uint64_t size) : fd_(fd), size_(size), window_(kWindow) {}
  // The field starting at `at`, which must end by `end`: its number, wire type, where its
  // body starts and how long it is (wire type 2), where it ends. False if it does not walk.
  bool Next(uint64_t at, uint64_t end, uint32_t* number, int* wire_type, uint64_t* body, uint64_t* next) {
    constexpr uint64_t kMaxHeader = 20;  // two varints
    const uint64_t want = std::min(kMaxHeader, end - at);
    if (at < start_ || at + want > start_ + filled_) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kWindow, size_ - at));
      const ssize_t got = ::pread(fd_, window_.data(), n, static_cast<off_t>(at));
      if (got < static_cast<ssize_t>(want)) return false;
      start_ = at;
      filled_ = static_cast<uint64_t>(got);
    }
    const uint8_t* p = window_.data() + (at - start_);
    const uint8_t* limit = p + want;
    uint64_t tag = 0, value = 0;
    if (!ReadVarint(p, limit, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
    *number = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<int>(tag & 7);
    uint64_t length = 0;
    switch (*wire_type) {
      case 0:
        if (!ReadVarint(p, limit, &value)) return false;
        break;
      case 1:
        length = 8;
        break;
      case 5:
        length = 4;
        break;
      case 2:
        if (!ReadVarint(p, limit, &length)) return false;
        break;
      default:
        return false;
    }
    *body = at + static_cast<uint64_t>(p - (window_.data() + (at - start_)));
    if (length > end - *body) return false;
    *next = *body + length;
    return true;
  }

 private:
  static constexpr size_t kWindow = size_t{64} << 10;
  int fd_;
  uint64_t size_;
  std::vector<uint8_t> window_;
  uint64_t start_ = 0, filled_ = 0;
};

// The raw_data fields of the main graph's initializers of at least `min_bytes` in the file
// open at `fd`, found from the headers alone (sorted, disjoint): the bodies the loader need
// not read into its copy of the file, since it reads each such payload straight into its
// tensor's own memory. Nothing if the wire format does not walk (the whole file is read).
// Bodies below this are read with the rest of the file (a tensor's block for so few bytes
// saves nothing).
constexpr uint64_t kMinSkippedBytes = uint64_t{16} << 10;

std::vector<FileRange> LargeRawDataRanges(int fd, uint64_t size, uint64_t min_bytes) {
  HeaderReader reader(fd, size);
  std::vector<FileRange> ranges;
  uint32_t number = 0;
  int wire_type = 0;
  uint64_t body = 0, next = 0;
  for (uint64_t p = 0; p < size; p = next) {
    if (!reader.Next(p, size, &number, &wire_type, &body, &next)) return {};
    if (number != 7 || wire_type != 2) continue;  // the graph
    uint64_t graph_next = 0;
    for (uint64_t q = body, graph_end = next; q < graph_end; q = graph_next) {
      uint64_t tensor = 0;
      if (!reader.Next(q, graph_end, &number, &wire_type, &tensor, &graph_next)) return {};
      if (number != 5 || wire_type != 2) continue;  // an initializer
      uint64_t field_next = 0;
      FileRange raw;  // the last raw_data wins, as when parsing
      bool has_raw = false;
      for (uint64_t r = tensor; r < graph_next; r = field_next) {
        uint64_t field = 0;
        if (!reader.Next(r, graph_next, &number, &wire_type, &field, &field_next)) return {};
        if (number == 9 && wire_type == 2) {
          raw = FileRange{field, field_next - field};
          has_raw = true;
        }
      }
      if (has_raw && raw.length >= min_bytes) ranges.push_back(raw);
    }
  }
  return ranges;
}

struct InlineSplit {
  std::string skeleton;  // the serialized model without the payloads below
  // Initializer index in the main graph (as the parsed skeleton numbers them) -> its raw_data.
  std::map<int, std::string_view> payloads;
};

// One TensorProto: false if its wire format does not walk. When the Loader would borrow its
// raw_data, `raw` is set and `stripped` holds the tensor without it.
bool SplitTensor(const uint8_t* p, const uint8_t* end, const LoadOptions& options, std::string* stripped,
                 std::string_view* raw) {
  std::vector<int64_t> dims;
  int64_t data_type = 0, location = 0;
  const uint8_t* raw_data = nullptr;
  size_t raw_length = 0;
  bool has_raw = false;
  const uint8_t* begin = p;
  WireField f;
  while (p < end) {
    if (!NextField(p, end, &f)) return false;
    if (f.number == 1 && f.wire_type == 0) {
      dims.push_back(static_cast<int64_t>(f.varint));
    } else if (f.number == 1 && f.wire_type == 2) {  // packed dims
      const uint8_t* q = f.data;
      for (uint64_t d = 0; q < f.data + f.length;) {
        if (!ReadVarint(q, f.data + f.length, &d)) return false;
        dims.push_back(static_cast<int64_t>(d));
      }
    } else if (f.number == 2 && f.wire_type == 0) {
      data_type = static_cast<int64_t>(f.varint);
    } else if (f.number == 14 && f.wire_type == 0) {
      location = static_cast<int64_t>(f.varint);
    } else if (f.number == 9 && f.wire_type == 2) {  // the last one wins, as when parsing
      raw_data = f.data;
      raw_length = f.length;
      has_raw = true;
    }
  }
  *raw = std::string_view();
  if (!has_raw || location == onnx::TensorProto::EXTERNAL || data_type <= 0 || data_type > INT32_MAX ||
      !IsValidDataType(static_cast<int32_t>(data_type))) {
    return true;
  }
  const DataType type = static_cast<DataType>(data_type);
  for (int64_t d : dims) {
    if (d < 0) return true;
  }
  const Shape shape(dims);
  if (!BorrowableType(type) || !shape.CheckedByteSize(type).ok() || shape.num_elements() <= options.min_elements) {
    return true;
  }
  stripped->clear();
  for (p = begin; p < end;) {
    NextField(p, end, &f);  // walked above
    if (!(f.number == 9 && f.wire_type == 2)) AppendVerbatim(stripped, f);
  }
  *raw = std::string_view(reinterpret_cast<const char*>(raw_data), raw_length);
  return true;
}

// The model with the payloads of the main graph's large raw_data initializers cut out, or
// nothing if its wire format does not walk.
std::optional<InlineSplit> SplitInlineWeights(std::string_view model, const LoadOptions& options) {
  InlineSplit split;
  split.skeleton.reserve(1 << 16);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(model.data());
  const uint8_t* end = p + model.size();
  int index = 0;  // repeated graph fields merge: their initializers are numbered on
  std::string graph, tensor;
  WireField f, g;
  while (p < end) {
    if (!NextField(p, end, &f)) return std::nullopt;
    if (!(f.number == 7 && f.wire_type == 2)) {
      AppendVerbatim(&split.skeleton, f);
      continue;
    }
    graph.clear();
    for (const uint8_t* q = f.data; q < f.data + f.length;) {
      if (!NextField(q, f.data + f.length, &g)) return std::nullopt;
      if (!(g.number == 5 && g.wire_type == 2)) {
        AppendVerbatim(&graph, g);
        continue;
      }
      std::string_view raw;
      if (!SplitTensor(g.data, g.data + g.length, options, &tensor, &raw)) return std::nullopt;
      if (raw.data() == nullptr) {
        AppendVerbatim(&graph, g);
      } else {
        AppendMessageField(&graph, 5, tensor);
        split.payloads.emplace(index, raw);
      }
      ++index;
    }
    AppendMessageField(&split.skeleton, 7, graph);
  }
  return split;
}

// What keeps borrowed bytes of the model alive: given a payload inside them, the owner a
// Tensor borrowing it holds.
using PayloadOwner = std::function<std::shared_ptr<void>(const uint8_t* data, size_t bytes)>;
// Or what makes a tensor of its own from a payload inside them (a file's: read from the file).
using PayloadReader =
    std::function<StatusOr<Tensor>(DataType type, const Shape& shape, const uint8_t* data, size_t bytes)>;

class Loader {
 public:
  Loader(std::string where, std::string base_dir, const LoadOptions& options)
      : where_(std::move(where)), base_dir_(std::move(base_dir)), options_(options), started_ns_(NowNanoseconds()) {}

  const LoadOptions& options() const { return options_; }
  int64_t started_ns() const { return started_ns_; }

  // Sets source->content_hash when it is to be hashed (Describe), from `fd`.
  Status Fingerprint(int fd, SourceFile* source) const {
    if (!source->hashed) return Status::Ok();
    std::optional<uint64_t> hash = HashFile(fd, source->size);
    if (!hash.has_value()) {
      return InvalidArgument(where_, ": '", source->path, "' cannot be read: ", std::strerror(errno));
    }
    source->content_hash = *hash;
    return Status::Ok();
  }

  // Inline payloads cut out of the serialized model (SplitInlineWeights), by initializer
  // index, and what keeps them alive; or, with a `reader`, what makes each its own tensor.
  void BorrowInline(std::map<int, std::string_view> payloads, PayloadOwner owner, PayloadReader reader) {
    inline_payloads_ = std::move(payloads);
    inline_owner_ = std::move(owner);
    inline_reader_ = std::move(reader);
  }

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
      auto cut = inline_payloads_.find(i);
      if (cut != inline_payloads_.end()) {
        OL_RETURN_IF_ERROR(BorrowCut(t, type, shape, bytes, cut->second, out));
        continue;
      }
      if (external && !BorrowableType(type)) {  // decoded by Python, from a file this load fingerprints
        OL_RETURN_IF_ERROR(FingerprintExternalFile(t));
        continue;
      }
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
      OL_ASSIGN_OR_RETURN(const ExternalRange range, ExternalData(t, bytes));
      if (!large) {  // small: inlined, for shape inference
        std::string small(bytes, '\0');
        OL_RETURN_IF_ERROR(
            ReadExactly(range.fd, reinterpret_cast<uint8_t*>(small.data()), bytes, range.offset, range.what));
        t.set_raw_data(std::move(small));
      } else if (auto tied = read_ranges_.find({range.fd, range.offset, bytes, type}); tied != read_ranges_.end()) {
        // Tied weights (one range named by several initializers, e.g. an embedding and its
        // output projection): one block, viewed with each initializer's shape; it is freed
        // when the last tensor viewing it is.
        OL_ASSIGN_OR_RETURN(Tensor view, tied->second.Reshaped(shape));
        out->initializers.emplace(t.name(), std::move(view));
      } else {  // into a block of its own, which the packed weights reuse once it is released
        OL_ASSIGN_OR_RETURN(Tensor read, Tensor::Allocate(type, shape, LoadedWeightsAllocator()));
        OL_RETURN_IF_ERROR(
            ReadExactly(range.fd, static_cast<uint8_t*>(read.raw_data()), bytes, range.offset, range.what));
        read_ranges_.emplace(RangeKey{range.fd, range.offset, bytes, type}, read);
        out->initializers.emplace(t.name(), std::move(read));
      }
      t.clear_external_data();
      t.clear_data_location();
    }
    read_ranges_.clear();  // the tensors alone keep their blocks
    for (const auto& [file, open] : open_files_) OL_RETURN_IF_ERROR(CheckUnchanged(open.fd.fd, open.st, open.what));
    out->source_files.insert(out->source_files.end(), external_files_.begin(), external_files_.end());
    if (!model.SerializeToString(&out->skeleton)) {
      return InvalidArgument(where_, ": the model cannot be serialized again (over 2 GiB without its weights?)");
    }
    return Status::Ok();
  }

 private:
  // An initializer whose raw_data SplitInlineWeights cut out: made by the reader when there
  // is one (a file's), else borrowed where it lies when its address suits the element type,
  // else copied once (and the borrowed range let go).
  Status BorrowCut(const onnx::TensorProto& t, DataType type, const Shape& shape, size_t bytes,
                   std::string_view payload, LoadedModel* out) {
    if (payload.size() != bytes) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' (", DataTypeName(type), shape.ToString(), ") has ",
                             payload.size(), " bytes of raw_data, expected ", bytes);
    }
    const auto* data = reinterpret_cast<const uint8_t*>(payload.data());
    if (inline_reader_ != nullptr) {
      OL_ASSIGN_OR_RETURN(Tensor read, inline_reader_(type, shape, data, bytes));
      out->initializers.emplace(t.name(), std::move(read));
      return Status::Ok();
    }
    std::shared_ptr<void> owner = inline_owner_(data, bytes);
    if (reinterpret_cast<uintptr_t>(data) % ElementSize(type) == 0) {
      out->initializers.emplace(t.name(), Tensor::Borrow(type, shape, const_cast<uint8_t*>(data), std::move(owner)));
    } else {
      OL_ASSIGN_OR_RETURN(Tensor copy, CopyOf(type, shape, data, bytes));
      owner.reset();  // a mapped range gives its pages back now
      out->initializers.emplace(t.name(), std::move(copy));
    }
    return Status::Ok();
  }

  // Opens the external file of `t` (whose bytes Python decodes) only so that it is
  // fingerprinted like the files whose bytes the loader borrows; its bytes are not read.
  Status FingerprintExternalFile(const onnx::TensorProto& t) {
    for (const onnx::StringStringEntryProto& entry : t.external_data()) {
      if (entry.key() == "location") return Open(entry.value(), t.name()).status();
    }
    return Status::Ok();  // no location: Python names the error
  }

  // Where the bytes of an external tensor lie: its file (open) and offset, checked inside it.
  struct ExternalRange {
    int fd = -1;
    uint64_t offset = 0;
    std::string what;  // for errors
  };
  StatusOr<ExternalRange> ExternalData(const onnx::TensorProto& t, size_t bytes) {
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
    OL_ASSIGN_OR_RETURN(OpenFile * file, Open(location, t.name()));
    const auto size = static_cast<uint64_t>(file->st.st_size);
    if (static_cast<uint64_t>(offset) > size || bytes > size - static_cast<uint64_t>(offset)) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' reads ", bytes, " bytes at offset ", offset,
                             " of '", location, "', which has ", size, " bytes");
    }
    return ExternalRange{file->fd.fd, static_cast<uint64_t>(offset), file->what};
  }

  // The file `location`, relative to the model's folder and inside it, opened and
  // fingerprinted once per load. Its tensors are read from it while the load runs, and it
  // must keep its size and times until the load returns (Load checks).
  struct OpenFile {
    FileDescriptor fd;
    struct stat st;
    std::string what;  // for errors
  };
  StatusOr<OpenFile*> Open(const std::string& location, const std::string& tensor) {
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
    auto found = open_files_.find(file);
    if (found != open_files_.end()) return &found->second;
    OpenFile& open = open_files_[file];
    open.fd.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (open.fd.fd < 0 || ::fstat(open.fd.fd, &open.st) != 0 || !S_ISREG(open.st.st_mode)) {
      const int error = errno;
      open_files_.erase(file);
      return InvalidArgument(where_, ": external data file '", location, "' of initializer '", tensor,
                             "' cannot be read: ", std::strerror(error));
    }
    open.what = where_ + ": external data file '" + location + "'";
    SourceFile source = Describe(file, open.st, options_, started_ns_);
    OL_RETURN_IF_ERROR(Fingerprint(open.fd.fd, &source));
    external_files_.push_back(std::move(source));
    return &open;
  }

  std::map<std::string, OpenFile> open_files_;  // by resolved path
  // The external ranges read into blocks during Load (file, offset, bytes, element type).
  using RangeKey = std::tuple<int, uint64_t, size_t, DataType>;
  std::map<RangeKey, Tensor> read_ranges_;

  std::string where_, base_dir_;
  LoadOptions options_;
  std::vector<SourceFile> external_files_;  // in the order first mapped
  std::map<int, std::string_view> inline_payloads_;
  PayloadOwner inline_owner_;
  PayloadReader inline_reader_;
  int64_t started_ns_;
};

// Parses `bytes` with the large inline payloads cut out (`split`, else SplitInlineWeights)
// and borrowed (`owner`) or read (`reader`, when given), or whole when they cannot be cut
// out, after `before_whole_parse` (which completes the bytes); `unparsable` is the error then.
StatusOr<LoadedModel> LoadSerialized(std::string_view bytes, Loader& loader, const PayloadOwner& owner,
                                     const PayloadReader& reader, const std::string& unparsable,
                                     std::optional<InlineSplit> split = std::nullopt,
                                     const std::function<Status()>& before_whole_parse = nullptr) {
  onnx::ModelProto model;
  if (!split.has_value()) split = SplitInlineWeights(bytes, loader.options());
  bool parsed = false;
  if (split.has_value() && split->skeleton.size() <= static_cast<size_t>(INT_MAX)) {
    parsed = model.ParseFromString(split->skeleton);
    if (parsed) loader.BorrowInline(std::move(split->payloads), owner, reader);
  }
  if (!parsed) {
    model.Clear();
    if (before_whole_parse != nullptr) OL_RETURN_IF_ERROR(before_whole_parse());
    if (bytes.size() > static_cast<size_t>(INT_MAX) ||
        !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return InvalidArgument(unparsable);
    }
  }
  split.reset();
  LoadedModel out;
  OL_RETURN_IF_ERROR(loader.Load(model, &out));
  return out;
}

}  // namespace

Allocator* LoadedWeightsAllocator() {
  static Allocator* const allocator = new Allocator(Allocator::kNoLimit, /*max_cached_large_bytes=*/0);
  return allocator;
}

StatusOr<LoadedModel> LoadModelFile(const std::string& path, const LoadOptions& options) {
  const std::string where = "model '" + path + "'";
  FileDescriptor fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st;
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) {
    return InvalidArgument(where, " cannot be opened: ", std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(where, " is not a regular file");
  const std::string unparsable = where + " is not an ONNX model (the protobuf does not parse)";
  Loader loader(where, Dirname(path), options);
  // The file read into anonymous memory (ReadFile) except the bodies of its large raw_data
  // initializers (LargeRawDataRanges): those are read straight from the file into their
  // tensors' own blocks of LoadedWeightsAllocator(), which go back to the system once released
  // (the file's bytes become fresh memory once, not twice). The copy of the rest, which the
  // skeleton is cut from, goes with the load. Nothing reads the file once the load returns:
  // it may then change or go without changing the tensors (no mapping raises SIGBUS).
  if (st.st_size > 0) {
    const size_t size = static_cast<size_t>(st.st_size);
    SourceFile source = Describe(path, st, options, loader.started_ns());
    std::vector<FileRange> skipped = LargeRawDataRanges(fd.fd, size, kMinSkippedBytes);
    ContentHasher hasher;
    const bool hash_while_reading = source.hashed && skipped.empty();
    OL_ASSIGN_OR_RETURN(void* base, ReadFile(fd.fd, st, skipped, hash_while_reading ? &hasher : nullptr, where));
    std::unique_ptr<void, std::function<void(void*)>> copy(base, [size](void* b) { ::munmap(b, size); });
    if (hash_while_reading) {
      source.content_hash = hasher.Finish();
    } else {
      OL_RETURN_IF_ERROR(loader.Fingerprint(fd.fd, &source));
    }
    auto* bytes = static_cast<uint8_t*>(base);
    const std::string_view view(reinterpret_cast<const char*>(bytes), size);
    // Reads the skipped ranges `keep` picks into the copy (once each).
    std::vector<bool> filled(skipped.size(), false);
    const auto fill = [&](const std::function<bool(const FileRange&)>& keep) -> Status {
      for (size_t i = 0; i < skipped.size(); ++i) {
        if (filled[i] || !keep(skipped[i])) continue;
        OL_RETURN_IF_ERROR(ReadExactly(fd.fd, bytes + skipped[i].offset, skipped[i].length, skipped[i].offset, where));
        filled[i] = true;
      }
      return Status::Ok();
    };
    std::optional<InlineSplit> split = SplitInlineWeights(view, options);
    if (split.has_value() && !skipped.empty()) {
      // A skipped body the split did not cut out (a tensor it leaves in the skeleton) is
      // read now, and the skeleton cut again with its bytes.
      std::map<uint64_t, uint64_t> cut;  // offset -> length
      for (const auto& [index, payload] : split->payloads) {
        cut.emplace(static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(payload.data()) - bytes), payload.size());
      }
      bool refilled = false;
      OL_RETURN_IF_ERROR(fill([&](const FileRange& r) {
        const auto found = cut.find(r.offset);
        const bool kept = found == cut.end() || found->second != r.length;
        refilled = refilled || kept;
        return kept;
      }));
      if (refilled) split = SplitInlineWeights(view, options);
    }
    std::map<uint64_t, uint64_t> unread;  // skipped and not filled: offset -> length
    for (size_t i = 0; i < skipped.size(); ++i) {
      if (!filled[i]) unread.emplace(skipped[i].offset, skipped[i].length);
    }
    const PayloadReader reader = [&](DataType type, const Shape& shape, const uint8_t* data,
                                     size_t payload_bytes) -> StatusOr<Tensor> {
      OL_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(type, shape, LoadedWeightsAllocator()));
      const auto offset = static_cast<uint64_t>(data - bytes);
      const auto found = unread.find(offset);
      if (found != unread.end() && found->second == payload_bytes) {
        OL_RETURN_IF_ERROR(ReadExactly(fd.fd, static_cast<uint8_t*>(tensor.raw_data()), payload_bytes, offset, where));
      } else {
        std::memcpy(tensor.raw_data(), data, payload_bytes);
      }
      return tensor;
    };
    StatusOr<LoadedModel> loaded = LoadSerialized(view, loader, nullptr, reader, unparsable, std::move(split),
                                                  [&] { return fill([](const FileRange&) { return true; }); });
    OL_RETURN_IF_ERROR(CheckUnchanged(fd.fd, st, where));
    if (loaded.ok()) loaded->source_files.insert(loaded->source_files.begin(), source);
    return loaded;
  }
  // Empty (or a special file whose status gives no size): parsed from the descriptor in chunks.
  onnx::ModelProto model;
  SourceFile source = Describe(path, st, options, loader.started_ns());
  ContentHasher hasher;
  size_t read = 0;
  {
    FdStream stream(fd.fd, source.hashed ? &hasher : nullptr);
    google::protobuf::io::CopyingInputStreamAdaptor input(&stream, 1 << 20);
    if (!model.ParseFromZeroCopyStream(&input)) return InvalidArgument(unparsable);
    read = stream.bytes_read();
  }
  LoadedModel out;
  OL_RETURN_IF_ERROR(loader.Load(model, &out));
  source.size = read;
  if (source.hashed) source.content_hash = hasher.Finish();
  out.source_files.insert(out.source_files.begin(), std::move(source));
  return out;
}

StatusOr<LoadedModel> LoadModelBytes(std::string_view bytes, const std::string& base_dir, const LoadOptions& options,
                                     std::shared_ptr<const void> owner) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return InvalidArgument("the bytes (", bytes.size(), ") exceed protobuf's 2 GiB limit: store weights externally");
  }
  const std::string unparsable = "the bytes are not a serialized ONNX model (the protobuf does not parse)";
  Loader loader("the model bytes", base_dir, options);
  if (owner != nullptr) {
    const PayloadOwner borrow = [owner](const uint8_t*, size_t) { return std::const_pointer_cast<void>(owner); };
    return LoadSerialized(bytes, loader, borrow, nullptr, unparsable);
  }
  // Nobody keeps the bytes alive: the parse copies each payload once, and the tensors that
  // borrow it alone keep it (a session that drops one initializer frees its bytes).
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return InvalidArgument(unparsable);
  LoadedModel out;
  OL_RETURN_IF_ERROR(loader.Load(model, &out));
  return out;
}

}  // namespace onnx_light
