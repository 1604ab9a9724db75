// The native model loader against models written with the generated ONNX classes: which
// initializers leave the skeleton, that their values arrive intact (in place or copied),
// and that every malformed input is an InvalidArgument naming the file and the tensor.
#include "native/loader/model_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/core/allocator.h"
#include "native/loader/content_hash.h"
#include "native/loader/onnx-ml.pb.h"

namespace onnx_light {
namespace {

constexpr int64_t kLarge = 40000;  // elements: above LoadOptions' default bound
constexpr int64_t kSmall = 16;

std::vector<float> Ramp(int64_t n, float start) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + 0.5f * static_cast<float>(i);
  return v;
}

std::string Bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// A model whose graph is one Add of two initializers.
onnx::ModelProto Model() {
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.add_opset_import()->set_version(21);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Add");
  n->add_input("a");
  n->add_input("b");
  n->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

onnx::TensorProto* AddRaw(onnx::ModelProto& m, const std::string& name, const std::vector<float>& values) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  t->set_raw_data(Bytes(values));
  return t;
}

onnx::TensorProto* AddExternal(onnx::ModelProto& m, const std::string& name, int64_t elements,
                               const std::string& location, int64_t offset) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(elements);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(elements * 4));
  return t;
}

class ModelLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/model_loader_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

 public:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string WriteModel(const onnx::ModelProto& m) { return Write("model.onnx", m.SerializeAsString()); }

  std::string dir_;
};

std::vector<float> Values(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.num_elements());
}

const onnx::TensorProto& SkeletonInitializer(const LoadedModel& loaded, const std::string& name) {
  static onnx::ModelProto skeleton;
  EXPECT_TRUE(skeleton.ParseFromString(loaded.skeleton));
  for (const onnx::TensorProto& t : skeleton.graph().initializer()) {
    if (t.name() == name) return t;
  }
  ADD_FAILURE() << "no initializer '" << name << "' in the skeleton";
  return onnx::TensorProto::default_instance();
}

TEST_F(ModelLoaderTest, LargeRawInitializersLeaveTheSkeletonAndSmallOnesStay) {
  onnx::ModelProto m = Model();
  const std::vector<float> a = Ramp(kLarge, 1.0f), b = Ramp(kSmall, -3.0f);
  AddRaw(m, "a", a);
  AddRaw(m, "b", b);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->initializers.count("a"), 1u);
  EXPECT_EQ(loaded->initializers.count("b"), 0u);
  EXPECT_EQ(Values(loaded->initializers.at("a")), a);
  EXPECT_EQ(loaded->initializers.at("a").shape(), Shape({kLarge}));

  const onnx::TensorProto& sa = SkeletonInitializer(*loaded, "a");
  EXPECT_FALSE(sa.has_raw_data());
  EXPECT_EQ(sa.data_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(sa.dims_size(), 1);
  EXPECT_EQ(sa.dims(0), kLarge);
  EXPECT_EQ(SkeletonInitializer(*loaded, "b").raw_data(), Bytes(b));
  EXPECT_LT(loaded->skeleton.size(), 1024u);
}

TEST_F(ModelLoaderTest, BorrowedTensorsOutliveTheRestOfTheLoad) {
  onnx::ModelProto m = Model();
  const std::vector<float> a = Ramp(kLarge, 2.0f);
  AddRaw(m, "a", a);
  Tensor kept;
  {
    StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    kept = loaded->initializers.at("a");
  }
  EXPECT_EQ(Values(kept), a);  // under ASan: no use after free
}

TEST_F(ModelLoaderTest, ExternalDataIsReadIntoAlignedTensorsAndSmallTensorsInlined) {
  const std::vector<float> a = Ramp(kLarge, 5.0f), c = Ramp(kLarge, -7.0f), s = Ramp(kSmall, 9.0f);
  // a at offset 0 (aligned), c at offset 4 * kLarge + 2 (misaligned for float), s small.
  Write("weights.bin", Bytes(a) + std::string(2, '\0') + Bytes(c) + Bytes(s));
  onnx::ModelProto m = Model();
  AddExternal(m, "a", kLarge, "weights.bin", 0);
  AddExternal(m, "c", kLarge, "weights.bin", 4 * kLarge + 2);
  AddExternal(m, "s", kSmall, "weights.bin", 8 * kLarge + 2);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(Values(loaded->initializers.at("a")), a);
  EXPECT_EQ(Values(loaded->initializers.at("c")), c);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(loaded->initializers.at("c").raw_data()) % alignof(float), 0u);
  EXPECT_EQ(loaded->initializers.count("s"), 0u);
  const onnx::TensorProto& small = SkeletonInitializer(*loaded, "s");
  EXPECT_EQ(small.raw_data(), Bytes(s));  // inlined for shape inference
  EXPECT_EQ(small.external_data_size(), 0);
  EXPECT_NE(small.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(SkeletonInitializer(*loaded, "a").external_data_size(), 0);
}

