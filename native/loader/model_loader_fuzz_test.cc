// A bounded, deterministic fuzz pass over the loader's malformed-input paths: a small model
// (inline weights above and below the size bounds, an external tensor, a subgraph-free
// node list) serialized, then mutated a fixed number of times from fixed seeds (bytes
// flipped, overwritten with varint extremes, inserted, deleted, the file cut short) and
// loaded from a path, from bytes borrowed with an owner and from bytes copied. Each load
// must end in a model or in InvalidArgument (ResourceExhausted for an allocation the
// mutated shape asks for) naming where it failed: never a crash (ASan/UBSan builds check
// memory), never another status. A loaded model's tensors are read whole (every byte).
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/loader/model_loader.h"
#include "native/loader/onnx-ml.pb.h"

namespace onnx_light {
namespace {

std::string SeedModel(std::string* weights) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.add_opset_import()->set_version(21);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  for (const char* name : {"a", "b", "c"}) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Add");
    n->add_input(name);
    n->add_input("x");
    n->add_output(std::string(name) + "_y");
  }
  const auto add = [&](const std::string& name, int64_t elements, int type, int64_t element_bytes) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(elements);
    std::string raw(static_cast<size_t>(elements * element_bytes), '\0');
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 131 + 7);
    t->set_raw_data(raw);
    return t;
  };
  add("a", 20000, onnx::TensorProto::FLOAT, 4);  // large: read into its own block
  add("b", 20000, onnx::TensorProto::INT64, 8);  // large, 8-byte elements
  add("c", 8, onnx::TensorProto::FLOAT, 4);      // small: stays in the skeleton
  onnx::TensorProto* e = g->add_initializer();   // external
  e->set_name("e");
  e->set_data_type(onnx::TensorProto::FLOAT);
  e->add_dims(20000);
  e->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"location", "weights.bin"}, {"offset", "0"}, {"length", "80000"}}) {
    onnx::StringStringEntryProto* entry = e->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  weights->assign(80000, '\x3f');
  return m.SerializeAsString();
}

std::string Mutate(const std::string& seed, std::mt19937_64& rng) {
  std::string s = seed;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    // Mostly near the start, where the headers are (the payloads are most of the bytes).
    const size_t at = rng() % 2 == 0 ? rng() % std::min<size_t>(s.size(), 256) : rng() % s.size();
    switch (rng() % 6) {
      case 0:  // flip a byte
        s[at] = static_cast<char>(s[at] ^ static_cast<char>(1 + rng() % 255));
        break;
      case 1: {  // a varint extreme
        static const std::vector<std::string> kExtremes = {
            std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10), std::string("\x80\x80\x80\x80\x10", 5),
            std::string("\xff\xff\xff\xff\x07", 5), std::string(1, '\0')};
        const std::string& v = kExtremes[rng() % kExtremes.size()];
        s.replace(at, std::min(v.size(), s.size() - at), v);
        break;
      }
      case 2:  // insert bytes
        s.insert(at, std::string(1 + rng() % 8, static_cast<char>(rng())));
        break;
      case 3:  // delete bytes
        s.erase(at, 1 + rng() % 8);
        break;
      case 4:  // cut short
        s.resize(at);
        break;
      default:  // a tag byte for another field number or wire type
        s[at] = static_cast<char>(rng() % 128);
        break;
    }
  }
  return s;
}

void ExpectModelOrClearError(const StatusOr<LoadedModel>& loaded, const std::string& names, const std::string& what) {
  if (loaded.ok()) {
    for (const auto& [name, tensor] : loaded->initializers) {
      const auto* bytes = static_cast<const unsigned char*>(tensor.raw_data());
      unsigned sum = 0;
      for (size_t i = 0; i < tensor.byte_size(); ++i) sum += bytes[i];  // every byte readable
      (void)sum;
    }
    return;
  }
  const Status& s = loaded.status();
  EXPECT_TRUE(s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kResourceExhausted)
      << what << ": " << s.ToString();
  EXPECT_NE(s.message().find(names), std::string::npos)
      << what << ": the error names " << names << ": " << s.ToString();
}

TEST(ModelLoaderFuzzTest, MutatedModelsLoadOrFailWithAClearError) {
  char pattern[] = "/tmp/model_loader_fuzz_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::string weights;
  const std::string seed = SeedModel(&weights);
  std::ofstream(dir + "/weights.bin", std::ios::binary) << weights;
  std::mt19937_64 rng(105);
  int loaded_ok = 0, failed = 0;
  for (int i = 0; i < 1500; ++i) {
    const std::string bytes = Mutate(seed, rng);
    const std::string path = dir + "/model.onnx";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    const std::string what = "mutation " + std::to_string(i);
    StatusOr<LoadedModel> from_path = LoadModelFile(path, {});
    ExpectModelOrClearError(from_path, "model '" + path + "'", what + " (path)");
    (from_path.ok() ? loaded_ok : failed)++;
    auto owned = std::make_shared<const std::string>(bytes);
    ExpectModelOrClearError(LoadModelBytes(*owned, dir, {}, owned), "bytes", what + " (bytes borrowed)");
    ExpectModelOrClearError(LoadModelBytes(bytes, dir, {}), "bytes", what + " (bytes copied)");
  }
  // Both outcomes occur: the mutations are neither all harmless nor all fatal.
  EXPECT_GT(loaded_ok, 50);
  EXPECT_GT(failed, 50);
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace onnx_light
