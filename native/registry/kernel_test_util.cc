#include "native/registry/kernel_test_util.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace onnx_light {
namespace testing {

namespace {

// The first difference between two values, "" when they are identical: kinds, element
// types, shapes and bytes (strings by content), item by item in sequences and maps.
std::string Difference(const Value& a, const Value& b);

std::string TensorDifference(const Tensor& x, const Tensor& y) {
  if (x.dtype() != y.dtype()) return StrCat("element types ", DataTypeName(x.dtype()), " vs ", DataTypeName(y.dtype()));
  if (!(x.shape() == y.shape())) return StrCat("shapes ", x.shape().ToString(), " vs ", y.shape().ToString());
  if (x.dtype() == DataType::kString) {
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if (x.data<std::string>()[i] != y.data<std::string>()[i]) return StrCat("string element ", i, " differs");
    }
    return "";
  }
  return std::memcmp(x.raw_data(), y.raw_data(), x.byte_size()) == 0 ? "" : "outputs differ bitwise";
}

std::string Difference(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return "kinds differ";
  switch (a.kind()) {
    case Value::Kind::kNone:
      return "";
    case Value::Kind::kTensor:
      return TensorDifference(a.tensor(), b.tensor());
    case Value::Kind::kSequence:
      if (a.items().size() != b.items().size()) {
        return StrCat("sequence lengths ", a.items().size(), " vs ", b.items().size());
      }
      for (size_t i = 0; i < a.items().size(); ++i) {
        std::string d = Difference(a.items()[i], b.items()[i]);
        if (!d.empty()) return StrCat("item ", i, ": ", d);
      }
      return "";
    case Value::Kind::kMap: {
      std::string d = TensorDifference(a.map_keys(), b.map_keys());
      if (!d.empty()) return "map keys: " + d;
      d = TensorDifference(a.map_values(), b.map_values());
      return d.empty() ? "" : "map values: " + d;
    }
  }
  return "unknown value kind";
}

}  // namespace

void ExpectIdentical(const Value& a, const Value& b, const std::string& what) {
  const std::string difference = Difference(a, b);
  EXPECT_TRUE(difference.empty()) << what << ": " << difference;
}

namespace {

// What the forced-parallel mode did in this test binary, printed when it exits.
struct ForcedParallelTally {
  std::atomic<int64_t> compared{0};          // serial runs repeated with N participants
  std::atomic<int64_t> multi{0};             // ... whose repeat opened a region admitting > 1 participant
  std::atomic<int64_t> observed{0};          // ... where more than one participant ran blocks
  std::atomic<int64_t> not_reproducible{0};  // serial runs that differed from a second serial run
  ~ForcedParallelTally() {
    if (KernelTester::ForcedParallelParticipants() == 0) return;
    std::fprintf(stderr,
                 "forced parallel (%d participants): %lld serial kernel runs compared with the parallel run, "
                 "%lld of them opened a region admitting more than one participant (%lld with more than one "
                 "participant running blocks); %lld not reproducible serially\n",
                 KernelTester::ForcedParallelParticipants(), static_cast<long long>(compared.load()),
                 static_cast<long long>(multi.load()), static_cast<long long>(observed.load()),
                 static_cast<long long>(not_reproducible.load()));
  }
};
ForcedParallelTally& Tally() {
  static ForcedParallelTally tally;
  return tally;
}

bool SameOutputs(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Difference(a[i], b[i]).empty()) return false;
  }
  return true;
}

// Long enough for a parked worker to wake on a loaded machine (or under a sanitizer).
constexpr int64_t kForcedParallelJoinWaitMicroseconds = 100000;

}  // namespace

int KernelTester::ForcedParallelParticipants() {
  static const int participants = [] {
    const char* text = std::getenv("ONNX_LIGHT_TEST_FORCED_PARALLEL");
    const int n = text ? std::atoi(text) : 0;
    return n >= 2 ? n : 0;
  }();
  return participants;
}