TEST_F(ModelLoaderTest, AReleasedExternalTensorLeavesTheLoadersAllocatorAtOnce) {
  const std::vector<float> a = Ramp(kLarge, 1.0f), b = Ramp(kLarge, -2.0f);
  Write("weights.bin", Bytes(a) + Bytes(b));
  onnx::ModelProto m = Model();
  AddExternal(m, "a", kLarge, "weights.bin", 0);
  AddExternal(m, "b", kLarge, "weights.bin", 4 * kLarge);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Tensor ta = loaded->initializers.at("a"), tb = loaded->initializers.at("b");
  loaded->initializers.clear();  // the tensors here are the only holders, as a session's are
  const int64_t held = LoadedWeightsAllocator()->stats().current_bytes;
  ta = Tensor();  // the session packed a and let it go: its block leaves at once
  EXPECT_EQ(held - LoadedWeightsAllocator()->stats().current_bytes, 4 * kLarge);
  EXPECT_EQ(Values(tb), b);
}

TEST_F(ModelLoaderTest, ExternalTensorsAreReadOnceIntoAlignedBlocksOfTheirOwn) {
  // keep at offset 0, c at 4 * kLarge + 2 (misaligned for float in the file): each read
  // once into its own aligned block of LoadedWeightsAllocator(), nothing else held.
  const std::vector<float> keep = Ramp(kLarge, 3.0f), c = Ramp(kLarge, -5.0f);
  Write("weights.bin", Bytes(keep) + std::string(2, '\0') + Bytes(c));
  onnx::ModelProto m = Model();
  AddExternal(m, "keep", kLarge, "weights.bin", 0);
  AddExternal(m, "c", kLarge, "weights.bin", 4 * kLarge + 2);
  const int64_t held_before = LoadedWeightsAllocator()->stats().current_bytes;
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(LoadedWeightsAllocator()->stats().current_bytes - held_before, 2 * 4 * kLarge);
  EXPECT_EQ(Values(loaded->initializers.at("c")), c);
  EXPECT_EQ(Values(loaded->initializers.at("keep")), keep);
}

TEST_F(ModelLoaderTest, TypedFieldsStayInTheSkeleton) {
  onnx::ModelProto m = Model();
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name("a");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(kLarge);
  for (float v : Ramp(kLarge, 0.0f)) t->add_float_data(v);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->initializers.empty());
  EXPECT_EQ(SkeletonInitializer(*loaded, "a").float_data_size(), kLarge);
}

TEST_F(ModelLoaderTest, BytesLoadLikeAFileButRefuseExternalData) {
  onnx::ModelProto m = Model();
  const std::vector<float> a = Ramp(kLarge, 1.5f);
  AddRaw(m, "a", a);
  StatusOr<LoadedModel> loaded = LoadModelBytes(m.SerializeAsString(), "", {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(Values(loaded->initializers.at("a")), a);

  onnx::ModelProto e = Model();
  AddExternal(e, "w", kLarge, "weights.bin", 0);
  StatusOr<LoadedModel> refused = LoadModelBytes(e.SerializeAsString(), "", {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("load it from its path"), std::string::npos) << refused.status().ToString();
}

// Whether `address` lies in a mapping of the file `path` (/proc/self/maps).
bool InMappingOf(const void* address, const std::string& path) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &begin, &end) != 2 || a < begin || a >= end) continue;
    return line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
  }
  return false;
}

// Where Bytes(values) starts in the serialized model.
size_t PayloadOffset(const std::string& serialized, const std::vector<float>& values) {
  // Boyer-Moore-Horspool rather than std::string::find: find() compares the whole pattern at
  // every candidate with memcmp, which ThreadSanitizer checks over its full length, so a
  // 256 KiB payload took 26 s per test under --config=tsan.
  const std::string pattern = Bytes(values);
  const auto it = std::search(serialized.begin(), serialized.end(),
                              std::boyer_moore_horspool_searcher(pattern.begin(), pattern.end()));
  EXPECT_NE(it, serialized.end());
  return it == serialized.end() ? std::string::npos : static_cast<size_t>(it - serialized.begin());
}

