#include "native/session/session.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

constexpr char kTestDomain[] = "test.session";

ValueInfo FloatInfo(const std::string& name, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeDescription::Kind::kTensor;
  v.type.element_type = DataType::kFloat;
  v.has_shape = true;
  v.dims = std::move(dims);
  return v;
}

Node MakeNode(const std::string& op, const std::string& name, std::vector<std::string> inputs,
              std::vector<std::string> outputs) {
  Node n;
  n.op = op;
  n.domain = kTestDomain;
  n.name = name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

std::shared_ptr<Graph> NewGraph() {
  auto g = std::make_shared<Graph>();
  g->name = "g";
  g->opset_imports[kTestDomain] = 1;
  return g;
}

Tensor Floats(Shape shape, float value) {
  auto t = Tensor::Allocate(DataType::kFloat, std::move(shape), Allocator::Default());
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data<float>()[i] = value;
  return *t;
}

// x -> Add(x, x) -> Add(., x) -> ... : after k nodes every element is (k + 1) * x.
std::shared_ptr<Graph> AddChain(int length, int64_t n) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {n}));
  std::string previous = "x";
  for (int i = 0; i < length; ++i) {
    const std::string out = "t" + std::to_string(i);
    g->nodes.push_back(MakeNode("TestAdd", "add" + std::to_string(i), {previous, "x"}, {out}));
    previous = out;
  }
  g->outputs.push_back(FloatInfo(previous, {n}));
  return g;
}

std::unique_ptr<Session> MustCreate(std::shared_ptr<const Graph> graph, int threads = 1,
                                    std::shared_ptr<const TuningSource> tuning = nullptr) {
  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  auto s = Session::Create(std::move(graph), policy, std::move(tuning));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

TEST(SessionTest, RunsAChainSeriallyAndInParallelWithTheSameResult) {
  auto graph = AddChain(5, 100000);
  for (int threads : {1, 2, 4}) {
    auto session = MustCreate(graph, threads);
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(session->executor() == nullptr, threads == 1);
    auto out = session->Run({{"x", Value(Floats({100000}, 1.5f))}}, {});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), 1u);
    const Tensor& t = (*out)[0].tensor();
    ASSERT_EQ(t.shape(), Shape({100000}));
    for (int64_t i = 0; i < t.num_elements(); i += 9999) EXPECT_EQ(t.data<float>()[i], 9.0f);
  }
}

// A run wakes the session's workers parked since the last one (CpuExecutor::Prepare), so
// that its first region finds them awake: here the session's first run (which has no last
// run that opened no region), too small to open any region itself, leaves the worker
// awake, spinning its window (1 s, so that the test sees it), where it had parked. Polls
// without timing anything.
TEST(SessionTest, ARunWakesWorkersParkedSinceTheLastRun) {
  CpuExecutionPolicy policy;
  policy.num_threads = 2;
  policy.spin_microseconds = CpuExecutionPolicy::kMaxSpinMicroseconds;
  auto created = Session::Create(AddChain(1, 4), policy);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<Session> session = std::move(created).value();
  CpuExecutor* executor = session->executor();
  ASSERT_NE(executor, nullptr);
  const auto wait_until = [](const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  };
  ASSERT_TRUE(wait_until([&] { return executor->ParkedWorkers() == 1; }));
  EventCollector events;
  RunOptions options;
  options.events = &events;
  auto out = session->Run({{"x", Value(Floats({4}, 1.0f))}}, {}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().data<float>()[3], 2.0f);
  EXPECT_TRUE(events.regions().empty()) << "the run opened a region: the test needs one that does not";
  EXPECT_TRUE(wait_until([&] { return executor->ParkedWorkers() == 0; }));
}