KernelTester::KernelTester(std::string op, int opset_version, std::string domain)
    : runner_(std::move(op), opset_version, std::move(domain)) {
  if (ForcedParallelParticipants() > 0) {
    static const ForcedParallelTuning forced;
    runner_.Source(&forced);
    // The caller waits for its workers to join, so that every participant runs blocks even
    // in a region of a few microseconds.
    runner_.JoinWaitMicroseconds(kForcedParallelJoinWaitMicroseconds);
    forced_parallel_ = true;
    Tally();  // constructed before any tester finishes, so it is destroyed after them
  }
}

KernelTester& KernelTester::PortableDefaults() {
  runner_.Source(nullptr);
  runner_.JoinWaitMicroseconds(0);
  forced_parallel_ = false;
  return *this;
}

KernelTester& KernelTester::Input(Tensor tensor) {
  runner_.Input(std::move(tensor));
  return *this;
}
KernelTester& KernelTester::InputValue(Value value) {
  runner_.InputValue(std::move(value));
  return *this;
}
KernelTester& KernelTester::ConstantInput(Tensor tensor) {
  runner_.ConstantInput(std::move(tensor));
  return *this;
}
KernelTester& KernelTester::MissingInput() {
  runner_.MissingInput();
  return *this;
}
KernelTester& KernelTester::Outputs(int n) {
  runner_.Outputs(n);
  return *this;
}
KernelTester& KernelTester::NodeName(std::string name) {
  runner_.NodeName(std::move(name));
  return *this;
}
KernelTester& KernelTester::Tuning(const std::string& name, ParamValue value) {
  runner_.Tuning(name, std::move(value));
  return *this;
}

#define OL_ATTR(Arg)                                                     \
  KernelTester& KernelTester::Attr(const std::string& name, Arg value) { \
    runner_.Attr(name, std::move(value));                                \
    return *this;                                                        \
  }
OL_ATTR(int64_t)
OL_ATTR(float)
OL_ATTR(const std::string&)
OL_ATTR(std::vector<int64_t>)
OL_ATTR(std::vector<float>)
OL_ATTR(std::vector<std::string>)
OL_ATTR(Tensor)
#undef OL_ATTR

StatusOr<KernelRunResult> KernelTester::RunWithDetails(int num_threads, const CancellationToken* cancel) {
  OL_ASSIGN_OR_RETURN(KernelRunResult result, runner_.Run(num_threads, cancel));
  allocators_.push_back(result.allocator);
  if (forced_parallel_ && num_threads == 1 && cancel == nullptr) {
    // The forced-parallel mode: the serial result must come out of N participants too.
    auto again = runner_.Run(1);
    EXPECT_TRUE(again.ok()) << "forced parallel: a second serial run failed: " << again.status().ToString();
    if (!again.ok()) return result;
    if (!SameOutputs(result.outputs, again->outputs)) {
      ++Tally().not_reproducible;
      return result;
    }
    const int n = ForcedParallelParticipants();
    auto parallel = runner_.Run(n);
    EXPECT_TRUE(parallel.ok()) << "forced parallel: the run with " << n
                               << " participants failed where the serial run succeeded: "
                               << parallel.status().ToString();
    if (!parallel.ok()) return result;
    ++Tally().compared;
    bool admitted = false, observed = false;
    for (const RegionEvent& region : parallel->regions) {
      admitted |= region.admitted_participants > 1;
      observed |= region.observed_participants > 1;
    }
    if (admitted) ++Tally().multi;
    if (observed) ++Tally().observed;
    EXPECT_EQ(parallel->outputs.size(), result.outputs.size()) << "forced parallel: output count";
    for (size_t i = 0; i < result.outputs.size() && i < parallel->outputs.size(); ++i) {
      ExpectIdentical(
          result.outputs[i], parallel->outputs[i],
          "forced parallel: output " + std::to_string(i) + " with " + std::to_string(n) + " participants vs serial");
    }
  }
  return result;
}

StatusOr<std::vector<Value>> KernelTester::Run(int num_threads) {
  OL_ASSIGN_OR_RETURN(KernelRunResult r, RunWithDetails(num_threads));
  return std::move(r.outputs);
}

}  // namespace testing
}  // namespace onnx_light