TEST_F(ModelLoaderTest, InlineRawDataOfAFileIsReadIntoABlockOfItsOwnAtEveryOffset) {
  // Two adjacent payloads; names of 1 to 4 letters move each through every offset modulo 4.
  // Each is read from the file into its own aligned block of LoadedWeightsAllocator(), never
  // borrowed from a mapping of the file.
  bool saw_aligned = false, saw_misaligned = false;
  for (int letters = 0; letters < 16; ++letters) {
    onnx::ModelProto m = Model();
    const std::string name_a(1 + letters / 4, 'a'), name_b(1 + letters % 4, 'b');
    const std::vector<float> a = Ramp(kLarge, static_cast<float>(letters)), b = Ramp(kLarge, -1.0f * letters);
    AddRaw(m, name_a, a);
    AddRaw(m, name_b, b);
    const std::string serialized = m.SerializeAsString();
    for (const std::vector<float>* v : {&a, &b}) {
      (PayloadOffset(serialized, *v) % alignof(float) == 0 ? saw_aligned : saw_misaligned) = true;
    }
    const std::string path = Write("model" + std::to_string(letters) + ".onnx", serialized);
    const int64_t held_before = LoadedWeightsAllocator()->stats().current_bytes;
    StatusOr<LoadedModel> loaded = LoadModelFile(path, {});
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_EQ(LoadedWeightsAllocator()->stats().current_bytes - held_before, 2 * 4 * kLarge) << name_a << " " << name_b;
    for (const auto& [name, values] : {std::pair{name_a, &a}, std::pair{name_b, &b}}) {
      const Tensor& t = loaded->initializers.at(name);
      EXPECT_EQ(Values(t), *values) << name;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % alignof(float), 0u) << name;
      EXPECT_FALSE(InMappingOf(t.raw_data(), path)) << name << ": no tensor reads the file through a mapping";
      EXPECT_FALSE(SkeletonInitializer(*loaded, name).has_raw_data());
    }
  }
  EXPECT_TRUE(saw_aligned && saw_misaligned);
}