// A session whose last run opened no region with workers (too small to split) does not
// wake them for the next run, where they would only spin; one whose last run did, does.
// Workers park at once here (spin window 0); PrepareWorkers says whether it woke any.
TEST(SessionTest, PreparesWorkersOnlyAfterARunThatOpenedARegion) {
  CpuExecutionPolicy policy;
  policy.num_threads = 2;
  policy.spin_microseconds = 0;
  const auto wait_parked = [](CpuExecutor* executor) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (executor->ParkedWorkers() != 1) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  };
  for (const int64_t elements : {int64_t{4}, int64_t{1} << 20}) {
    auto created = Session::Create(AddChain(1, elements), policy);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    std::unique_ptr<Session> session = std::move(created).value();
    EventCollector events;
    RunOptions options;
    options.events = &events;
    ASSERT_TRUE(session->Run({{"x", Value(Floats({elements}, 1.0f))}}, {}, options).ok());
    const bool opened = !events.regions().empty();
    EXPECT_EQ(opened, elements > 4) << elements << " elements: the test needs a run that opens no region and one "
                                    << "that does";
    ASSERT_TRUE(wait_parked(session->executor()));
    EXPECT_EQ(session->PrepareWorkers(), opened) << elements << " elements";
  }
}

TEST(SessionTest, OrdersNodesTopologically) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  g->nodes.push_back(MakeNode("TestAdd", "second", {"a", "a"}, {"y"}));
  g->nodes.push_back(MakeNode("TestAdd", "first", {"x", "x"}, {"a"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  auto session = MustCreate(g);
  auto out = session->Run({{"x", Value(Floats({2}, 1.0f))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().data<float>()[1], 4.0f);
}

TEST(SessionTest, RejectsACycleNamingANodeOnIt) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  g->nodes.push_back(MakeNode("TestAdd", "entry", {"x", "x"}, {"e"}));
  g->nodes.push_back(MakeNode("TestAdd", "loop_a", {"e", "b"}, {"a"}));
  g->nodes.push_back(MakeNode("TestAdd", "loop_b", {"a", "x"}, {"b"}));
  g->nodes.push_back(MakeNode("TestAdd", "after", {"b", "x"}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  auto s = Session::Create(g, CpuExecutionPolicy::Serial());
  ASSERT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("cycle"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("'loop_a'"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("'loop_b'"), std::string::npos) << s.status().message();
  EXPECT_EQ(s.status().message().find("'after'"), std::string::npos) << s.status().message();
}

TEST(SessionTest, RejectsADanglingInputNamingNodeAndInput) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  g->nodes.push_back(MakeNode("TestAdd", "adder", {"x", "nowhere"}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  auto s = Session::Create(g, CpuExecutionPolicy::Serial());
  ASSERT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("TestAdd node 'adder': input 'nowhere'"), std::string::npos)
      << s.status().message();
}

TEST(SessionTest, RejectsAnOpWithoutKernelNamingOpDomainAndOpset) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  g->nodes.push_back(MakeNode("NoSuchOp", "mystery", {"x"}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  auto s = Session::Create(g, CpuExecutionPolicy::Serial());
  ASSERT_EQ(s.status().code(), StatusCode::kNotImplemented);
  EXPECT_NE(s.status().message().find("NoSuchOp node 'mystery'"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("test.session"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("opset 1"), std::string::npos) << s.status().message();
}

TEST(SessionTest, RejectsAnElementTypeWithoutKernel) {
  auto g = NewGraph();
  ValueInfo x = FloatInfo("x", {2});
  x.type.element_type = DataType::kDouble;
  g->inputs.push_back(x);
  g->nodes.push_back(MakeNode("TestAdd", "adder", {"x", "x"}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  auto s = Session::Create(g, CpuExecutionPolicy::Serial());
  ASSERT_EQ(s.status().code(), StatusCode::kNotImplemented);
  EXPECT_NE(s.status().message().find("element type double"), std::string::npos) << s.status().message();
}

TEST(SessionTest, ValidatesFeeds) {
  auto session = MustCreate(AddChain(1, 3));
  const auto run = [&](std::vector<std::pair<std::string, Value>> feeds) { return session->Run(feeds, {}).status(); };
  Status missing = run({});
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("missing feed for input 'x'"), std::string::npos) << missing.message();

  Status extra = run({{"x", Value(Floats({3}, 1))}, {"z", Value(Floats({3}, 1))}});
  EXPECT_NE(extra.message().find("feed 'z' is not an input"), std::string::npos) << extra.message();

  auto doubles = Tensor::Allocate(DataType::kDouble, Shape({3}), Allocator::Default(), true);
  Status dtype = run({{"x", Value(*doubles)}});
  EXPECT_NE(dtype.message().find("input 'x': expected tensor(float)[3], got element type double"), std::string::npos)
      << dtype.message();

  Status rank = run({{"x", Value(Floats({3, 1}, 1))}});
  EXPECT_NE(rank.message().find("got rank 2"), std::string::npos) << rank.message();

  Status dim = run({{"x", Value(Floats({4}, 1))}});
  EXPECT_NE(dim.message().find("got dimension 0 = 4"), std::string::npos) << dim.message();

  Status output = session->Run({{"x", Value(Floats({3}, 1))}}, {"nope"}).status();
  EXPECT_NE(output.message().find("'nope' is not an output"), std::string::npos) << output.message();
}

TEST(SessionTest, WrapsKernelErrorsWithOpAndNode) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  g->nodes.push_back(MakeNode("TestFail", "breaker", {"x"}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  auto session = MustCreate(g);
  Status s = session->Run({{"x", Value(Floats({2}, 1))}}, {}).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "TestFail node 'breaker': TestFail always fails");
}

TEST(SessionTest, FreesIntermediatesAfterTheirLastUse) {
  constexpr int64_t kElements = 1 << 16;
  constexpr int64_t kBytes = kElements * 4;
  auto session = MustCreate(AddChain(20, kElements));
  auto out = session->Run({{"x", Value(Floats({kElements}, 1))}}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const AllocationStats stats = session->memory();
  EXPECT_EQ(stats.allocations, 20);
  // A chain needs the value being read and the one being written: never all twenty.
  EXPECT_LE(stats.peak_bytes, 2 * kBytes + 2 * Allocator::kAlignment);
  EXPECT_EQ(stats.current_bytes, kBytes) << "only the output is alive";
}

// Nodes allowed to work in place write over an input at its last use that nothing else
// holds: a chain reuses one buffer; a feed, a value read again later, and a graph output
// are never overwritten.
TEST(SessionTest, InPlaceKernelsReuseTheirLastUseInputs) {
  constexpr int64_t kElements = 1 << 10;
  auto chain = AddChain(20, kElements);
  for (Node& n : chain->nodes) n.op = "TestAddInPlace";
  auto session = MustCreate(chain);
  const Value feed(Floats({kElements}, 1));
  auto out = session->Run({{"x", feed}}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().data<float>()[7], 21.0f);
  EXPECT_EQ(feed.tensor().data<float>()[7], 1.0f) << "the feed is never overwritten";
  EXPECT_EQ(session->memory().allocations, 1) << "the first node allocates, the others work in place";

  // t0 = x + x; t1 = t0 + x (t0 read again below: no in place); y = t0 + t1 (in place over t0).
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {4}));
  g->nodes.push_back(MakeNode("TestAddInPlace", "a", {"x", "x"}, {"t0"}));
  g->nodes.push_back(MakeNode("TestAddInPlace", "b", {"t0", "x"}, {"t1"}));
  g->nodes.push_back(MakeNode("TestAddInPlace", "c", {"t0", "t1"}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {4}));
  g->outputs.push_back(FloatInfo("t1", {4}));
  auto mixed = MustCreate(g);
  auto both = mixed->Run({{"x", Value(Floats({4}, 2))}}, {});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ((*both)[0].tensor().data<float>()[0], 4.0f + 6.0f);
  EXPECT_EQ((*both)[1].tensor().data<float>()[0], 6.0f) << "t1 is a graph output: not overwritten";
  EXPECT_EQ(mixed->memory().allocations, 2) << "a and b allocate; c writes over t0";

  // A value read through two inputs of its last reader is not overwritten (a kernel making
  // several passes would read it again after writing).
  auto twice = NewGraph();
  twice->inputs.push_back(FloatInfo("x", {4}));
  twice->nodes.push_back(MakeNode("TestAddInPlace", "a", {"x", "x"}, {"t"}));
  twice->nodes.push_back(MakeNode("TestAddInPlace", "b", {"t", "t"}, {"y"}));
  twice->outputs.push_back(FloatInfo("y", {4}));
  auto session2 = MustCreate(twice);
  ASSERT_TRUE(session2->Run({{"x", Value(Floats({4}, 1))}}, {}).ok());
  EXPECT_EQ(session2->memory().allocations, 2);
}

TEST(SessionTest, OutputsOutliveTheSession) {
  std::vector<Value> outputs;
  {
    auto session = MustCreate(AddChain(2, 4));
    auto out = session->Run({{"x", Value(Floats({4}, 2))}}, {});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    outputs = std::move(out).value();
  }
  EXPECT_EQ(outputs[0].tensor().data<float>()[3], 6.0f);  // read (and later freed) after the session
}

// Outputs are the caller's alone (the Python binding hands them to numpy without a copy):
// a computed output is not copied, one that would alias a feed or an initializer is.
TEST(SessionTest, OutputsOwnTheirBuffersAlone) {
  auto computed = MustCreate(AddChain(2, 4));
  const Value feed(Floats({4}, 2));
  auto out = computed->Run({{"x", feed}}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)[0].tensor().OwnsBufferExclusively());
  EXPECT_FALSE((*out)[0].tensor().Overlaps(feed.tensor()));

  auto passthrough = NewGraph();  // graph output = graph input, and an initializer output
  passthrough->inputs.push_back(FloatInfo("x", {4}));
  passthrough->initializers["w"] = Floats({4}, 7);
  passthrough->outputs.push_back(FloatInfo("x", {4}));
  passthrough->outputs.push_back(FloatInfo("w", {4}));
  auto session = MustCreate(passthrough);
  auto both = session->Run({{"x", feed}}, {"x", "w", "x"});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  const Tensor& x0 = (*both)[0].tensor();
  const Tensor& w = (*both)[1].tensor();
  const Tensor& x1 = (*both)[2].tensor();
  for (const Tensor* t : {&x0, &w, &x1}) EXPECT_TRUE(t->OwnsBufferExclusively());
  EXPECT_FALSE(x0.Overlaps(feed.tensor()));
  EXPECT_FALSE(x0.Overlaps(x1));
  EXPECT_FALSE(w.Overlaps(passthrough->initializers["w"]));
  EXPECT_EQ(x1.data<float>()[3], 2.0f);
  EXPECT_EQ(w.data<float>()[0], 7.0f);
}

TEST(SessionTest, MemoryLimitFailsTheNodeThatWouldExceedIt) {
  constexpr int64_t kElements = 1 << 16;
  constexpr int64_t kBytes = kElements * 4;
  CpuExecutionPolicy serial;
  serial.num_threads = 1;
  SessionOptions options;
  options.memory_limit_bytes = kBytes + kBytes / 2;  // one value alive, not two
  auto session = Session::Create(AddChain(3, kElements), serial, nullptr, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->memory_limit_bytes(), kBytes + kBytes / 2);
  Status s = (*session)->Run({{"x", Value(Floats({kElements}, 1))}}, {}).status();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("'add1'"), std::string::npos) << s.message();  // add0's output is alive
  EXPECT_NE(s.message().find(std::to_string(kBytes) + " bytes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("float[65536]"), std::string::npos) << s.message();
  // The session stays usable: a smaller run fits.
  auto small = Session::Create(AddChain(3, 16), serial, nullptr, options);
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE((*small)->Run({{"x", Value(Floats({16}, 1))}}, {}).ok());
}

TEST(SessionTest, DefaultMemoryLimitIsThePhysicalMemory) {
  auto session = MustCreate(AddChain(1, 4));
  EXPECT_GT(PhysicalMemoryBytes(), 0);
  EXPECT_EQ(session->memory_limit_bytes(), PhysicalMemoryBytes());
  SessionOptions negative;
  negative.memory_limit_bytes = -1;
  auto s = Session::Create(AddChain(1, 4), CpuExecutionPolicy(), nullptr, negative);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("memory_limit_bytes"), std::string::npos) << s.status().message();
}

TEST(SessionTest, AKernelRunningOutOfHeapIsResourceExhaustedNamingTheNode) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  g->nodes.push_back(MakeNode("TestBadAlloc", "hog", {"x"}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  auto session = MustCreate(g);
  Status s = session->Run({{"x", Value(Floats({2}, 1))}}, {}).status();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("TestBadAlloc node 'hog'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("bad_alloc"), std::string::npos) << s.message();
}

// The runner re-targets one kernel context at node after node (KernelContext::Reset):
// each node sees exactly its own inputs and outputs, no copies recorded by the node
// before, and no value an earlier node left in an output it did not produce.
class SessionContextReuseTest : public ::testing::TestWithParam<int> {};

TEST_P(SessionContextReuseTest, EachNodeSeesOnlyItsOwnInputsOutputsAndAccounting) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  g->nodes.push_back(MakeNode("TestArity", "three_in", {"x", "x", "x"}, {"a", "a_unused"}));
  g->nodes.push_back(MakeNode("TestArity", "one_in", {"x"}, {"b"}));
  g->nodes.push_back(MakeNode("TestArity", "two_in", {"a", "b"}, {"c", "c_unset", "d_unset"}));
  g->outputs.push_back(FloatInfo("a", {3}));
  g->outputs.push_back(FloatInfo("b", {3}));
  g->outputs.push_back(FloatInfo("c", {3}));
  g->outputs.push_back(FloatInfo("d_unset", {3}));
  auto session = MustCreate(g, GetParam());
  for (int run = 0; run < 2; ++run) {
    EventCollector events;
    RunOptions options;
    options.events = &events;
    auto out = session->Run({{"x", Value(Floats({2}, 1))}}, {}, options);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto counts = [&](int i) {
      const float* v = (*out)[i].tensor().data<float>();
      return std::vector<float>{v[0], v[1], v[2]};
    };
    EXPECT_EQ(counts(0), (std::vector<float>{3, 2, 0}));
    EXPECT_EQ(counts(1), (std::vector<float>{1, 1, 0}));
    EXPECT_EQ(counts(2), (std::vector<float>{2, 3, 0}));
    EXPECT_TRUE((*out)[3].is_none()) << "an output its node left unset stays empty";
    ASSERT_EQ(events.nodes().size(), 3u);
    for (const NodeEvent& e : events.nodes()) EXPECT_EQ(e.copies, 5) << e.node;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, SessionContextReuseTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "_threads";
                         });

TEST(SessionTest, RecordsNodeEvents) {
  auto session = MustCreate(AddChain(3, 8));
  EventCollector events;
  RunOptions options;
  options.events = &events;
  ASSERT_TRUE(session->Run({{"x", Value(Floats({8}, 1))}}, {}, options).ok());
  ASSERT_EQ(events.nodes().size(), 3u);
  EXPECT_EQ(events.nodes()[1].op, "TestAdd");
  EXPECT_EQ(events.nodes()[1].node, "add1");
  EXPECT_EQ(events.nodes()[1].allocations, 1);
  EXPECT_EQ(events.nodes()[1].bytes_allocated, 32);
}

std::shared_ptr<Graph> SlowGraph() {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {1}));
  Node slow = MakeNode("TestSlow", "sleeper", {"x"}, {"y"});
  Attribute steps;
  steps.name = "steps";
  steps.type = Attribute::Type::kInt;
  steps.i = 50000;  // at least 50 s if nothing stops it
  slow.attributes["steps"] = steps;
  g->nodes.push_back(slow);
  g->outputs.push_back(FloatInfo("y", {1}));
  return g;
}

TEST(SessionTest, TerminateFromAnotherThreadCancelsARunningRun) {
  for (int threads : {1, 2}) {
    auto session = MustCreate(SlowGraph(), threads);
    CancellationToken token;
    RunOptions options;
    options.cancellation = &token;
    std::thread terminator([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      token.Cancel();
    });
    Status s = session->Run({{"x", Value(Floats({1}, 1))}}, {}, options).status();
    terminator.join();
    EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
    EXPECT_NE(s.message().find("terminated"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("'sleeper'"), std::string::npos) << s.message();
  }
}

TEST(SessionTest, TimeoutCancelsARun) {
  auto session = MustCreate(SlowGraph(), 2);
  CancellationToken token;
  token.SetDeadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(30));
  RunOptions options;
  options.cancellation = &token;
  Status s = session->Run({{"x", Value(Floats({1}, 1))}}, {}, options).status();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_NE(s.message().find("timeout"), std::string::npos) << s.message();
}

class FixedTuning : public TuningSource {
 public:
  ResolvedTuning Resolve(std::shared_ptr<const KernelTuningSchema> schema) const override {
    ResolvedTuning r = ResolvedTuning::Defaults(schema);
    EXPECT_TRUE(r.Set(param::kMinimumElements, int64_t{7}, ValueSource::kExactMachine).ok());
    return r;
  }
};

TEST(SessionTest, ReportsWhereEachTuningValueCameFrom) {
  // add1 reads t0, whose type is unknown until run time: its kernel is created by the run.
  auto defaults = MustCreate(AddChain(2, 4));
  EXPECT_EQ(defaults->TuningReport().size(), 1u);
  ASSERT_TRUE(defaults->Run({{"x", Value(Floats({4}, 1))}}, {}).ok());
  auto report = defaults->TuningReport();
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].node, "TestAdd node 'add0'");
  EXPECT_EQ(report[0].parameter, param::kMinimumElements);
  EXPECT_EQ(report[0].value, "65536");
  EXPECT_EQ(report[0].source, ValueSource::kPortableDefault);

  auto tuned = MustCreate(AddChain(2, 4), 1, std::make_shared<FixedTuning>());
  ASSERT_TRUE(tuned->Run({{"x", Value(Floats({4}, 1))}}, {}).ok());
  report = tuned->TuningReport();
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[1].value, "7");
  EXPECT_EQ(report[1].source, ValueSource::kExactMachine);
}

// A kernel sees an initializer at creation, but neither a feed nor an initializer that is
// also a graph input (its default a feed may replace).
TEST(SessionTest, OffersConstantInitializersToKernelsAtCreation) {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {1}));
  g->inputs.push_back(FloatInfo("overridable", {1}));
  g->initializers["w"] = Floats({1}, 5.0f);
  g->initializers["overridable"] = Floats({1}, 7.0f);
  g->nodes.push_back(MakeNode("TestConstants", "probe", {"x", "w", "overridable", ""}, {"y"}));
  g->outputs.push_back(FloatInfo("y", {4}));
  auto session = MustCreate(g);
  ASSERT_NE(session, nullptr);
  auto out = session->Run({{"x", Value(Floats({1}, 1.0f))}}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float* seen = (*out)[0].tensor().data<float>();
  EXPECT_EQ(seen[0], -1.0f);  // feed
  EXPECT_EQ(seen[1], 5.0f);   // initializer
  EXPECT_EQ(seen[2], -1.0f);  // initializer that is also a graph input
  EXPECT_EQ(seen[3], -1.0f);  // absent optional input
}

// A float tensor whose buffer reports when it is freed (through `alive`).
Tensor Watched(Shape shape, float value, std::weak_ptr<void>* alive) {
  auto buffer = std::make_shared<std::vector<float>>(static_cast<size_t>(shape.num_elements()), value);
  *alive = buffer;
  return Tensor::Borrow(DataType::kFloat, std::move(shape), buffer->data(), buffer);
}

// x -> TestAbsorb(x, w) twice: w's two consumers both absorb it.
std::shared_ptr<Graph> TwoAbsorbers() {
  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {3}));
  g->nodes.push_back(MakeNode("TestAbsorb", "a1", {"x", "w"}, {"y1"}));
  g->nodes.push_back(MakeNode("TestAbsorb", "a2", {"w", "x"}, {"y2"}));
  g->outputs.push_back(FloatInfo("y1", {2}));
  g->outputs.push_back(FloatInfo("y2", {2}));
  return g;
}

void ExpectFloats(const Value& v, const std::vector<float>& want) {
  ASSERT_TRUE(v.is_tensor());
  ASSERT_EQ(v.tensor().num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(v.tensor().data<float>()[i], want[i]) << "element " << i;
}

TEST(SessionTest, ReleasesAConstantEveryConsumerAbsorbedAndStillGivesItsOutputs) {
  auto g = TwoAbsorbers();
  std::weak_ptr<void> w_alive;
  g->initializers["w"] = Watched({1000}, 0.5f, &w_alive);  // sum 500
  auto session = MustCreate(g);
  ASSERT_NE(session, nullptr);
  const ConstantMemory m = session->constant_memory();
  EXPECT_EQ(m.released_initializers, 1);
  EXPECT_EQ(m.released_bytes, 4000);
  EXPECT_EQ(m.retained_bytes, 0);
  EXPECT_EQ(m.absorbed_held_bytes, 2 * static_cast<int64_t>(sizeof(float)));
  EXPECT_FALSE(w_alive.expired());  // the caller's graph still holds w, untouched
  EXPECT_EQ(g->initializers.at("w").data<float>()[999], 0.5f);
  for (int run = 0; run < 2; ++run) {
    auto out = session->Run({{"x", Value(Floats({3}, 2.0f))}}, {});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectFloats((*out)[0], {6.0f, 500.0f});
    ExpectFloats((*out)[1], {500.0f, 6.0f});
  }
}

TEST(SessionTest, AGraphGivenOverFreesAReleasedConstantDuringCreation) {
  std::weak_ptr<void> w_alive;
  Graph graph = *TwoAbsorbers();
  graph.initializers["w"] = Watched({1000}, 0.5f, &w_alive);
  auto session = Session::Create(std::move(graph), CpuExecutionPolicy::Serial());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE(w_alive.expired());
  auto out = (*session)->Run({{"x", Value(Floats({3}, 1.0f))}}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectFloats((*out)[0], {3.0f, 500.0f});
}

// The last consumer of a constant the session alone holds consumes it (its pages released
// while it is absorbed); the first of two does not, and the outputs are the same.
TEST(SessionTest, TheLastConsumerOfAConstantOnlyTheSessionHoldsConsumesIt) {
  Graph graph = *TwoAbsorbers();
  graph.initializers["w"] = Floats({1 << 16}, 0.5f);  // 256 KiB: whole pages, sum 32768
  auto session = Session::Create(std::move(graph), CpuExecutionPolicy::Serial());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const ConstantMemory m = (*session)->constant_memory();
  EXPECT_EQ(m.released_initializers, 1);
  EXPECT_EQ(m.consumed_initializers, 1);
  auto out = (*session)->Run({{"x", Value(Floats({3}, 1.0f))}}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectFloats((*out)[0], {3.0f, 32768.0f});
  ExpectFloats((*out)[1], {32768.0f, 3.0f});
}

// Each case lets someone outside the session read `w` after creation: nothing consumes it,
// and that reader still sees every element.
TEST(SessionTest, NoKernelConsumesAConstantSomeoneElseHolds) {
  struct Case {
    const char* what;
    std::function<StatusOr<std::unique_ptr<Session>>(std::shared_ptr<Graph>, Tensor*)> create;
  };
  const Case cases[] = {
      {"the caller's graph (shared)",
       [](std::shared_ptr<Graph> g, Tensor* kept) {
         *kept = g->initializers.at("w");
         return Session::Create(std::shared_ptr<const Graph>(g), CpuExecutionPolicy::Serial());
       }},
      {"a copy of the tensor, the graph given over",
       [](std::shared_ptr<Graph> g, Tensor* kept) {
         *kept = g->initializers.at("w");
         return Session::Create(std::move(*g), CpuExecutionPolicy::Serial());
       }},
      {"a reshaped view of the tensor, the graph given over",
       [](std::shared_ptr<Graph> g, Tensor* kept) {
         *kept = *g->initializers.at("w").Reshaped(Shape({2, 1 << 15}));
         return Session::Create(std::move(*g), CpuExecutionPolicy::Serial());
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto g = TwoAbsorbers();
    g->initializers["w"] = Floats({1 << 16}, 0.5f);
    Tensor kept;
    auto session = c.create(g, &kept);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    EXPECT_EQ((*session)->constant_memory().consumed_initializers, 0);
    EXPECT_EQ((*session)->constant_memory().released_initializers, 1);
    const float* w = kept.data<float>();
    int64_t intact = 0;
    for (int64_t i = 0; i < kept.num_elements(); ++i) intact += w[i] == 0.5f ? 1 : 0;
    EXPECT_EQ(intact, int64_t{1} << 16);
    auto out = (*session)->Run({{"x", Value(Floats({3}, 1.0f))}}, {});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectFloats((*out)[0], {3.0f, 32768.0f});
  }
}

// Each case reads the absorbed constant `w` somewhere else too: the session keeps it.
TEST(SessionTest, KeepsAnAbsorbedConstantThatSomethingElseReads) {
  struct Case {
    const char* what;
    std::function<void(Graph&)> add_reader;
    std::vector<float> want_y1;
  };
  const Case cases[] = {
      {"a consumer that does not absorb it",
       [](Graph& g) {
         g.nodes.push_back(MakeNode("TestAdd", "adds", {"w3", "x"}, {"unused"}));
       },
       {6.0f, 3.0f}},
      {"a graph output", [](Graph& g) { g.outputs.push_back(FloatInfo("w3", {3})); }, {6.0f, 3.0f}},
      {"a subgraph",
       [](Graph& g) {
         auto body = std::make_shared<Graph>();
         body->name = "body";
         body->inputs.push_back(FloatInfo("b", {3}));
         body->nodes.push_back(MakeNode("TestAdd", "inner", {"b", "w3"}, {"r"}));
         body->outputs.push_back(FloatInfo("r", {3}));
         Node call = MakeNode("TestCall", "call", {"x"}, {"called"});
         Attribute attr;
         attr.name = "body";
         attr.type = Attribute::Type::kGraph;
         attr.g = body;
         call.attributes["body"] = attr;
         g.nodes.push_back(call);
       },
       {6.0f, 3.0f}},
      {"a node whose kernel is created at run time (input type unknown at creation)",
       [](Graph& g) {
         ValueInfo untyped;
         untyped.name = "u";
         g.inputs.push_back(untyped);
         g.nodes.push_back(MakeNode("TestAbsorb", "lazy", {"u", "w3"}, {"lazy_out"}));
         g.outputs.push_back(FloatInfo("lazy_out", {2}));
       },
       {6.0f, 3.0f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto g = NewGraph();
    g->inputs.push_back(FloatInfo("x", {3}));
    g->initializers["w3"] = Floats({3}, 1.0f);
    g->nodes.push_back(MakeNode("TestAbsorb", "a1", {"x", "w3"}, {"y1"}));
    g->outputs.push_back(FloatInfo("y1", {2}));
    c.add_reader(*g);
    Graph given = *g;
    given.initializers["w3"] = Floats({3}, 1.0f);  // held by the session alone
    auto session = Session::Create(std::move(given), CpuExecutionPolicy::Serial());
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    const ConstantMemory m = (*session)->constant_memory();
    EXPECT_EQ(m.released_initializers, 0);
    EXPECT_EQ(m.consumed_initializers, 0);
    EXPECT_EQ(m.retained_bytes, 12);
    std::vector<std::pair<std::string, Value>> feeds = {{"x", Value(Floats({3}, 2.0f))}};
    if (g->inputs.size() > 1) feeds.emplace_back("u", Value(Floats({3}, 1.0f)));
    auto out = (*session)->Run(feeds, {"y1"});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectFloats((*out)[0], c.want_y1);
  }
}

// body(b) = b + outer, where `outer` is computed in the main graph before the call.
TEST(SessionTest, SubgraphsReadOuterScopeValues) {
  auto body = std::make_shared<Graph>();
  body->name = "body";
  body->inputs.push_back(FloatInfo("b", {2}));
  body->nodes.push_back(MakeNode("TestAdd", "inner", {"b", "outer"}, {"r"}));
  body->outputs.push_back(FloatInfo("r", {2}));

  auto g = NewGraph();
  g->inputs.push_back(FloatInfo("x", {2}));
  Node call = MakeNode("TestCall", "call", {"x"}, {"y"});
  Attribute attr;
  attr.name = "body";
  attr.type = Attribute::Type::kGraph;
  attr.g = body;
  call.attributes["body"] = attr;
  g->nodes.push_back(call);  // listed before the producer of `outer`: must still run after it
  g->nodes.push_back(MakeNode("TestAdd", "make_outer", {"x", "x"}, {"outer"}));
  g->outputs.push_back(FloatInfo("y", {2}));
  for (int threads : {1, 2}) {
    auto session = MustCreate(g, threads);
    auto out = session->Run({{"x", Value(Floats({2}, 3))}}, {});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].tensor().data<float>()[0], 9.0f);
  }
}

TEST(SessionTest, RejectsASubgraphReadingAnUnknownName) {
  auto body = std::make_shared<Graph>();
  body->name = "body";
  body->nodes.push_back(MakeNode("TestAdd", "inner", {"ghost", "ghost"}, {"r"}));
  body->outputs.push_back(FloatInfo("r", {2}));
  auto g = NewGraph();
  Node call = MakeNode("TestCall", "call", {}, {"y"});
  Attribute attr;
  attr.type = Attribute::Type::kGraph;
  attr.g = body;
  call.attributes["body"] = attr;
  g->nodes.push_back(call);
  g->outputs.push_back(FloatInfo("y", {2}));
  auto s = Session::Create(g, CpuExecutionPolicy::Serial());
  ASSERT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("TestCall node 'call': a subgraph reads 'ghost'"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace onnx_light