TEST_F(ModelLoaderTest, ALargeRawDataTheLoaderLeavesInTheSkeletonKeepsItsBytes) {
  // Bodies of 16 KiB or more are not read with the rest of the file; one the split leaves in
  // the skeleton (here: not above min_elements) is read for it after all. A small payload
  // taken (min_elements lowered) is copied from the rest of the file into its block.
  const std::vector<float> kept = Ramp(kLarge, 2.0f), taken = Ramp(kLarge + 1, 3.0f), small = Ramp(64, 4.0f);
  onnx::ModelProto m = Model();
  AddRaw(m, "kept", kept);
  AddRaw(m, "taken", taken);
  AddRaw(m, "small", small);
  LoadOptions options;
  options.min_elements = kLarge;  // kept has exactly as many: it stays; so would small...
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(SkeletonInitializer(*loaded, "kept").raw_data(), Bytes(kept));
  EXPECT_EQ(Values(loaded->initializers.at("taken")), taken);
  EXPECT_EQ(SkeletonInitializer(*loaded, "small").raw_data(), Bytes(small));
  options.min_elements = 32;  // ...which is taken now, from the bytes read with the rest
  loaded = LoadModelFile(WriteModel(m), options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(Values(loaded->initializers.at("small")), small);
  EXPECT_EQ(Values(loaded->initializers.at("kept")), kept);
  EXPECT_EQ(Values(loaded->initializers.at("taken")), taken);
}

TEST_F(ModelLoaderTest, AReleasedInlineTensorLeavesTheLoadersAllocatorAtOnce) {
  const std::vector<float> a = Ramp(kLarge, 1.0f), b = Ramp(kLarge, -2.0f);
  onnx::ModelProto m = Model();
  AddRaw(m, "a", a);
  AddRaw(m, "b", b);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Tensor ta = loaded->initializers.at("a"), tb = loaded->initializers.at("b");
  loaded->initializers.clear();
  const int64_t held = LoadedWeightsAllocator()->stats().current_bytes;
  ta = Tensor();  // the session packed a and let it go: its block leaves at once
  EXPECT_EQ(held - LoadedWeightsAllocator()->stats().current_bytes, 4 * kLarge);
  EXPECT_EQ(Values(tb), b);
}

struct BorrowingModel {
  std::string path, name_a, name_b;
  std::vector<float> a, b, ext_a, ext_b;
};

BorrowingModel WriteBorrowingModel(ModelLoaderTest* test, int64_t elements) {
  BorrowingModel out;
  out.a = Ramp(elements, 1.0f);
  out.b = Ramp(elements, -2.0f);
  out.ext_a = Ramp(elements, 3.0f);
  out.ext_b = Ramp(elements, -4.0f);
  std::string serialized;
  for (int tries = 0; tries < 16; ++tries) {
    out.name_a = "a" + std::string(tries / 4, 'x');
    out.name_b = "b" + std::string(tries % 4, 'x');
    onnx::ModelProto m = Model();
    AddRaw(m, out.name_a, out.a);
    AddRaw(m, out.name_b, out.b);
    AddExternal(m, "ext_a", elements, "weights.bin", 0);
    AddExternal(m, "ext_b", elements, "weights.bin", 4 * elements);
    serialized = m.SerializeAsString();
    if (PayloadOffset(serialized, out.a) % 4 == 0 && PayloadOffset(serialized, out.b) % 4 == 0) break;
  }
  test->Write("weights.bin", Bytes(out.ext_a) + Bytes(out.ext_b));
  out.path = test->Write("model.onnx", serialized);
  return out;
}

TEST_F(ModelLoaderTest, LoadedTensorsKeepTheirAddressAndValuesWhenTheFilesAreOverwritten) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const int64_t elements = static_cast<int64_t>(64 * page / sizeof(float)) + 3;  // partial end pages
  const BorrowingModel model = WriteBorrowingModel(this, elements);
  const std::string weights = dir_ + "/weights.bin";
  StatusOr<LoadedModel> loaded = LoadModelFile(model.path, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  // The session keeps a and ext_a unpacked; b and ext_b were absorbed and released.
  Tensor ta = loaded->initializers.at(model.name_a), te = loaded->initializers.at("ext_a");
  loaded->initializers.clear();
  ASSERT_FALSE(InMappingOf(ta.raw_data(), model.path));  // read, never mapped
  ASSERT_FALSE(InMappingOf(te.raw_data(), weights));
  const void* pa = ta.raw_data();
  const void* pe = te.raw_data();

  // Re-exported in place (truncated, then a small other model written): the files' old
  // pages are past their new ends, where a read through the mapping raises SIGBUS.
  Write("model.onnx", Bytes(Ramp(kSmall, 100.0f)));
  Write("weights.bin", Bytes(Ramp(kSmall, 200.0f)));
  EXPECT_EQ(ta.raw_data(), pa);  // same address: kernels' pointers stay valid
  EXPECT_EQ(te.raw_data(), pe);
  EXPECT_FALSE(InMappingOf(pa, model.path));
  EXPECT_FALSE(InMappingOf(pe, weights));
  EXPECT_EQ(Values(ta), model.a);
  EXPECT_EQ(Values(te), model.ext_a);
}

TEST_F(ModelLoaderTest, LoadedTensorsKeepTheOldBytesWhenTheFilesAreRewrittenAtTheSameSize) {
  const int64_t elements = kLarge;
  const BorrowingModel model = WriteBorrowingModel(this, elements);
  StatusOr<LoadedModel> loaded = LoadModelFile(model.path, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  // Same sizes, other values: without the copy, the mapping would show the new bytes.
  std::string rewritten;
  {
    std::ifstream in(model.path, std::ios::binary);
    rewritten.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t at = PayloadOffset(rewritten, model.a);
  rewritten.replace(at, 4 * elements, Bytes(Ramp(elements, 500.0f)));
  Write("model.onnx", rewritten);
  Write("weights.bin", Bytes(Ramp(elements, 600.0f)) + Bytes(Ramp(elements, 700.0f)));
  EXPECT_EQ(Values(loaded->initializers.at(model.name_a)), model.a);
  EXPECT_EQ(Values(loaded->initializers.at(model.name_b)), model.b);
  EXPECT_EQ(Values(loaded->initializers.at("ext_a")), model.ext_a);
  EXPECT_EQ(Values(loaded->initializers.at("ext_b")), model.ext_b);
}

TEST_F(ModelLoaderTest, TiedExternalWeightsAreReadOnceIntoOneBlock) {
  // An embedding and its output projection over the same bytes, the projection with a
  // shape of its own: one block, viewed with each shape. A range at another offset, or of
  // another length, is read into a block of its own.
  const std::vector<float> tied = Ramp(kLarge, 8.0f);
  Write("weights.bin", Bytes(tied) + Bytes(Ramp(kLarge, 90.0f)));
  onnx::ModelProto m = Model();
  AddExternal(m, "embedding", kLarge, "weights.bin", 0);
  onnx::TensorProto* projection = AddExternal(m, "projection", kLarge, "weights.bin", 0);
  projection->clear_dims();
  projection->add_dims(2);
  projection->add_dims(kLarge / 2);
  AddExternal(m, "shorter", kLarge - 1, "weights.bin", 0);
  AddExternal(m, "elsewhere", kLarge, "weights.bin", 4);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Tensor& embedding = loaded->initializers.at("embedding");
  const Tensor& tied_projection = loaded->initializers.at("projection");
  EXPECT_EQ(tied_projection.raw_data(), embedding.raw_data());
  EXPECT_EQ(tied_projection.shape(), Shape({2, kLarge / 2}));
  EXPECT_EQ(Values(tied_projection), tied);
  EXPECT_EQ(Values(embedding), tied);
  EXPECT_NE(loaded->initializers.at("shorter").raw_data(), embedding.raw_data());
  EXPECT_NE(loaded->initializers.at("elsewhere").raw_data(), embedding.raw_data());
  EXPECT_EQ(Values(loaded->initializers.at("elsewhere"))[0], tied[1]);
}

TEST_F(ModelLoaderTest, ATiedExternalWeightReleasedLeavesTheOtherIntact) {
  // Two initializers over the same external bytes (a tied weight) share one block, so
  // releasing one (and emptying the file) leaves the other's values.
  const std::vector<float> tied = Ramp(kLarge, 8.0f);
  Write("weights.bin", Bytes(tied));
  onnx::ModelProto m = Model();
  AddExternal(m, "embedding", kLarge, "weights.bin", 0);
  AddExternal(m, "projection", kLarge, "weights.bin", 0);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Tensor kept = loaded->initializers.at("embedding"), released = loaded->initializers.at("projection");
  loaded->initializers.clear();
  Write("weights.bin", "");
  released = Tensor();
  EXPECT_EQ(Values(kept), tied);
}

// A session is being created (its kernels read and pack
// the weights) when the model is re-exported to the same path. The tensors read the bytes
// as they were when loaded: no SIGBUS past the files' new ends (a mapping of the files
// would raise it here), no new bytes read as old weights.
TEST_F(ModelLoaderTest, TensorsKeepTheirValuesWhenTheFilesAreTruncatedOrRewrittenWhileTheSessionIsCreated) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const int64_t elements = static_cast<int64_t>(64 * page / sizeof(float)) + 3;
  for (const bool truncated : {true, false}) {
    SCOPED_TRACE(truncated ? "truncated" : "rewritten at the same size");
    const BorrowingModel model = WriteBorrowingModel(this, elements);
    StatusOr<LoadedModel> loaded = LoadModelFile(model.path, {});
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    if (truncated) {
      Write("model.onnx", "");
      Write("weights.bin", "");
    } else {
      const auto size = static_cast<size_t>(std::ifstream(model.path, std::ios::binary | std::ios::ate).tellg());
      Write("model.onnx", std::string(size, '\x11'));
      Write("weights.bin", std::string(8 * static_cast<size_t>(elements), '\x22'));
    }
    EXPECT_EQ(Values(loaded->initializers.at(model.name_a)), model.a);
    EXPECT_EQ(Values(loaded->initializers.at(model.name_b)), model.b);
    EXPECT_EQ(Values(loaded->initializers.at("ext_a")), model.ext_a);
    EXPECT_EQ(Values(loaded->initializers.at("ext_b")), model.ext_b);
  }
}

TEST_F(ModelLoaderTest, BytesWithAnOwnerAreBorrowedInPlaceAndWithoutOneCopied) {
  // A name that puts the payload at a float-aligned offset: borrowed in place.
  std::string name = "a";
  std::vector<float> a = Ramp(kLarge, 4.0f);
  auto serialized = std::make_shared<std::string>();
  for (int tries = 0; tries < 4; ++tries, name += "a") {
    onnx::ModelProto m = Model();
    AddRaw(m, name, a);
    *serialized = m.SerializeAsString();
    if (PayloadOffset(*serialized, a) % 4 == 0) break;
  }
  const char* begin = serialized->data();
  const char* end = begin + serialized->size();
  {
    StatusOr<LoadedModel> borrowed = LoadModelBytes(*serialized, "", {}, serialized);
    ASSERT_TRUE(borrowed.ok()) << borrowed.status().ToString();
    const auto* p = static_cast<const char*>(borrowed->initializers.at(name).raw_data());
    EXPECT_TRUE(p >= begin && p < end) << "borrowed from the bytes";
    EXPECT_EQ(Values(borrowed->initializers.at(name)), a);
    EXPECT_EQ(serialized.use_count(), 2) << "the tensor holds the owner";
    EXPECT_FALSE(SkeletonInitializer(*borrowed, name).has_raw_data());
  }
  EXPECT_EQ(serialized.use_count(), 1);
  StatusOr<LoadedModel> copied = LoadModelBytes(*serialized, "", {});
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  const auto* p = static_cast<const char*>(copied->initializers.at(name).raw_data());
  EXPECT_FALSE(p >= begin && p < end);
  EXPECT_EQ(Values(copied->initializers.at(name)), a);
}

TEST_F(ModelLoaderTest, RepeatedGraphFieldsMergeAsWhenParsed) {
  // Two serialized models one after the other parse as one (protobuf merges the graph
  // fields; their initializers concatenate): the payloads cut out must follow that order.
  onnx::ModelProto first = Model(), second;
  const std::vector<float> a = Ramp(kLarge, 1.0f), s = Ramp(kSmall, 2.0f), c = Ramp(kLarge, 3.0f);
  AddRaw(first, "a", a);
  AddRaw(first, "s", s);
  AddRaw(second, "c", c);
  const std::string path = Write("merged.onnx", first.SerializeAsString() + second.SerializeAsString());
  StatusOr<LoadedModel> loaded = LoadModelFile(path, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(Values(loaded->initializers.at("a")), a);
  EXPECT_EQ(Values(loaded->initializers.at("c")), c);
  EXPECT_EQ(loaded->initializers.count("s"), 0u);
  onnx::ModelProto skeleton;
  ASSERT_TRUE(skeleton.ParseFromString(loaded->skeleton));
  ASSERT_EQ(skeleton.graph().initializer_size(), 3);
  EXPECT_EQ(skeleton.graph().initializer(1).raw_data(), Bytes(s));
  EXPECT_EQ(skeleton.graph().node_size(), 1);
}

struct BadModelCase {
  const char* name;
  // Changes a valid model (one large external initializer "w" in weights.bin) to a bad one.
  void (*spoil)(onnx::ModelProto& m, const std::string& dir);
  const char* message;  // a part of the error
};

class BadModelTest : public ModelLoaderTest, public ::testing::WithParamInterface<BadModelCase> {};

TEST_P(BadModelTest, IsAnInvalidArgumentNamingTheTensor) {
  Write("weights.bin", Bytes(Ramp(kLarge, 0.0f)));
  onnx::ModelProto m = Model();
  AddExternal(m, "w", kLarge, "weights.bin", 0);
  GetParam().spoil(m, dir_);
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument) << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find(GetParam().message), std::string::npos) << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find("model.onnx"), std::string::npos) << loaded.status().ToString();
}

void SetExternal(onnx::ModelProto& m, const std::string& key, const std::string& value) {
  for (auto& e : *m.mutable_graph()->mutable_initializer(0)->mutable_external_data()) {
    if (e.key() == key) e.set_value(value);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Loader, BadModelTest,
    ::testing::Values(
        BadModelCase{"ParentFolder",
                     [](onnx::ModelProto& m, const std::string&) { SetExternal(m, "location", "../weights.bin"); },
                     "initializer 'w' is stored in external file '../weights.bin', which does not exist inside"},
        BadModelCase{
            "AbsolutePath",
            [](onnx::ModelProto& m, const std::string& dir) { SetExternal(m, "location", dir + "/weights.bin"); },
            "does not exist inside the model's folder"},
        BadModelCase{"SymlinkOutOfTheFolder",
                     [](onnx::ModelProto& m, const std::string& dir) {
                       ASSERT_EQ(::symlink("/etc/hostname", (dir + "/link.bin").c_str()), 0);
                       SetExternal(m, "location", "link.bin");
                     },
                     "'link.bin', which does not exist inside"},
        BadModelCase{"MissingFile",
                     [](onnx::ModelProto& m, const std::string&) { SetExternal(m, "location", "absent.bin"); },
                     "'absent.bin', which does not exist inside"},
        BadModelCase{"PastTheEndOfTheFile",
                     [](onnx::ModelProto& m, const std::string&) { SetExternal(m, "offset", "8"); },
                     "initializer 'w' reads 160000 bytes at offset 8 of 'weights.bin', which has 160000 bytes"},
        BadModelCase{"LengthOfAnotherShape",
                     [](onnx::ModelProto& m, const std::string&) { SetExternal(m, "length", "12"); },
                     "initializer 'w' has external data of length 12, expected 160000"},
        BadModelCase{"OffsetNotANumber",
                     [](onnx::ModelProto& m, const std::string&) { SetExternal(m, "offset", "12abc"); },
                     "initializer 'w' has external data offset '12abc', not a non-negative integer"},
        BadModelCase{"NoLocation", [](onnx::ModelProto& m, const std::string&) { SetExternal(m, "location", ""); },
                     "initializer 'w' is stored externally but names no location"},
        BadModelCase{"RawDataOfAnotherSize",
                     [](onnx::ModelProto& m, const std::string&) {
                       onnx::TensorProto* t = m.mutable_graph()->mutable_initializer(0);
                       t->clear_external_data();
                       t->clear_data_location();
                       t->set_raw_data(std::string(100, '\0'));
                     },
                     "initializer 'w' (float[40000]) has 100 bytes of raw_data, expected 160000"},
        BadModelCase{"ShapeWhoseSizeOverflows",
                     [](onnx::ModelProto& m, const std::string&) {
                       onnx::TensorProto* t = m.mutable_graph()->mutable_initializer(0);
                       t->clear_dims();
                       for (int i = 0; i < 3; ++i) t->add_dims(int64_t{1} << 30);
                     },
                     "initializer 'w' of shape [1073741824,1073741824,1073741824] and type float has a size that "
                     "overflows"}),
    [](const ::testing::TestParamInfo<BadModelCase>& info) { return std::string(info.param.name); });

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Resolved(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  std::string result = resolved == nullptr ? "" : resolved;
  std::free(resolved);
  return result;
}

TEST_F(ModelLoaderTest, SourceFilesAreTheModelFileThenEachExternalFileWithTheFingerprintOfItsBytes) {
  onnx::ModelProto m = Model();
  AddExternal(m, "a", kLarge, "weights.bin", 0);
  AddExternal(m, "b", kSmall, "small.bin", 0);
  AddExternal(m, "c", kLarge, "weights.bin", 4 * kLarge);  // the same file again: listed once
  Write("weights.bin", Bytes(Ramp(kLarge, 1.0f)) + Bytes(Ramp(kLarge, 2.0f)));
  Write("small.bin", Bytes(Ramp(kSmall, 3.0f)));
  const std::string path = WriteModel(m);
  StatusOr<LoadedModel> loaded = LoadModelFile(path, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->source_files.size(), 3u);
  const std::vector<std::string> paths = {path, Resolved(dir_ + "/weights.bin"), Resolved(dir_ + "/small.bin")};
  for (size_t i = 0; i < paths.size(); ++i) {
    const SourceFile& f = loaded->source_files[i];
    const std::string bytes = FileBytes(paths[i]);
    struct stat st;
    ASSERT_EQ(::stat(paths[i].c_str(), &st), 0);
    EXPECT_EQ(f.path, paths[i]);
    EXPECT_EQ(f.size, bytes.size()) << paths[i];
    EXPECT_EQ(f.device, static_cast<uint64_t>(st.st_dev)) << paths[i];
    EXPECT_EQ(f.inode, static_cast<uint64_t>(st.st_ino)) << paths[i];
    EXPECT_EQ(f.mtime_ns, int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec) << paths[i];
    EXPECT_TRUE(f.hashed) << paths[i] << ": written just now";
    EXPECT_EQ(f.content_hash, ContentHash(bytes.data(), bytes.size())) << paths[i];
  }
}

TEST_F(ModelLoaderTest, OnlyFilesWrittenRecentlyAreHashedUnlessEveryFileIsAskedFor) {
  onnx::ModelProto m = Model();
  AddRaw(m, "a", Ramp(kLarge, 1.0f));
  AddExternal(m, "b", kLarge, "weights.bin", 0);
  Write("weights.bin", Bytes(Ramp(kLarge, 2.0f)));
  const std::string path = WriteModel(m);
  // Files written before the load began count as old with no margin: identity and times only.
  LoadOptions old_files;
  old_files.hash_files_newer_than_ns = 0;
  StatusOr<LoadedModel> described = LoadModelFile(path, old_files);
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  ASSERT_EQ(described->source_files.size(), 2u);
  LoadOptions every_file;
  every_file.hash_files_newer_than_ns = -1;
  StatusOr<LoadedModel> hashed = LoadModelFile(path, every_file);
  ASSERT_TRUE(hashed.ok()) << hashed.status().ToString();
  ASSERT_EQ(hashed->source_files.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(described->source_files[i].hashed);
    EXPECT_TRUE(hashed->source_files[i].hashed);
    const std::string bytes = FileBytes(hashed->source_files[i].path);
    EXPECT_EQ(hashed->source_files[i].content_hash, ContentHash(bytes.data(), bytes.size()));
    EXPECT_EQ(described->source_files[i].inode, hashed->source_files[i].inode);
    EXPECT_EQ(described->source_files[i].ctime_ns, hashed->source_files[i].ctime_ns);
  }
}

TEST_F(ModelLoaderTest, AFileRewrittenAtTheSameSizeWithOtherBytesGetsAnotherFingerprint) {
  onnx::ModelProto m = Model();
  AddRaw(m, "a", Ramp(kLarge, 1.0f));
  AddExternal(m, "b", kLarge, "weights.bin", 0);
  Write("weights.bin", Bytes(Ramp(kLarge, 2.0f)));
  const std::string path = WriteModel(m);
  StatusOr<LoadedModel> before = LoadModelFile(path, {});
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  std::vector<float> other = Ramp(kLarge, 2.0f);
  other[kLarge / 2] += 1.0f;  // one weight differs
  Write("weights.bin", Bytes(other));
  StatusOr<LoadedModel> after = LoadModelFile(path, {});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(before->source_files.size(), 2u);
  ASSERT_EQ(after->source_files.size(), 2u);
  EXPECT_EQ(after->source_files[0].content_hash, before->source_files[0].content_hash);  // the model file
  EXPECT_EQ(after->source_files[1].size, before->source_files[1].size);
  EXPECT_NE(after->source_files[1].content_hash, before->source_files[1].content_hash);
}

TEST_F(ModelLoaderTest, AnExternalFileLeftToPythonIsFingerprintedAndMustLieInsideTheFolder) {
  // A large int4 tensor: not borrowed (Python decodes sub-byte types), but its file is read
  // for the session all the same.
  onnx::ModelProto m = Model();
  AddExternal(m, "packed", kLarge, "int4.bin", 0)->set_data_type(onnx::TensorProto::INT4);
  m.mutable_graph()->mutable_initializer(0)->mutable_external_data(2)->set_value(std::to_string(kLarge / 2));
  Write("int4.bin", std::string(kLarge / 2, '\x5a'));
  StatusOr<LoadedModel> loaded = LoadModelFile(WriteModel(m), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->initializers.count("packed"), 0u);
  ASSERT_EQ(loaded->source_files.size(), 2u);
  EXPECT_EQ(loaded->source_files[1].path, Resolved(dir_ + "/int4.bin"));
  EXPECT_EQ(loaded->source_files[1].size, static_cast<uint64_t>(kLarge / 2));

  m.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value("../int4.bin");
  StatusOr<LoadedModel> outside = LoadModelFile(WriteModel(m), {});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("'../int4.bin', which does not exist inside"), std::string::npos)
      << outside.status().ToString();
}

TEST_F(ModelLoaderTest, BytesListOnlyTheExternalFilesTheyRead) {
  onnx::ModelProto m = Model();
  AddRaw(m, "a", Ramp(kLarge, 1.0f));
  EXPECT_TRUE(LoadModelBytes(m.SerializeAsString(), "", {})->source_files.empty());
  AddExternal(m, "b", kLarge, "weights.bin", 0);
  Write("weights.bin", Bytes(Ramp(kLarge, 2.0f)));
  StatusOr<LoadedModel> loaded = LoadModelBytes(m.SerializeAsString(), dir_, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->source_files.size(), 1u);
  EXPECT_EQ(loaded->source_files[0].path, Resolved(dir_ + "/weights.bin"));
}

TEST_F(ModelLoaderTest, AFileThatIsNotAModelIsRejected) {
  StatusOr<LoadedModel> garbage = LoadModelFile(Write("garbage.onnx", std::string("\xff\xff\xff\xff\x0f", 5)), {});
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("is not an ONNX model"), std::string::npos) << garbage.status().ToString();
  StatusOr<LoadedModel> missing = LoadModelFile(dir_ + "/absent.onnx", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("absent.onnx' cannot be opened"), std::string::npos)
      << missing.status().ToString();
  StatusOr<LoadedModel> folder = LoadModelFile(dir_, {});
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("is not a regular file"), std::string::npos) << folder.status().ToString();
}

}  // namespace
}  // namespace onnx_light
